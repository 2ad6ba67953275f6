"""Golden digests: the engine plays seeded games exactly as the engine of commit ec55b8e did.

``golden_games.json`` was written by that engine (before the bit-mask representation of issue 16)
with ``python tests/engine/test_engine_golden.py --write``. Every game here is seeded and played
by seeded random picks among ``legal_moves()``, so a different deal, a different order of the
legal moves, a different view or a different log byte shows up as a different digest: the same
seed and the same replies must give the same game, whichever build runs it. Each digest covers a
game's ``escoba-log/1`` JSON text, the legal moves offered at every turn, some seats' views and
the logs of determinized samples played on from a view.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

from games.engine import PRESETS, Determinizer, Game, Ruleset

GOLDEN = Path(__file__).with_name("golden_games.json")
GAMES = 264


def configurations() -> list[Ruleset]:
    """Every preset at every table size (classic 4p in teams too), and a shared-tie short game."""
    found = []
    for name in sorted(PRESETS):
        for players in (2, 3, 4):
            found.append(Ruleset.from_preset(name, {"players": players}))
    found.append(Ruleset.from_preset("classic", {"players": 4, "teams": True}))
    found.append(Ruleset.from_preset("classic", {"target": 5, "tie": "shared"}))
    found.append(Ruleset.from_preset("del15", {"capture": "optional", "sevens": "primera"}))
    return found


def _view_text(game: Game, seat: int) -> str:
    view = game.view(seat)
    return repr(
        (
            view.seat, view.team, [str(c) for c in view.hand], [str(c) for c in view.table],
            view.round, view.dealer, view.deck_remaining, view.seats, view.scores,
            [(p.seat, str(p.card), [str(c) for c in p.capture], p.escoba) for p in view.history],
            [m.to_str() for m in view.legal_moves], view.lucky_deal and (
                view.lucky_deal.seat, [str(c) for c in view.lucky_deal.cards],
                view.lucky_deal.escobas,
            ),
        )
    )  # fmt: skip


def game_digest(number: int) -> str:
    """The digest of seeded game ``number``: its ruleset, seed and random picks follow from it."""
    rulesets = configurations()
    ruleset = rulesets[number % len(rulesets)]
    digest = hashlib.sha256()
    game = Game.new(ruleset, 1000 + number * 7919)
    chooser = random.Random(number)
    turn = 0
    while not game.is_over:
        seat = game.current_seat
        if number % 9 == 4 and game.round == 2 and turn % 5 == 0:
            game.forfeit(seat, "faults")
            break
        moves = game.legal_moves()
        digest.update(" ".join(move.to_str() for move in moves).encode())
        if number % 3 == 0 and turn % 3 == 0:
            digest.update(_view_text(game, (seat + turn) % ruleset.players).encode())
        if number % 4 == 1 and turn % 23 == 5:
            sample = Determinizer(game.view(seat)).sample(random.Random(turn))
            sampler = random.Random(number + turn)
            while not sample.is_over and sample.round == game.round:
                sample.apply(sampler.choice(sample.legal_moves()))
            digest.update(json.dumps(sample.log()).encode())
        clone = game.clone() if turn % 6 == 2 else None
        game.apply(moves[int(chooser.random() * len(moves))])
        if clone is not None:
            # A clone goes its own way without touching the game (checked by the game's log).
            clone.apply(chooser.choice(clone.legal_moves()))
            if not clone.is_over:
                digest.update(_view_text(clone, clone.current_seat).encode())
            if turn == 20:
                digest.update(json.dumps(clone.log()).encode())
        turn += 1
    digest.update(json.dumps(game.log()).encode())
    return digest.hexdigest()[:24]


def test_seeded_games_are_the_golden_ones():
    """264 seeded games over 21 configurations, with forfeits, clones and determinized samples,
    digest for digest as the engine before issue 16's representation change played them."""
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert len(golden["digests"]) == GAMES
    different = [n for n in range(GAMES) if game_digest(n) != golden["digests"][n]]
    assert not different, f"games {different[:10]} differ from the golden ones"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    digests = [game_digest(number) for number in range(GAMES)]
    GOLDEN.write_text(json.dumps({"games": GAMES, "digests": digests}, indent=0) + "\n")
    print(f"wrote {GOLDEN}")
