"""The referee of a person's game after its stored answers, kept between steps in each process.

A person's game stores only its answers (tournaments/services/play.py), and every step needs the
referee as it stands after them. Rebuilt from the seed at every step, it judges every answer
again and builds every past turn's move request: O(n^2) over a game of n answers. So each
process keeps the referees of the games it stepped last (an LRU of ``ESCOBA_PLAY_REFEREE_CACHE``
games, 0: none) and goes on from one with the answers stored since; web and worker processes
take turns on a game, and each goes on from where it last was.

The stored answers stay the truth: an entry is used only when the stored answers extend the ones
it applied (the same game, ruleset, seed, seats and limits, and the same digest of the applied
answers, whatever the order of their keys); anything else (answers that are not an extension, a
row restored from a backup, a miss) replays the game from its seed. A step takes the entry out
while it works (so two steps never advance one referee, even where the database has no row
locks) and puts it back when its transaction commits: a step rolled back leaves nothing behind.
The process that finishes a game drops its entry; the others' go with the LRU.

An entry keeps no past move requests (a whole game's are about 0.4 MB, its referee about
30 kB); the finished game's diagnostics take them from one replay from the seed
(``replayed_from_seed``).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson
from django.conf import settings
from django.db import transaction

from games.engine import Game as EngineGame
from games.engine import Move, Ruleset
from games.faults import Fault, FaultKind
from games.referee import Answer, Referee
from games.wire import Debug
from tournaments.bot_calls.runner import PlayCall
from tournaments.models import PersonGame

# The attribute of a step's PersonGame instance that holds its entry while the step works.
_HELD = "_play_referee_held"


@dataclass
class Replayed:
    """A referee after the first ``applied`` answers of a game, the calls they made, and the
    digest of the game and those answers (``_digest``)."""

    referee: Referee
    calls: list[PlayCall]
    applied: int
    digest: bytes


class RefereeCache:
    """The process's kept referees, least recently used first; safe between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[int, Replayed] = OrderedDict()
        self.hits = 0  # steps that went on from a kept referee
        self.replays = 0  # steps that replayed the game from its seed

    def take(self, person_game_id: int) -> Replayed | None:
        with self._lock:
            return self._entries.pop(person_game_id, None)

    def keep(self, person_game_id: int, entry: Replayed) -> None:
        size = settings.ESCOBA_PLAY_REFEREE_CACHE
        if size <= 0 or entry.referee.is_over:
            return
        with self._lock:
            self._entries[person_game_id] = entry
            self._entries.move_to_end(person_game_id)
            while len(self._entries) > size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


cache = RefereeCache()


def answer_of(stored: dict[str, Any]) -> Answer:
    """A stored answer (``PersonGame.answers``) as the referee judges it."""
    debug = stored.get("debug")
    fault = stored.get("fault")
    return Answer(
        move=None if stored.get("move") is None else Move.from_str(stored["move"]),
        fault=None if fault is None else Fault(FaultKind(fault), stored.get("detail") or ""),
        latency_ms=stored.get("latency_ms"),
        debug=None if debug is None else Debug(debug, bool(stored.get("debug_truncated"))),
    )


def _digest(person_game: PersonGame, answers: list[dict[str, Any]]) -> bytes:
    """What a referee was built from: the game's identity and limits, and the answers."""
    game = person_game.game
    league = game.league
    made_of = [person_game.id, game.id, game.seed, league.ruleset, person_game.seat_names,
               league.move_timeout_ms, league.max_faults, answers]  # fmt: skip
    return hashlib.blake2b(orjson.dumps(made_of, option=orjson.OPT_SORT_KEYS)).digest()


def _new(person_game: PersonGame) -> Replayed:
    game = person_game.game
    league = game.league
    referee = Referee(
        EngineGame.new(Ruleset.from_dict(league.ruleset), seed=game.seed),
        seat_names=person_game.seat_names,
        game_id=game.id,
        timeout_ms=league.move_timeout_ms,
        max_faults=league.max_faults,
    )
    return Replayed(referee, [], 0, _digest(person_game, []))


def _extends(entry: Replayed, person_game: PersonGame) -> bool:
    answers = person_game.answers
    return entry.applied <= len(answers) and entry.digest == _digest(
        person_game, answers[: entry.applied]
    )


def _keep_on_commit(person_game_id: int, entry: Replayed) -> None:
    transaction.on_commit(lambda: cache.keep(person_game_id, entry))


def referee_after(person_game: PersonGame) -> tuple[Referee, list[PlayCall]]:
    """The referee as it stands after the game's stored answers, and one call per answer
    (without its request: ``replayed_from_seed`` has them).

    Call it with the game's row locked, in the step's transaction; the same instance may be
    passed again in that step (after an answer was appended): it goes on from where it was.
    """
    entry = getattr(person_game, _HELD, None)
    if entry is None:
        entry = cache.take(person_game.id)
        if entry is not None and _extends(entry, person_game):
            cache.hits += 1
            _keep_on_commit(person_game.id, entry)
        else:
            entry = None
    elif not _extends(entry, person_game):
        entry = None  # the answers were changed under the step itself: start again
    if entry is None:
        cache.replays += 1
        entry = _new(person_game)
        _keep_on_commit(person_game.id, entry)
    setattr(person_game, _HELD, entry)
    _apply(entry, person_game, requests=False)
    return entry.referee, entry.calls


def replayed_from_seed(person_game: PersonGame) -> tuple[Referee, list[PlayCall]]:
    """The game replayed from its seed, each call with the request it was sent: what a finished
    game's diagnostics keep. Once per game: the kept referees keep no past requests (a whole
    game's are a few hundred kilobytes)."""
    entry = _new(person_game)
    _apply(entry, person_game, requests=True)
    return entry.referee, entry.calls


def _apply(entry: Replayed, person_game: PersonGame, *, requests: bool) -> None:
    """Judge the answers stored after the ones the entry applied."""
    referee = entry.referee
    for stored in person_game.answers[entry.applied :]:
        turn = referee.turn()
        answer = answer_of(stored)
        ruling = referee.judge(turn, answer)
        entry.calls.append(PlayCall(turn.seat, turn.round, turn.play, ruling.move,
                                    answer.latency_ms or 0.0, ruling.fault, answer.debug,
                                    turn.request if requests else None))  # fmt: skip
    entry.applied = len(person_game.answers)
    entry.digest = _digest(person_game, person_game.answers)
