// Brings a part of the page up to date with new server-rendered HTML without replacing it.
//
// Only what changed is touched: text, attributes, and the elements that came or went. An element
// that stays is the same DOM node afterwards, so keyboard focus, a screen reader's reading place
// and the scroll position inside it survive every update (WCAG 2.4.3). `patchHtml` knows nothing
// about how the HTML arrived; `followLive` (at the end) is the live transport pages plug into.
//
// Matching: children with a `data-key` (or an `id`) are matched by it wherever they moved;
// others in order: each takes the next unkeyed old child of the same tag (or text), and the old
// ones it skips over are removed. An element may list attributes
// that scripts on the page own in `data-client-attrs` (space separated): the update leaves those.

function keyOf(node) {
  return node.nodeType === Node.ELEMENT_NODE ? node.getAttribute("data-key") || node.id || null : null;
}

function sameKind(a, b) {
  return a.nodeType === b.nodeType && a.nodeName === b.nodeName && keyOf(a) === keyOf(b);
}

function patchAttributes(from, to) {
  const owned = new Set((from.getAttribute("data-client-attrs") || "").split(" ").filter(Boolean));
  owned.add("data-client-attrs");
  for (const { name } of [...from.attributes]) {
    if (!to.hasAttribute(name) && !owned.has(name)) from.removeAttribute(name);
  }
  for (const { name, value } of to.attributes) {
    if (from.getAttribute(name) !== value) from.setAttribute(name, value);
  }
}

function patchNode(from, to) {
  if (from.nodeType === Node.ELEMENT_NODE) {
    patchAttributes(from, to);
    patchChildren(from, to);
  } else if (from.nodeValue !== to.nodeValue) {
    from.nodeValue = to.nodeValue;
  }
}

/** Make `from`'s children equal to `to`'s (a node or fragment), keeping every node that stays. */
export function patchChildren(from, to) {
  const old = [...from.childNodes];
  const byKey = new Map();
  for (const node of old) {
    const key = keyOf(node);
    if (key && !byKey.has(key)) byKey.set(key, node);
  }
  const unkeyed = old.filter((node) => !keyOf(node));
  const used = new Set();
  let next = 0;
  const wanted = [];
  for (const child of [...to.childNodes]) {
    let match = null;
    const key = keyOf(child);
    if (key) {
      const candidate = byKey.get(key);
      if (candidate && !used.has(candidate) && sameKind(candidate, child)) match = candidate;
    } else {
      // The next unkeyed node of the same kind; those skipped over have gone.
      let at = next;
      while (at < unkeyed.length && !sameKind(unkeyed[at], child)) at += 1;
      if (at < unkeyed.length) {
        match = unkeyed[at];
        next = at + 1;
      }
    }
    if (match) {
      used.add(match);
      patchNode(match, child);
      wanted.push(match);
    } else {
      wanted.push(child);
    }
  }
  for (const node of old) if (!used.has(node)) node.remove();
  // Insert and reorder: a node already in its place is never moved.
  let place = from.firstChild;
  for (const node of wanted) {
    if (node === place) {
      place = place.nextSibling;
    } else {
      from.insertBefore(node, place);
    }
  }
}

/**
 * Apply `html` (the new inner HTML of `target`) in place. If a reorder had to move the focused
 * element, focus is given back to it, without scrolling.
 */
export function patchHtml(target, html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  const focused = document.activeElement;
  patchChildren(target, template.content);
  if (focused && focused !== document.body && focused.isConnected && document.activeElement !== focused) {
    focused.focus({ preventScroll: true });
  }
}

// -- the live hook: `data-live-*` ------------------------------------------------------------
//
// A page part that changes while games are played carries three attributes:
//   data-live-events   its event stream (web/page_streams.py: /live/<topic>/<id>/, e.g. /live/league/7/)
//   data-live-url      the address of its server-rendered HTML (the part's inner HTML)
//   data-live-version  the version the server rendered it at (the topic's version selector)
// `followLive(element)` listens to the stream: when a `changed` event names another version, it
// fetches data-live-url and patches the part in place (never more often than every `gapMs`),
// and an `end` event closes the stream. Nothing polls while the stream works; where it cannot
// (a server without ASGI, or one with too many streams open answers 503) the part is fetched
// every `pollMs` instead, until `isOver(element)` says nothing more will change.

const LIVE_GAP_MS = 1000;
const LIVE_POLL_MS = 2000;

/**
 * Keep `element` current (see above). `apply(element, html)` patches (default `patchHtml`);
 * `isOver(element)` tells the polling fallback when to stop. Returns a function that stops.
 */
export function followLive(element, {
  apply = patchHtml, isOver = () => false, gapMs = LIVE_GAP_MS, pollMs = LIVE_POLL_MS,
} = {}) {
  let wanted = element.dataset.liveVersion || "";
  let busy = false;
  let stopped = false;
  let timer = null;
  let source = null;

  const fetchPart = () => fetch(element.dataset.liveUrl, { headers: { Accept: "text/html" } })
    .then((response) => (response.ok ? response.text() : null))
    .then((html) => {
      if (html !== null && !stopped) apply(element, html);
      return html !== null;
    })
    .catch(() => false);

  const refresh = () => {
    if (busy || stopped) return;
    busy = true;
    const version = wanted;
    fetchPart().then((ok) => {
      if (ok) element.dataset.liveVersion = version;
      setTimeout(() => {
        busy = false;
        if (element.dataset.liveVersion !== wanted) refresh();
      }, gapMs);
    });
  };

  const poll = () => {
    if (stopped) return;
    fetchPart().then(() => {
      if (!isOver(element)) timer = setTimeout(poll, pollMs);
    });
  };

  if (element.dataset.liveEvents && typeof EventSource !== "undefined") {
    source = new EventSource(element.dataset.liveEvents);
    source.addEventListener("changed", (event) => {
      wanted = JSON.parse(event.data).version;
      if (wanted !== element.dataset.liveVersion) refresh();
    });
    source.addEventListener("end", () => source.close());
    source.addEventListener("error", () => {
      // CONNECTING: the browser reconnects by itself. CLOSED: refused for good (503, no ASGI).
      if (source.readyState === EventSource.CLOSED && !stopped) {
        source = null;
        timer = setTimeout(poll, pollMs);
      }
    });
  } else {
    timer = setTimeout(poll, pollMs);
  }
  return () => {
    stopped = true;
    if (source) source.close();
    clearTimeout(timer);
  };
}
