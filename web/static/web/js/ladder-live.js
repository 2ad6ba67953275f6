// Keeps the ladder page's sets in play, recent sets and ranking current as sets end. The
// transport is patch.js's `followLive` (the ladder is a league: its stream is the league's);
// the part is patched in place, so focus and scroll position stay where the reader left them.
// Nothing is announced: a ladder never ends and changes all the time, and a screen reader
// hearing every set would hear nothing else.

import { followLive, patchHtml } from "./patch.js";
import { markScrollableRegions } from "./site.js";

const box = document.getElementById("ladder-live");
if (box && box.dataset.live === "on") {
  followLive(box, {
    apply: (element, html) => {
      patchHtml(element, html);
      markScrollableRegions(element);
    },
  });
}
