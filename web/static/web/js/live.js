// Keeps the league page's progress, standings, games, crosstable and faults current while games
// finish. `applyLeagueUpdate` takes the new HTML of the live part and patches it in place
// (patch.js), then says what changed in the page's polite live region; it does not know how the
// HTML arrived. The transport is patch.js's `followLive`: the server's event stream says when the
// league changed (web/page_streams.py), and only then is the fragment fetched again.

import { followLive, patchHtml } from "./patch.js";
import { markScrollableRegions } from "./site.js";

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

window.escobaLive = { updates: 0, applyLeagueUpdate };
const box = document.getElementById("league-live");
if (box && box.dataset.live === "on") {
  followLive(box, {
    apply: (element, html) => applyLeagueUpdate(element, html),
    isOver: (element) => OVER.includes(readState(element).status),
  });
}
