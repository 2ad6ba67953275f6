"""Who may know what of a game: the one place that says what each viewer is shown.

OpenSpiel separates a seat's private information from the public observation; so do we, and
every way out of the service (bot request, API, page, live stream, log) asks here:

- **a seat** (its bot) sees its own hand and what every seat sees (`games.engine.Game.view`,
  written by `games.wire`); in rated play it is told no names, not even in the end notice
  (`league_plays_anonymously`): the names are public once its whole set is over, and it is
  never told which other game was dealt the same cards;
- **anyone else** (a spectator, another user, the bot's owner alike) sees, while a game is
  played, only what every seat sees: the plays, the table, the counts (games/public_view.py
  `PublicGame`), never a hand, the deck or the seed; in rated play not even which bots sit at
  the table (`GameSight.seats_named`) until the whole set is over, since a bot knows its game id
  and could look its opponent up, and a finished game of a set names the opponent of the set's
  games still in play (which a bot could then no-show);
- **nothing at all** is shown of a game whose deal another game still in play shares
  (`GameSight.sealed`: a duplicate set, whose games are dealt the same cards with the seats
  swapped): its plays would show the other table's hands;
- once the game is over, no game in play shares its deal and (in rated play) its set is over,
  its record is public: the log with every hand, the seed, the names.

Pure reads of rows already loaded: `game_sight` reads the game's league, match and the match's
games (prefetch them: `selectors.match_games_numbered`), so a list costs no query per game.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Q

from tournaments.models import Game, League, Match

# What an anonymous seat is called on pages and in the API's place of a bot.
ANONYMOUS_SEAT = "seat {seat}"


def league_plays_anonymously(league: League) -> bool:
    """Whether the league's games hide who sits where until each game ends: rated play (the
    ladder, staff rated leagues), where a bot that knew its opponent could dodge or feed it."""
    return bool(league.rated)


def rated_games_in_play() -> Q:
    """Games (a ``Game`` query) whose seats nobody may be told yet: rated, of a set not over (a
    finished game would name the opponent of its set's games still in play). A list filtered by
    bot leaves them out, or the filter itself would name the bots at the table."""
    return Q(league__rated=True, match__status__in=_IN_PLAY)


_IN_PLAY = ("pending", "running")


def seats_hidden(*, anonymous: bool, match_status: str) -> bool:
    """Whether a game already read may not name its bots yet: the rule of
    ``rated_games_in_play`` for one game of a league that plays anonymously
    (``league_plays_anonymously``) whose set has ``match_status``. Not before the whole set is
    over: the set's other games have the same opponents."""
    return anonymous and match_status in _IN_PLAY


def league_sets_in_play(league_id: int, via: str = "") -> Q:
    """The games (through ``via``, e.g. ``"game__"``, from a model that points at games) of the
    league's sets still played: for a rated league, the games ``rated_games_in_play`` names,
    found from the index on the league's matches by status instead of joining every game to its
    match."""
    in_play = Match.objects.filter(league_id=league_id, status__in=_IN_PLAY).values("id")
    return Q(**{f"{via}match_id__in": in_play})


@dataclass(frozen=True)
class GameSight:
    """What a viewer other than the seats may be shown of one game, now.

    ``in_play``: the game is being played (or waits for its set's run to start);
    ``seats_named``: the bots at its seats may be named (in rated play, once its set is over);
    ``sealed``: another game still in play shares its deal, so nothing of its play (plays,
    table, log, seed) may be shown.
    """

    in_play: bool
    seats_named: bool
    sealed: bool

    @property
    def play_shown(self) -> bool:
        """The public view of the play (live while played, the log after) may be shown."""
        return not self.sealed

    @property
    def record_shown(self) -> bool:
        """The whole record (the log with every hand, the seed, diagnostics) may be shown."""
        return not self.in_play and not self.sealed and self.seats_named


def game_sight(game: Game) -> GameSight:
    """The game as a spectator, another user or the bot's owner may see it (see the module)."""
    return sight_of(
        game_id=game.pk,
        status=game.status,
        seed=game.seed,
        match_status=game.match.status,
        set_games=((other.pk, other.seed, other.status) for other in game.match.games.all()),
        anonymous=league_plays_anonymously(game.league),
    )


def sight_of(
    *,
    game_id: int,
    status: str,
    seed: int,
    match_status: str,
    set_games: Iterable[tuple[int, int, str]],
    anonymous: bool,
) -> GameSight:
    """``game_sight`` from plain columns: the game's, its match's status, each game of its set
    as ``(id, seed, status)`` and whether its league plays anonymously (lists read as rows)."""
    match_in_play = match_status in _IN_PLAY
    in_play = match_in_play and status == Game.Status.PENDING
    sealed = match_in_play and any(
        other_id != game_id and other_seed == seed and other_status == Game.Status.PENDING
        for other_id, other_seed, other_status in set_games
    )
    named = not seats_hidden(anonymous=anonymous, match_status=match_status)
    return GameSight(in_play=in_play, seats_named=named, sealed=sealed)


@dataclass
class AnonymousSeat:
    """A seat as a page shows it while its bot may not be named: its number and team only."""

    seat: int
    team: int
    bot: None = None
    name: str = "Anonymous bot"
    first_hand: list[str] = field(default_factory=list)


def seat_label(seat: int) -> str:
    """An anonymous seat's name, as pages and the API show it."""
    return ANONYMOUS_SEAT.format(seat=seat)
