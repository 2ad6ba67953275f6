// My bots: follow each protocol check the owner queued (web/bot_checks.py) until it is done.
// The status line is a polite live region: its words change, focus never moves.

const POLL_MS = 1000;
const GIVE_UP_MS = 5 * 60 * 1000;
const UNDER_WAY = new Set(["queued", "running"]);

async function follow(line) {
  const started = Date.now();
  while (Date.now() - started < GIVE_UP_MS) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    let progress;
    try {
      const response = await fetch(line.dataset.checkStatus, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (!response.ok) continue;
      progress = await response.json();
    } catch {
      continue;
    }
    if (progress.state === line.dataset.checkState && progress.message === line.textContent.trim()) {
      continue;
    }
    line.dataset.checkState = progress.state;
    line.textContent = progress.message;
    if (!UNDER_WAY.has(progress.state)) {
      if (progress.state === "done") {
        const link = document.createElement("a");
        link.href = line.dataset.reportUrl;
        link.textContent = "Show the report";
        line.append(" ", link);
      }
      return;
    }
  }
}

for (const line of document.querySelectorAll("[data-check-status]")) {
  if (UNDER_WAY.has(line.dataset.checkState)) follow(line);
}
