// Behaviour every page shares: the skip link, and tables that scroll inside their box.

/**
 * A `.table-wrap` whose table is wider than the box scrolls sideways: make it a named, focusable
 * region so a keyboard can scroll it (WCAG 2.1.1), and undo that when it fits again (unless it
 * has focus). Run on load, on resize, and by scripts after they redraw a table.
 */
export function markScrollableRegions(root = document) {
  for (const wrap of root.querySelectorAll(".table-wrap")) {
    const scrolls = wrap.scrollWidth > wrap.clientWidth + 1;
    if (scrolls && !wrap.hasAttribute("tabindex")) {
      wrap.setAttribute("tabindex", "0");
      wrap.setAttribute("role", "region");
      wrap.setAttribute("aria-label", `${regionName(wrap)} (scrolls sideways)`);
      wrap.setAttribute("data-client-attrs", "tabindex role aria-label");
    } else if (!scrolls && wrap.hasAttribute("data-client-attrs") && document.activeElement !== wrap) {
      for (const name of ["tabindex", "role", "aria-label", "data-client-attrs"]) {
        wrap.removeAttribute(name);
      }
    }
  }
}

function regionName(wrap) {
  const caption = wrap.querySelector("caption");
  if (caption && caption.textContent.trim()) return caption.textContent.trim();
  // Else the nearest heading before it in the page.
  for (let el = wrap; el; el = el.parentElement) {
    for (let before = el.previousElementSibling; before; before = before.previousElementSibling) {
      const heading = /^H[1-6]$/.test(before.tagName)
        ? before
        : [...before.querySelectorAll("h1, h2, h3, h4, h5, h6")].pop();
      if (heading) return heading.textContent.trim();
    }
  }
  return "Table";
}

/** The skip link focuses the content without touching the address (a replay keeps its step). */
function setupSkipLink() {
  const link = document.querySelector(".skip-link");
  const main = document.getElementById("main");
  if (!link || !main) return;
  link.addEventListener("click", (event) => {
    event.preventDefault();
    main.focus();
    main.scrollIntoView();
  });
}

// Once per page, even if the module is reached under two addresses (hashed static names).
if (typeof document !== "undefined" && !window.escobaSite) {
  window.escobaSite = true;
  setupSkipLink();
  markScrollableRegions();
  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(() => markScrollableRegions(), 150);
  });
}
