"""``{{ game|matchup }}``: who played, as "a vs b", by team (the seats' stored teams).

In a partnership game a bot fields both seats of its team, so listing seats would read
"a vs b vs a vs b"; a team is named once, by its distinct bots ("a & c" when two bots share one).
"""

from __future__ import annotations

from django import template

from tournaments.models import Game

register = template.Library()


@register.filter
def matchup(game: Game) -> str:
    """The game's teams in team order, each by its bots in seat order (uses prefetched seats)."""
    teams: dict[int, list[str]] = {}
    for seat in sorted(game.seats.all(), key=lambda seat: seat.seat):
        names = teams.setdefault(seat.team, [])
        if seat.bot.name not in names:
            names.append(seat.bot.name)
    return " vs ".join(" & ".join(names) for _, names in sorted(teams.items()))
