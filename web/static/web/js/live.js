// Keeps the league page's progress, standings, games, crosstable and faults current while games
// finish. `applyLeagueUpdate` takes the new HTML of the live part and patches it in place
// (patch.js), then says what changed in the page's polite live region; it does not know how the
// HTML arrived. The transport below polls the server-rendered fragment every two seconds.

import { patchHtml } from "./patch.js";
import { markScrollableRegions } from "./site.js";

const POLL_MS = 2000;
// A screen reader hears progress at most this often; the end of the league at once.
const ANNOUNCE_EVERY_MS = 15000;
const OVER = ["finished", "cancelled"];

function readState(box) {
  const bar = box.querySelector("[role=progressbar]");
  const status = box.querySelector("[data-part=status]");
  return {
    done: bar ? Number(bar.dataset.done) : 0,
    total: bar ? Number(bar.dataset.total) : 0,
    status: status ? status.textContent.trim() : "",
  };
}

let lastAnnounced = 0;

function announce(region, before, after) {
  if (!region) return;
  const now = Date.now();
  let text = "";
  if (after.status !== before.status) {
    text = `The league is ${after.status}: ${after.done} of ${after.total} games played.`;
  } else if (after.done !== before.done && now - lastAnnounced >= ANNOUNCE_EVERY_MS) {
    text = `${after.done} of ${after.total} games played.`;
  }
  if (text) {
    region.textContent = text;
    lastAnnounced = now;
  }
}

/** Bring `box` up to date with `html` in place; returns the league's state after it. */
export function applyLeagueUpdate(box, html, region = document.getElementById("league-announce")) {
  const before = readState(box);
  patchHtml(box, html);
  markScrollableRegions(box);
  const after = readState(box);
  announce(region, before, after);
  window.escobaLive.updates += 1;
  return after;
}

/** The polling transport: fetch the fragment, apply it, again until the league is over. */
function poll(box) {
  const again = () => setTimeout(() => poll(box), POLL_MS);
  fetch(box.dataset.liveUrl, { headers: { Accept: "text/html" } })
    .then((response) => (response.ok ? response.text() : null))
    .then((html) => {
      const state = html === null ? readState(box) : applyLeagueUpdate(box, html);
      if (!OVER.includes(state.status)) again();
    })
    // A missed poll is harmless: the next one catches up.
    .catch(again);
}

window.escobaLive = { updates: 0, applyLeagueUpdate };
const box = document.getElementById("league-live");
if (box && box.dataset.live === "on") setTimeout(() => poll(box), POLL_MS);
