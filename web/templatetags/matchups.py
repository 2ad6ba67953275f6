"""``{{ game|matchup }}``: who played, as "a vs b", by team (the seats' stored teams).

In a partnership game a bot fields both seats of its team, so listing seats would read
"a vs b vs a vs b"; a team is named once, by its distinct bots ("a & c" when two bots share one).
"""

from __future__ import annotations

from collections.abc import Iterable

from django import template

from tournaments.models import Game

register = template.Library()


def teams_label(seats: Iterable[tuple[int, str]]) -> str:
    """``seats``' teams in team order, each by its bots' names in the order given: ``seats`` is
    (team, bot name) per seat, in seat order."""
    teams: dict[int, list[str]] = {}
    for team, name in seats:
        names = teams.setdefault(team, [])
        if name not in names:
            names.append(name)
    return " vs ".join(" & ".join(names) for _, names in sorted(teams.items()))


@register.filter
def matchup(game: Game) -> str:
    """The game's teams in team order, each by its bots in seat order (uses prefetched seats)."""
    seats = sorted(game.seats.all(), key=lambda seat: seat.seat)
    return teams_label((seat.team, seat.bot.name) for seat in seats)
