// Brings a part of the page up to date with new server-rendered HTML without replacing it.
//
// Only what changed is touched: text, attributes, and the elements that came or went. An element
// that stays is the same DOM node afterwards, so keyboard focus, a screen reader's reading place
// and the scroll position inside it survive every update (WCAG 2.4.3). The function knows
// nothing about how the HTML arrived (polling today, Server-Sent Events later).
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
