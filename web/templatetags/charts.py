"""Charts drawn on the server as inline SVG: no chart library, nothing for the browser to run."""

import math
from collections.abc import Sequence

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

WIDTH, HEIGHT = 420, 210
LEFT, RIGHT, TOP, BOTTOM = 44, 10, 10, 26


def _nice_step(span: float) -> int:
    """A round grid step (10, 20, 25, 50, 100...) giving about four lines over ``span``."""
    raw = max(span / 4, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return max(1, int(factor * magnitude))
    return int(10 * magnitude)


@register.simple_tag
def rating_chart(
    ratings: Sequence[float], title: str = "Elo rating after each rated game", per_fit: bool = False
) -> str:
    """An SVG line of ``ratings`` against game number (the first is the rating before any
    game), or with ``per_fit`` against fit number (one point per fit of the pool, from 1: the
    published rating is fitted, not accumulated game by game)."""
    if len(ratings) < 2:
        if per_fit and ratings:
            return format_html('<p class="muted">{}</p>', "One fit so far: no history to draw.")
        return format_html('<p class="muted">{}</p>', "No rated games yet.")
    values = [float(r) for r in ratings]
    low, high = min(values), max(values)
    step = _nice_step(high - low)
    low = math.floor(low / step) * step
    high = max(math.ceil(high / step) * step, low + step)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    last = len(values) - 1

    def x(i: int) -> float:
        return LEFT + plot_w * i / last

    def y(v: float) -> float:
        return TOP + plot_h * (high - v) / (high - low)

    parts = []
    level = low
    while level <= high:
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(level):.1f}" '
            f'y2="{y(level):.1f}"/><text x="{LEFT - 6}" y="{y(level) + 4:.1f}" '
            f'text-anchor="end">{level:g}</text>'
        )
        level += step
    parts.append(
        f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + plot_h}" '
        f'y2="{TOP + plot_h}"/>'
    )
    first = 1 if per_fit else 0
    for i in sorted({0, last // 2, last}):
        parts.append(
            f'<text x="{x(i):.1f}" y="{HEIGHT - 8}" text-anchor="middle">{i + first}</text>'
        )
    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
    parts.append(f'<polyline class="line" points="{points}"/>')
    parts.append(f'<circle class="dot" cx="{x(last):.1f}" cy="{y(values[-1]):.1f}" r="4"/>')
    counted = f"{len(values)} fits" if per_fit else f"{last} rated games"
    summary = (
        f"{counted}; from {values[0]:.0f} to {values[-1]:.0f}, "
        f"lowest {min(values):.0f}, highest {max(values):.0f}."
    )
    return mark_safe(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="chart-title chart-desc" data-points="{len(values)}">'
        f'<title id="chart-title">{escape(title)}</title>'
        f'<desc id="chart-desc">{escape(summary)}</desc>{"".join(parts)}</svg>'
    )


def chart_points(svg: SafeString | str) -> list[tuple[float, float]]:
    """The polyline's points of a chart, for tests and for anyone checking what was drawn."""
    start = svg.index(' points="') + len(' points="')
    end = svg.index('"', start)
    return [tuple(float(n) for n in pair.split(",")) for pair in svg[start:end].split()]
