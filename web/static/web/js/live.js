// Keeps the league page's progress, standings and recent games current while games finish.
// Plain polling of a server-rendered fragment: no framework, and nothing to do once it is over.

const POLL_MS = 2000;
const box = document.getElementById("league-live");

async function refresh() {
  try {
    const response = await fetch(box.dataset.liveUrl, { headers: { Accept: "text/html" } });
    if (response.ok) {
      box.innerHTML = await response.text();
    }
  } catch (error) {
    // A missed poll is harmless: the next one catches up.
  }
  const status = box.querySelector("[data-part=status]");
  const done = status && ["finished", "cancelled"].includes(status.textContent.trim());
  if (!done) setTimeout(refresh, POLL_MS);
}

if (box && box.dataset.live === "on") setTimeout(refresh, POLL_MS);
