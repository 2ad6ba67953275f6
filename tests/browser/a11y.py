"""Accessibility checks shared by the browser tests: axe-core's WCAG 2.1 A/AA rules, and what axe
cannot see (the focus ring's contrast, boxes that scroll, text spacing)."""

from __future__ import annotations

from axe_playwright_python.base import AXE_SCRIPT

WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
_AXE_OPTIONS = {"runOnly": {"type": "tag", "values": WCAG_21_AA}, "resultTypes": ["violations"]}


def axe_violations(page) -> list[str]:
    """axe-core's WCAG 2.1 A and AA violations on the page as it is now, one line per element:
    ``"rule (impact): selector: what is wrong"``; [] when there are none.

    axe-core (half a megabyte of script) is put in a page once: checked again, at another
    width or after a live update, the same document runs the copy it already has."""
    if not page.evaluate("() => typeof window.axe === 'object' && !!window.axe.run"):
        page.evaluate(AXE_SCRIPT)
    response = page.evaluate("(options) => axe.run(document, options)", _AXE_OPTIONS)
    lines = []
    for violation in response["violations"]:
        for node in violation["nodes"]:
            target = " ".join(str(part) for part in node["target"])
            summary = node.get("failureSummary", "").replace("\n", " ")
            lines.append(f"{violation['id']} ({violation['impact']}): {target}: {summary}")
    return lines


# WCAG's relative luminance and contrast ratio, in the page, for the element that has focus: its
# outline against what lies just outside it, sampled on all four sides (a gradient counts by each
# of its colours). Returns null when nothing has focus.
FOCUS_RING = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const rgb = (text) => (text.match(/rgba?\\([^)]*\\)/g) || []).map((c) => {
    const n = c.match(/[\\d.]+/g).map(Number);
    return { r: n[0], g: n[1], b: n[2], a: n.length > 3 ? n[3] : 1 };
  });
  const lin = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = (c) => 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05); };
  const backgroundsAt = (x, y) => {
    const under = document.elementsFromPoint(x, y)
      .filter((node) => node !== el && !el.contains(node));
    for (const node of under) {
      for (let at = node; at; at = at.parentElement) {
        const style = getComputedStyle(at);
        const stops = rgb(style.backgroundImage).filter((c) => c.a > 0.5);
        if (stops.length) return stops;
        const [colour] = rgb(style.backgroundColor);
        if (colour && colour.a > 0.5) return [colour];
      }
    }
    return [{ r: 255, g: 255, b: 255, a: 1 }];
  };
  const style = getComputedStyle(el);
  const width = parseFloat(style.outlineWidth) || 0;
  const [ring] = rgb(style.outlineColor);
  if (style.outlineStyle === "none" || width < 2 || !ring) {
    return { label: el.outerHTML.slice(0, 80), ratio: 0, width };
  }
  const box = el.getBoundingClientRect();
  const out = Math.max(parseFloat(style.outlineOffset) || 0, 0) + width + 2;
  const midX = box.left + box.width / 2, midY = box.top + box.height / 2;
  const points = [[box.left - out, midY], [box.right + out, midY], [midX, box.top - out],
    [midX, box.bottom + out]]
    .filter(([x, y]) => x >= 0 && y >= 0 && x < innerWidth && y < innerHeight);
  const ratios = points.flatMap(([x, y]) => backgroundsAt(x, y).map((bg) => ratio(ring, bg)));
  return { label: el.outerHTML.slice(0, 80), ratio: Math.min(...ratios, 21), width };
}"""

# Each box on the page that is wider than it shows (it scrolls sideways) must be reachable by
# keyboard: focusable itself. Returns the ones that are not.
UNREACHABLE_SCROLLERS = """() => [...document.querySelectorAll("body *")].filter((el) => {
  const style = getComputedStyle(el);
  if (!["auto", "scroll"].includes(style.overflowX)) return false;
  if (el.scrollWidth <= el.clientWidth + 1 || el.clientWidth === 0) return false;
  return el.tabIndex < 0;
}).map((el) => el.outerHTML.slice(0, 100))"""

# WCAG 1.4.12's text spacing, as its understanding document's bookmarklet sets it.
TEXT_SPACING_CSS = """* { line-height: 1.5 !important; letter-spacing: 0.12em !important;
  word-spacing: 0.16em !important; } p { margin-bottom: 2em !important; }"""


def page_problems(page) -> list[str]:
    """axe's violations, and boxes that scroll sideways without being reachable by keyboard."""
    return axe_violations(page) + [
        f"scrolls but cannot be focused: {html}" for html in page.evaluate(UNREACHABLE_SCROLLERS)
    ]


# True once site.js has answered the last resize (it marks, 150 ms after it, the tables that
# scroll sideways as focusable regions, and unmarks those that fit again): nothing is left to
# mark or unmark. True at once on a page without such tables.
SCROLLERS_MARKED = """() => [...document.querySelectorAll(".table-wrap")].every((wrap) => {
  const scrolls = wrap.scrollWidth > wrap.clientWidth + 1;
  if (scrolls) return wrap.hasAttribute("tabindex");
  return !wrap.hasAttribute("data-client-attrs") || document.activeElement === wrap;
})"""


def at_width(page, viewport: dict) -> None:
    """Resize the window to ``viewport`` and wait until the page has answered the resize.

    A condition, not a fixed pause: at once when nothing needs marking. If the page never
    marks a table that scrolls (the fault ``page_problems`` reports), the check goes on after
    10 s and reports it, as it reports every other problem."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if page.viewport_size != viewport:
        page.set_viewport_size(viewport)
    try:
        page.wait_for_function(SCROLLERS_MARKED, timeout=10_000)
    except PlaywrightTimeout:
        pass
