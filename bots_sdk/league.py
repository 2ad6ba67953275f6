"""`league`: a round robin of duplicate sets on your own machine, scored as the arena scores it.

Each entrant is a `module:function` played in this process or a URL called over HTTP (signed
when a secret is given). The league is the arena's, piece by piece, from the same code:

- who meets whom and in which seats: `games.scheduling.build_schedule` (duplicate sets, the
  seats rotated over one deal seed, a fresh seed per set);
- the game: the arena's referee (`games.referee`: each move asked with the very request body the
  arena sends, the answer judged as the arena judges it, a faulting move replaced by the
  fallback move, a seat over `max_faults` faults forfeiting);
- what a set counts for: `games.ratings.sets` (sets won, drawn and lost; each pair's set score;
  the crosstable's pairwise scores);
- the rating: `games.ratings.fit`, the Bradley-Terry fit with 95 % intervals that the arena
  publishes, with its provisional mark.

With the same seed, deterministic bots play the same games and get the same table.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.engine import DEFAULT_PRESET, EscobaError, Game, Result, Ruleset
from games.faults import DEFAULT_MAX_FAULTS, DEFAULT_TIMEOUT_MS
from games.protocol_check import Call
from games.ratings.fit import Fit, PairTable, fit_table
from games.ratings.ranking import ranking_key, rated
from games.ratings.sets import (
    GameFacts,
    crosstable_cells,
    game_participants,
    set_outcomes,
    set_pair_scores,
)
from games.referee import Answer, Referee, http_answer
from games.scheduling import (
    TABLE_SIZES,
    build_schedule,
    minimum_bots,
    set_length,
    table_options,
)
from games.wire import (
    ProtocolError,
    parse_info_reply,
)

from .bot import Bot, BotError, Choose, as_bot
from .http_transport import HttpTransport
from .local import ask

ERROR_PLAYERS = "--players must be 2, 3 or 4 (4 = two partnerships)"
ERROR_TOO_FEW = "a {players}-player league needs at least {minimum} bots, got {count}"


class LeagueError(Exception):
    """The league cannot be played as asked (too few bots, a bot that cannot be reached...)."""


# --- players: one interface, in-process or over HTTP --------------------------------------------


class LocalPlayer:
    """A `choose` function (or `Bot`) called in this process with the decoded request."""

    def __init__(self, target: Bot | Choose, *, name: str | None = None) -> None:
        self.bot = as_bot(target, name=name)
        self.name = self.bot.name

    def move(self, body: dict[str, Any], timeout_ms: int) -> Answer:
        return ask(self.bot, body)

    def notify(self, route: str, body: dict[str, Any]) -> None:
        try:
            self.bot.notify(route, body)
        except (BotError, ProtocolError):
            pass  # the arena ignores what /start and /end answer; so do we

    def close(self) -> None:
        pass


class HttpPlayer:
    """A bot behind a URL, called as the arena calls it (signed when given a secret)."""

    def __init__(self, url: str, *, secret: str | None, timeout_ms: int) -> None:
        try:
            self.transport = HttpTransport(url, secret, timeout_ms)
        except ValueError as exc:
            raise LeagueError(str(exc)) from None
        self.url = url
        self.name = self._info_name()

    def _info_name(self) -> str:
        answer = self.transport.send(Call("GET", ""))
        if answer.error is not None:
            raise LeagueError(f"cannot reach the bot at {self.url}: {answer.error}")
        if answer.status != 200:
            hint = " (does it want a secret? give --secret)" if answer.status == 401 else ""
            raise LeagueError(f"the bot at {self.url} answered GET / with {answer.status}{hint}")
        try:
            return parse_info_reply(json.loads(answer.payload)).name
        except (ValueError, ProtocolError) as exc:
            raise LeagueError(f"the bot at {self.url} is not an escoba/1 bot: {exc}") from None

    def move(self, body: dict[str, Any], timeout_ms: int) -> Answer:
        answer = self.transport.send(Call("POST", "move", body))
        if answer.status == 401:
            # Not a fault to play through: every later call would be refused the same way.
            raise LeagueError(self._refused())
        return http_answer(answer, timeout_ms)

    def _refused(self) -> str:
        if self.transport.signer is None:
            return f"the bot at {self.url} refuses unsigned calls (HTTP 401): give --secret"
        return f"the bot at {self.url} refuses our signature (HTTP 401): is --secret its secret?"

    def notify(self, route: str, body: dict[str, Any]) -> None:
        self.transport.send(Call("POST", route, body))

    def close(self) -> None:
        self.transport.close()


Player = LocalPlayer | HttpPlayer


def is_url(spec: str) -> bool:
    return urllib.parse.urlsplit(spec).scheme in ("http", "https")


# --- one game ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayedGame:
    seating: tuple[int, ...]
    result: Result
    faults: tuple[int, ...]  # per seat
    # Every fault in order: (seat, kind, detail).
    faulted: tuple[tuple[int, str, str], ...] = ()


def play_game(
    players: Sequence[Player],
    seating: Sequence[int],
    *,
    ruleset: Ruleset,
    seed: int,
    game_id: str,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    max_faults: int = DEFAULT_MAX_FAULTS,
) -> PlayedGame:
    """One game, `players[seating[i]]` in seat i, refereed with the arena's fault policy."""
    seated = [players[index] for index in seating]
    referee = Referee(Game.new(ruleset, seed=seed), seat_names=[player.name for player in seated],
                      game_id=game_id, timeout_ms=timeout_ms,
                      max_faults=max_faults)  # fmt: skip
    for player, notice in zip(seated, referee.start_notices(), strict=True):
        player.notify("start", notice)
    while not referee.is_over:
        turn = referee.turn()
        referee.judge(turn, seated[turn.seat].move(turn.request, timeout_ms))
    for player, notice in zip(seated, referee.end_notices(), strict=True):
        player.notify("end", notice)
    result = referee.game.result
    assert result is not None
    faulted = tuple((seat, str(fault.kind), fault.detail) for seat, fault in referee.faulted)
    return PlayedGame(tuple(seating), result, tuple(referee.faults), faulted)


# --- the league --------------------------------------------------------------------------------


@dataclass
class Standing:
    player: int
    name: str
    sets: int = 0
    won: int = 0
    drawn: int = 0
    lost: int = 0
    games: int = 0
    faults: int = 0
    rating: float = 0.0
    low: float = 0.0
    high: float = 0.0
    provisional: bool = True


@dataclass
class LeagueReport:
    names: list[str]
    ruleset: Ruleset
    sets_per_pairing: int
    seed: int
    games: int = 0
    standings: list[Standing] = field(default_factory=list)
    crosstable: dict[tuple[int, int], tuple[float, int]] = field(default_factory=dict)
    fit: Fit | None = None
    played: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bots": self.names,
            "ruleset": self.ruleset.to_dict(),
            "players": self.ruleset.players,
            "sets_per_pairing": self.sets_per_pairing,
            "seed": self.seed,
            "games": self.games,
            "standings": [
                {
                    "rank": rank,
                    "bot": row.name,
                    "sets": row.sets,
                    "sets_won": row.won,
                    "sets_drawn": row.drawn,
                    "sets_lost": row.lost,
                    "games": row.games,
                    "faults": row.faults,
                    "rating": round(row.rating, 2),
                    "rating_low": round(row.low, 2),
                    "rating_high": round(row.high, 2),
                    "provisional": row.provisional,
                }
                for rank, row in enumerate(self.standings, start=1)
            ],
            "crosstable": [
                {
                    "bot": self.names[a],
                    "opponent": self.names[b],
                    "score": score,
                    "games": games,
                }
                for (a, b), (score, games) in sorted(self.crosstable.items())
            ],
            "played": self.played,
        }

    def to_text(self) -> str:
        options = self.ruleset.to_dict()
        lines = [
            f"{len(self.names)} bots, {options['name']}, {self.ruleset.players}-player games, "
            f"{self.sets_per_pairing} duplicate set(s) per pairing, {self.games} games, "
            f"seed {self.seed}",
            "",
        ]
        width = max(len(name) for name in self.names)
        lines.append(
            f"{'#':>3}  {'bot':{width}}  {'sets':>4} {'won':>4} {'drawn':>5} {'lost':>4}  "
            f"{'Elo':>7}  {'95 % interval':>17}  {'faults':>6}"
        )
        for rank, row in enumerate(self.standings, start=1):
            mark = "  provisional" if row.provisional else ""
            lines.append(
                f"{rank:>3}  {row.name:{width}}  {row.sets:>4} {row.won:>4} {row.drawn:>5} "
                f"{row.lost:>4}  {row.rating:>7.1f}  [{row.low:>7.1f}, {row.high:>7.1f}]  "
                f"{row.faults:>6}{mark}"
            )
        lines += ["", "Crosstable: the row's score against the column (1 a game won, ½ a draw)"]
        order = [row.player for row in self.standings]
        cell_width = max(width, 9)
        header = "".join(f"{self.names[b]:>{cell_width + 2}}" for b in order)
        lines.append(" " * (width + 2) + header)
        for a in order:
            cells = []
            for b in order:
                if a == b:
                    cells.append(f"{'-':>{cell_width + 2}}")
                    continue
                score, games = self.crosstable.get((a, b), (0.0, 0))
                cells.append(f"{_number(score) + '/' + str(games):>{cell_width + 2}}")
            lines.append(f"{self.names[a]:{width}}  " + "".join(cells))
        return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def run_league(
    players: Sequence[Player],
    *,
    table_size: int = 2,
    sets: int = 1,
    ruleset: str | Mapping[str, Any] = DEFAULT_PRESET,
    seed: int = 0,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    max_faults: int = DEFAULT_MAX_FAULTS,
    progress: Callable[[int, int], None] | None = None,
) -> LeagueReport:
    """Play every duplicate set of the league and score it as the arena does.

    `progress(done, total)` is called after each game.
    """
    if table_size not in TABLE_SIZES:
        raise LeagueError(ERROR_PLAYERS)
    rules = _ruleset(ruleset, table_size)
    minimum = minimum_bots(table_size)
    if len(players) < minimum:
        raise LeagueError(
            ERROR_TOO_FEW.format(players=table_size, minimum=minimum, count=len(players))
        )
    if sets < 1:
        raise LeagueError("--sets must be at least 1")
    schedule = build_schedule(
        list(range(len(players))),
        players=table_size,
        games_per_pairing=sets * set_length(table_size),
        seed=seed,
    )
    names = _unique_names([player.name for player in players])
    report = LeagueReport(names=names, ruleset=rules, sets_per_pairing=sets, seed=seed)
    rows = [Standing(player=index, name=name) for index, name in enumerate(names)]
    total = sum(len(match.games) for match in schedule)
    results: list[tuple[int, int, float]] = []
    all_games: list[GameFacts] = []
    for match in schedule:
        set_games = []
        for number, seating in enumerate(match.games, start=1):
            played = play_game(
                players, seating, ruleset=rules, seed=match.seed,
                game_id=f"{match.number}-{number}",
                timeout_ms=timeout_ms, max_faults=max_faults,
            )  # fmt: skip
            facts = _facts(played, rules)
            report.played.append(
                {
                    "set": match.number,
                    "seed": match.seed,
                    "seats": [names[index] for index in seating],
                    "winner": played.result.winner,
                    "totals": list(played.result.totals),
                    "reason": played.result.reason,
                    "faults": list(played.faults),
                }
            )
            set_games.append(facts)
            for seat, index in enumerate(seating):
                rows[index].faults += played.faults[seat]
            for index, _ in facts.participants:
                rows[index].games += 1
            report.games += 1
            if progress is not None:
                progress(report.games, total)
        for index, outcome in set_outcomes(set_games).items():
            rows[index].sets += 1
            setattr(rows[index], outcome, getattr(rows[index], outcome) + 1)
        results.extend(set_pair_scores(set_games))
        all_games.extend(set_games)
    fit = fit_table(PairTable.from_results(results, players=range(len(players))))
    for row in rows:
        figures = rated(fit, row.player)
        row.rating, row.low, row.high = figures.rating, figures.low, figures.high
        row.provisional = figures.provisional
    report.fit = fit
    report.standings = sorted(rows, key=lambda r: ranking_key(r.provisional, r.rating, r.name))
    report.crosstable = crosstable_cells(all_games)
    return report


def _ruleset(ruleset: str | Mapping[str, Any], table_size: int) -> Ruleset:
    """The preset (a name, or {"name", "options"}) at the league's table size, as the arena
    makes a league's ruleset."""
    name, options = ruleset, {}
    if isinstance(ruleset, Mapping):
        name, options = ruleset.get("name", DEFAULT_PRESET), dict(ruleset.get("options") or {})
    try:
        return Ruleset.from_preset(name, {**options, **table_options(table_size)})
    except EscobaError as exc:
        raise LeagueError(f"ruleset: {exc}") from None


def _facts(played: PlayedGame, ruleset: Ruleset) -> GameFacts:
    result = played.result
    return GameFacts(
        participants=tuple(game_participants(played.seating, ruleset.team_of)),
        winner=result.winner,
        totals=tuple(result.totals),
        forfeit_team=result.forfeit,
    )


def _unique_names(names: Sequence[str]) -> list[str]:
    """Two entrants with one name (two URLs of one bot) get #2, #3... to tell them apart."""
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return unique
