"""The luck of fresh deals taken out at the chance events of the game played (AIVAT-style).

    .venv/bin/python -m benchmarks.ranking_quality luck --chance-deals 1500

A measured candidate beside the deal-level baseline (``benchmarks.luck``; the service does not
use it: docs/benchmarks-journal.md has the figures). The arena knows every hand, so it can take
the luck out where it happens: at each chance event of the game actually played (a round's
opening deal of the hands and the table, each later deal of hands from the deck) seat 0's
correction is

    V(state after the actual cards) - E[V(state after cards dealt at random)]

with V any fixed value of a perfect-information state (Burch et al. 2018, "AIVAT"; Davidson et
al. 2013). Given everything before the event the actual cards are a uniform draw from the cards
not yet dealt, exactly as the sampled ones are (``resampled``: the undealt part of the deck
shuffled, a new seed for the rounds to come), so each term has mean zero whatever the bots do,
and a result less any fixed multiple of the game's sum stays unbiased; how well V predicts the
result only decides how much variance goes. The values V measured:

- ``card_features``: per card class (value, oros or not), seat 0's hand less seat 1's, the
  round's captured cards and escobas (the lucky deal) and the table signed by who plays first
  on it; linear, so its expectation is exact at the later deals (both hands are drawn alike:
  zero) and sampled (``CARD_SAMPLES``) only at a round's opening;
- ``rollout_margin``: seat 0's round point margin in plays to the round's end from the state,
  uniformly random (the compiled ``play_random``) or greedy (``games.ratings.baseline``'s
  policy in every seat), the undealt cards shuffled afresh for each play (V of what is known,
  not of the deck order); E is one play after each of as many random deals;
- the same rollouts coupled (``coupled_corrections``: common random numbers, each rollout's
  random deal and the actual cards' rest taken from one order of the undealt cards), and with
  ``--chance-large`` coupled greedy rollouts past the CPU budget (``LARGE_ROLLOUTS``), to see
  where the variance removed levels off.

For the pairs random-greedy and greedy-expert, ``--chance-deals`` deals are played in both seat
orders in-process, each game's corrections kept (random rollouts and card features in
``CHANCE_CACHE``; the play codes and the greedy rollouts, from a second playing of the same
games, in ``GREEDY_CACHE``: a deal whose games came out differently, a fallback move past the
time limit on a loaded machine, is left out; the coupled corrections, replayed from those
codes, in ``COUPLED_CACHE`` and ``LARGE_CACHE``). A fresh set is, as in ``benchmarks.luck``, the
stronger bot's seat-0 game of one deal with its seat-1 game of another; its controls are the
two games' corrections summed (and, for the combined schemes, the published deal-level
controls), weighted by ``pair_weight``, with least-squares coefficients per pair (each pair is
in a band of its own) fitted on the first half of the deals and used, frozen, on the second.
Reported per scheme: the share of a fresh set's variance removed on the second half, CPU per
rated game, the bias check, and the games per pair to separate random < greedy < expert at
95 % (``benchmarks.luck.separation``). Two-player games only.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.known_order import BOTS, cached_map
from games.engine import Game, Ruleset
from games.engine.state import decode_play
from games.ratings.baseline import greedy_move

# -- the corrections at the chance events of one game --------------------------------------------

CLASSES = 20  # card value 1..10, oros or not
_SEED_BITS = 62


def card_class(card: int) -> int:
    """The class of card index ``card``: its value, and whether it is an oro."""
    return (card // 4) * 2 + (card % 4 == 0)


def chance_events(ruleset: Ruleset, seed: int, codes: Sequence[int]) -> Iterator[tuple]:
    """The chance events of the game of deal ``seed`` played as ``codes`` (every round's play
    codes in order): (before, move, after), ``before`` the state just before the play that
    brings the deal (None for the game's first deal), ``after`` the state just after it."""
    game = Game.new(ruleset, seed)
    yield None, None, game.clone()
    for code in codes:
        _, move, _ = decode_play(code)
        before = game.clone()
        deals, number = game._record.deals, game.round
        game.apply(move)
        if not game.is_over and (game.round != number or game._record.deals != deals):
            yield before, move, game.clone()


def resampled(ruleset: Ruleset, before: Game | None, move, rng: random.Random) -> Game:
    """The state after the event with the cards dealt at random instead: the deck's undealt
    part shuffled (and a new seed for the rounds to come) before the same play is made."""
    if before is None:
        return Game.new(ruleset, rng.getrandbits(_SEED_BITS))
    game = before.clone()
    position = game._deck_position
    rest = game._deck[position:]
    rng.shuffle(rest)
    game._deck = game._deck[:position] + rest
    game.seed = rng.getrandbits(_SEED_BITS)
    game.apply(move)
    return game


def card_features(game: Game) -> list[float]:
    """Seat 0's side less seat 1's: hand cards per class, cards captured this round per class
    and escobas, and the table's cards per class signed by who plays first on it."""
    hands = [[0] * CLASSES for _ in range(2)]
    for seat in (0, 1):
        for card in game._hands[seat]:
            hands[seat][card_class(card)] += 1
    captured = [0] * CLASSES
    for team, sign in ((0, 1), (1, -1)):
        mask = game._captured[team]
        for card in range(40):
            if mask >> card & 1:
                captured[card_class(card)] += sign
    table = [0] * CLASSES
    sign = 1 if game.current_seat == 0 else -1
    for card in game._table:
        table[card_class(card)] += sign
    escobas = game._escobas[0] - game._escobas[1]
    return [a - b for a, b in zip(*hands, strict=True)] + captured + table + [escobas]


def round_margin(game: Game, rng: random.Random, greedy: bool) -> int:
    """Seat 0's round point margin when ``game`` (changed in place) is played to the round's
    end, uniformly random or, with ``greedy``, by the greedy policy in every seat."""
    before = game._totals[0] - game._totals[1]
    if greedy:
        number = game.round
        while not game.is_over and game.round == number:
            game.apply(greedy_move(game))
    else:
        game.play_random(rng, -1, False)
    totals = game.result.totals if game.is_over else game._totals
    return totals[0] - totals[1] - before


def rollout_margin(game: Game, rng: random.Random, plays: int, greedy: bool = False) -> float:
    """Seat 0's mean round point margin over ``plays`` plays to the round's end
    (``round_margin``), each with the undealt cards shuffled afresh (V of what is known, not
    of the deck order)."""
    position = game._deck_position
    total = 0
    for _ in range(plays):
        copy = game.clone()
        rest = copy._deck[position:]
        rng.shuffle(rest)
        copy._deck = copy._deck[:position] + rest
        total += round_margin(copy, rng, greedy)
    return total / plays


def coupled_corrections(
    ruleset: Ruleset, seed: int, codes: Sequence[int], *, plays: Sequence[int], greedy: bool
) -> list[float]:
    """As ``game_corrections``' rollouts, with the two sides of each term coupled (common
    random numbers): play k draws one random order P of the cards undealt before the event;
    the random outcome is dealt from P, and the actual cards are followed by the rest of the
    cards in P's order, so both rollouts see nearly the same deck (and, for random play, the
    same draws). Each side is still a uniform draw of its own, so every term keeps mean zero."""
    rng = random.Random(f"coupled/{seed}")
    most = max(plays)
    found = [0.0] * len(plays)
    for before, move, after in chance_events(ruleset, seed, codes):
        left = set(after._deck[after._deck_position :])
        position = after._deck_position
        terms = []
        for _ in range(most):
            other = resampled(ruleset, before, move, rng)
            order = other._deck  # P: the sampled round's deck, dealt from the front
            actual = after.clone()
            actual._deck = actual._deck[:position] + [c for c in order if c in left]
            draws = rng.getrandbits(64)
            value = round_margin(actual, random.Random(draws), greedy)
            terms.append(value - round_margin(other, random.Random(draws), greedy))
        for k, m in enumerate(plays):
            found[k] += sum(terms[:m]) / m
    return found


def game_corrections(
    ruleset: Ruleset, seed: int, codes: Sequence[int], *, samples: int, plays: Sequence[int],
    greedy: bool = False,
) -> dict[str, list[float]]:  # fmt: skip
    """Seat 0's summed chance corrections of one game: ``cards`` (``card_features``, its
    expectation from ``samples`` random openings of a round) and, for each m of ``plays``,
    ``rollout`` m (``rollout_margin`` of m plays after the actual cards less one play after
    each of m random deals; the smaller m are prefixes of the largest). The generators are
    seeded by the deal, so the same game always gets the same corrections."""
    rng = random.Random(f"chance/{seed}")
    cards = [0.0] * (3 * CLASSES + 1)
    most = max(plays, default=0)
    rollout = [0.0] * len(plays)
    events = 0
    for before, move, after in chance_events(ruleset, seed, codes):
        events += 1
        actual = card_features(after)
        if before is None or after.round != before.round:  # a round's opening deal
            expected = [0.0] * len(actual)
            for _ in range(samples):
                for k, x in enumerate(card_features(resampled(ruleset, before, move, rng))):
                    expected[k] += x / samples
        else:  # hands drawn alike from the same cards; the rest is what it was
            expected = [0.0] * CLASSES + actual[CLASSES:]
        cards = [c + a - e for c, a, e in zip(cards, actual, expected, strict=True)]
        if most:
            values = [rollout_margin(after, rng, 1, greedy) for _ in range(most)]
            bases = [
                rollout_margin(resampled(ruleset, before, move, rng), rng, 1, greedy)
                for _ in range(most)
            ]
            for k, m in enumerate(plays):
                rollout[k] += (sum(values[:m]) - sum(bases[:m])) / m
    return {"cards": cards, "rollout": rollout, "events": [float(events)]}


# -- the experiment ------------------------------------------------------------------------------

CHANCE_CACHE = Path("artifacts/ranking_quality_chance.jsonl")
GREEDY_CACHE = Path("artifacts/ranking_quality_chance_greedy.jsonl")
GREEDY_ROLLOUTS = (1, 2, 4)  # greedy plays per chance event
COUPLED_CACHE = Path("artifacts/ranking_quality_chance_coupled.jsonl")
LARGE_CACHE = Path("artifacts/ranking_quality_chance_large.jsonl")
LARGE_ROLLOUTS = (8, 16, 32)  # greedy plays per event past the CPU budget (``--chance-large``)
CARD_SAMPLES = 32  # random openings per round for the card features' expectation
ROLLOUTS = (4, 8, 16)  # random plays per chance event (after the actual and random cards)


def played_games(weak: str, strong: str, seed: int) -> Iterator[tuple[list[str], Game, list]]:
    """The pair's two games of deal ``seed`` (each seat order), refereed in-process as
    ``bots_sdk.local`` plays them: (seating, the finished game, its play codes in order)."""
    from bots_sdk.local import referee_game

    for seating in ((strong, weak), (weak, strong)):
        game = referee_game([BOTS[name] for name in seating], seed=seed, game_id=f"{seed}").game
        yield list(seating), game, [code for record in game._rounds for code in record.plays]


def chance_pair_deal(job: tuple[str, str, int]) -> dict:
    """One deal of a named pair, both seat orders, with each game's corrections from the card
    features and the random rollouts (``game_corrections``) and the CPU they took."""
    weak, strong, seed = job
    ruleset = Ruleset.from_preset("classic", {"players": 2})
    games = []
    for seating, game, codes in played_games(weak, strong, seed):
        started = time.process_time()
        cards = game_corrections(ruleset, seed, codes, samples=CARD_SAMPLES, plays=())
        middle = time.process_time()
        rollout = game_corrections(ruleset, seed, codes, samples=0, plays=ROLLOUTS)
        ended = time.process_time()
        result = game.result
        games.append({
            "seating": seating, "winner": result.winner, "totals": result.totals,
            "cards": cards["cards"], "rollout": rollout["rollout"], "events": cards["events"][0],
            "cards_cpu_s": middle - started, "rollout_cpu_s": ended - middle,
        })  # fmt: skip
    return {"pair": [weak, strong], "seed": seed, "games": games}


def greedy_pair_deal(job: tuple[str, str, int]) -> dict:
    """One deal of a named pair, both seat orders: each game's plays and its corrections from
    greedy rollouts (``GREEDY_ROLLOUTS``), with the CPU they took."""
    weak, strong, seed = job
    ruleset = Ruleset.from_preset("classic", {"players": 2})
    games = []
    for seating, game, codes in played_games(weak, strong, seed):
        started = time.process_time()
        found = game_corrections(
            ruleset, seed, codes, samples=0, plays=GREEDY_ROLLOUTS, greedy=True
        )
        games.append({
            "seating": seating, "totals": game.result.totals, "codes": codes,
            "greedy": found["rollout"], "greedy_cpu_s": time.process_time() - started,
        })  # fmt: skip
    return {"pair": [weak, strong], "seed": seed, "games": games}


def timed_coupled(seed: int, codes: list, plays: Sequence[int], greedy: bool) -> tuple:
    """``coupled_corrections`` of one game and the CPU seconds they took."""
    ruleset = Ruleset.from_preset("classic", {"players": 2})
    started = time.process_time()
    found = coupled_corrections(ruleset, seed, codes, plays=plays, greedy=greedy)
    return found, time.process_time() - started


def coupled_deal(item: dict) -> dict:
    """A deal of ``GREEDY_CACHE`` (its games' play codes) with each game's coupled corrections
    (``coupled_corrections``), greedy and random, and the CPU they took."""
    games = []
    for game in item["games"]:
        greedy, greedy_cpu = timed_coupled(item["seed"], game["codes"], GREEDY_ROLLOUTS, True)
        randoms, random_cpu = timed_coupled(item["seed"], game["codes"], ROLLOUTS, False)
        games.append({
            "seating": game["seating"], "totals": game["totals"], "greedy": greedy,
            "random": randoms, "greedy_cpu_s": greedy_cpu, "random_cpu_s": random_cpu,
        })  # fmt: skip
    return {"pair": item["pair"], "seed": item["seed"], "games": games}


def large_deal(item: dict) -> dict:
    """A deal of ``GREEDY_CACHE`` with each game's coupled greedy corrections of
    ``LARGE_ROLLOUTS`` plays (where the variance removed levels off, whatever the CPU)."""
    games = []
    for game in item["games"]:
        greedy, cpu = timed_coupled(item["seed"], game["codes"], LARGE_ROLLOUTS, True)
        games.append({"seating": game["seating"], "greedy": greedy, "greedy_cpu_s": cpu})
    return {"pair": item["pair"], "seed": item["seed"], "games": games}


@dataclass
class ChancePair:
    """One pair's deals for its stronger bot: its score and margin as seat 0 and as seat 1,
    and its controls in each of the two games (``seat0``, ``seat1``: named columns)."""

    name: str
    seeds: list[int]
    scores: np.ndarray  # (deals, 4): s0, p0, s1, p1
    seat0: dict[str, np.ndarray]
    seat1: dict[str, np.ndarray]


def chance_pair(
    items: list[dict], caches: tuple[dict, dict, dict], strong: str, values: dict, name: str
) -> ChancePair:
    from benchmarks.luck import PUBLISHED, seat_controls
    from benchmarks.luck import SCHEMES as DEAL_SCHEMES

    deal_scheme = next(s for s in DEAL_SCHEMES if s.name == PUBLISHED)
    rows, seats = [], ({}, {})
    for item in items:
        by_seat = {g["seating"].index(strong): g for g in item["games"]}
        greedy_by_seat, coupled_by_seat, large_by_seat = (
            {g["seating"].index(strong): g for g in cache[deal_key(item)]["games"]} if cache else {}
            for cache in caches
        )
        row = []
        for seat, columns in zip((0, 1), seats, strict=True):
            game = by_seat[seat]
            won, totals = game["winner"], game["totals"]
            row += [0.5 if won is None else float(won == seat), totals[seat] - totals[1 - seat]]
            sign = 1.0 if seat == 0 else -1.0  # the corrections are seat 0's
            named = {"cards": game["cards"], "hands": game["cards"][:20]}
            named |= {f"rollout {m}": [game["rollout"][k]] for k, m in enumerate(ROLLOUTS)}
            named |= {
                f"greedy {m}": [greedy_by_seat[seat]["greedy"][k]]
                for k, m in enumerate(GREEDY_ROLLOUTS)
            }
            both = coupled_by_seat[seat]
            named |= {
                f"coupled greedy {m}": [both["greedy"][k]] for k, m in enumerate(GREEDY_ROLLOUTS)
            }
            named |= {f"coupled random {m}": [both["random"][k]] for k, m in enumerate(ROLLOUTS)}
            if large_by_seat:
                found = large_by_seat[seat]["greedy"]
                named |= {f"large greedy {m}": [found[k]] for k, m in enumerate(LARGE_ROLLOUTS)}
            named["deal"] = seat_controls(values[item["seed"]], deal_scheme).tolist()
            for key, found in named.items():
                columns.setdefault(key, []).append([sign * x for x in found])
        rows.append(row)
    return ChancePair(
        name, [item["seed"] for item in items], np.array(rows, dtype=float),
        *({k: np.array(v) for k, v in columns.items()} for columns in seats),
    )  # fmt: skip


# (name, control columns, random rollouts, greedy rollouts)
SCHEMES = (
    ("deal-level (published)", ("deal",), 0, 0),
    ("chance: hands", ("hands",), 0, 0),
    ("chance: cards", ("cards",), 0, 0),
    *((f"chance: random x {m}", (f"rollout {m}",), m, 0) for m in ROLLOUTS),
    *((f"chance: greedy x {m}", (f"greedy {m}",), 0, m) for m in GREEDY_ROLLOUTS),
    ("chance: random x 8, greedy x 2", ("rollout 8", "greedy 2"), 8, 2),
    ("chance: random x 16, greedy x 4", ("rollout 16", "greedy 4"), 16, 4),
    ("deal-level + chance: random x 16", ("deal", "rollout 16"), 16, 0),
    ("deal-level + chance: greedy x 2", ("deal", "greedy 2"), 0, 2),
    ("deal-level + chance: greedy x 4", ("deal", "greedy 4"), 0, 4),
    ("deal-level + chance: random x 8, greedy x 2", ("deal", "rollout 8", "greedy 2"), 8, 2),
    ("deal-level + chance: random x 16, greedy x 4", ("deal", "rollout 16", "greedy 4"), 16, 4),
    *((f"coupled: random x {m}", (f"coupled random {m}",), m, 0) for m in ROLLOUTS),
    *((f"coupled: greedy x {m}", (f"coupled greedy {m}",), 0, m) for m in GREEDY_ROLLOUTS),
    ("coupled: random x 8, greedy x 2", ("coupled random 8", "coupled greedy 2"), 8, 2),
    ("deal-level + coupled: greedy x 2", ("deal", "coupled greedy 2"), 0, 2),
    ("deal-level + coupled: greedy x 4", ("deal", "coupled greedy 4"), 0, 4),
    ("deal-level + coupled: random x 8, greedy x 2",
     ("deal", "coupled random 8", "coupled greedy 2"), 8, 2),
    ("deal-level + coupled: random x 16, greedy x 4",
     ("deal", "coupled random 16", "coupled greedy 4"), 16, 4),
)  # fmt: skip
LARGE_SCHEMES = (
    *((f"coupled: greedy x {m}", (f"large greedy {m}",), 0, m) for m in LARGE_ROLLOUTS),
    ("deal-level + coupled: greedy x 32", ("deal", "large greedy 32"), 0, 32),
)


def set_controls(pair: ChancePair, keys, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The fresh sets' (seat 0 on deal i, seat 1 on deal j) controls: both games' summed."""
    return np.hstack([pair.seat0[k][i] + pair.seat1[k][j] for k in keys])


def deal_key(item: tuple | dict) -> tuple:
    """A deal's key in the caches: (weak, strong, seed), from a job or a cached deal."""
    return tuple(item) if isinstance(item, tuple) else (*item["pair"], item["seed"])


def totals_of(item: dict) -> list:
    return [game["totals"] for game in item["games"]]


def fit_betas(y: np.ndarray, c: np.ndarray) -> np.ndarray:
    design = np.c_[c, np.ones(len(c))]
    return np.linalg.lstsq(design, y, rcond=None)[0][:-1]


def chance(args: argparse.Namespace) -> None:
    from benchmarks.luck import CONTROLS_CACHE, PAIRS, deal_plays, draws, separation, set_score
    from games.ratings.baseline import pair_weight

    n = args.chance_deals
    jobs = [(w, s, 3_000_000 + 10_000 * k + i) for i in range(n) for k, (w, s) in enumerate(PAIRS)]
    key = deal_key
    played = cached_map(CHANCE_CACHE, jobs, chance_pair_deal, key, args.processes)
    greedy = cached_map(GREEDY_CACHE, jobs, greedy_pair_deal, key, args.processes)
    coupled = cached_map(
        COUPLED_CACHE, [greedy[key(job)] for job in jobs], coupled_deal, key, args.processes
    )
    large = {}
    schemes = SCHEMES
    if args.chance_large:
        large = cached_map(
            LARGE_CACHE, [greedy[key(job)] for job in jobs], large_deal, key, args.processes
        )
        schemes = (*SCHEMES[:1], *SCHEMES[-9:], *LARGE_SCHEMES)
    seeds = sorted({job[2] for job in jobs})
    values = cached_map(
        args.values or CONTROLS_CACHE, seeds, deal_plays,
        lambda i: i if isinstance(i, int) else i["seed"], args.processes,
    )  # fmt: skip
    games = [g for item in played.values() for g in item["games"]]
    cards_ms = 1000 * float(np.median([g["cards_cpu_s"] for g in games]))
    rollout_ms = 1000 * float(np.median([g["rollout_cpu_s"] for g in games]))
    greedy_ms = 1000 * float(
        np.median([g["greedy_cpu_s"] for item in greedy.values() for g in item["games"]])
    )
    deal_ms = 1000 * float(np.median([v["greedy_cpu_s"] + 16 * v["random_cpu_s"]
                                      for v in values.values()]))  # fmt: skip
    events = float(np.mean([g["events"] for g in games]))
    print(f"{n} deals per pair ({4 * n} games), {events:.1f} chance events per game; CPU per "
          f"rated game (one core, median): card features {cards_ms:.1f} ms, rollouts x "
          f"{max(ROLLOUTS)} {rollout_ms:.1f} ms, greedy rollouts x {max(GREEDY_ROLLOUTS)} "
          f"{greedy_ms:.1f} ms, deal-level baseline {deal_ms:.1f} ms "
          f"(load {os.getloadavg()[0]:.0f})")  # fmt: skip

    coupled_ms = {
        kind: 1000 * float(np.median([g[f"{kind}_cpu_s"] for item in coupled.values()
                                      for g in item["games"]]))
        for kind in ("random", "greedy")
    }  # fmt: skip

    large_ms = 1000 * float(
        np.median([g["greedy_cpu_s"] for item in large.values() for g in item["games"]] or [0])
    )

    def cpu(keys, rollouts, greedy_rollouts) -> float:
        found = cards_ms if any(k in ("cards", "hands") for k in keys) else 0.0
        if any(k.startswith("large") for k in keys):
            found += large_ms * greedy_rollouts / max(LARGE_ROLLOUTS)
            return found + (deal_ms if "deal" in keys else 0.0)
        if any(k.startswith("coupled") for k in keys):
            found += coupled_ms["random"] * rollouts / max(ROLLOUTS)
            return (
                found
                + coupled_ms["greedy"] * greedy_rollouts / max(GREEDY_ROLLOUTS)
                + (deal_ms if "deal" in keys else 0.0)
            )
        found += rollout_ms * rollouts / max(ROLLOUTS)
        found += greedy_ms * greedy_rollouts / max(GREEDY_ROLLOUTS)
        return found + (deal_ms if "deal" in keys else 0.0)  # each rated game its own deal

    rng = np.random.default_rng(2026)
    pairs = []
    dropped = 0
    for weak, strong in PAIRS:
        items = [played[(weak, strong, j[2])] for j in jobs if (j[0], j[1]) == (weak, strong)]
        # a move past the time limit on the loaded machine (the fallback move) can make the two
        # runs' games differ: such deals are left out
        same = [item for item in items if totals_of(item) == totals_of(greedy[deal_key(item)])]
        dropped += len(items) - len(same)
        items = same
        name = f"{strong} over {weak}"
        pairs.append(chance_pair(items, (greedy, coupled, large), strong, values, name))
    print(f"{dropped} deals left out (a game differed between the two runs: a fallback move)")
    units: dict[str, list] = {"fresh, raw": [], "duplicate": []}
    removed: dict[str, list[str]] = {scheme[0]: [] for scheme in schemes}
    bias: dict[str, list[str]] = {scheme[0]: [] for scheme in schemes}
    for pair in pairs:
        m = len(pair.seeds)
        half = m // 2
        fit, held = np.arange(half), np.arange(half, m)
        s = pair.scores

        def fresh(i, j, s=s):
            return set_score(s[i, 0], s[i, 1], s[j, 2], s[j, 3])

        fi, fj = draws(rng, half, 20_000)
        p = float(fresh(fit[fi], fit[fj]).mean())
        i, j = (held[x] for x in draws(rng, m - half, args.chance_sets))
        raw = fresh(i, j)
        units["fresh, raw"].append((raw, float(raw.std())))
        dup = set_score(s[held, 0], s[held, 1], s[held, 2], s[held, 3])
        units["duplicate"].append((dup, float(dup.std())))
        k = held[np.arange(0, m - half - 1, 2)]  # independent sets for the bias check
        for name, keys, *_ in schemes:
            fitted = set_controls(pair, keys, fit[fi], fit[fj]) * pair_weight(p)
            betas = fit_betas(fresh(fit[fi], fit[fj]), fitted)
            corrected = raw - set_controls(pair, keys, i, j) * pair_weight(p) @ betas
            units.setdefault(name, []).append((corrected, float(corrected.std())))
            removed[name].append(f"{1 - corrected.var() / raw.var():14.1%}")
            shift = -(set_controls(pair, keys, k, k + 1) * pair_weight(p)) @ betas
            interval = 1.96 * shift.std(ddof=1) / math.sqrt(len(k))
            within = "within" if abs(shift.mean()) <= interval else "OUTSIDE"
            bias[name].append(f"{shift.mean():+.4f} ± {interval:.4f} {within}")
    dup = [f"{1 - d[1] ** 2 / r[1] ** 2:.1%}"
           for d, r in zip(units["duplicate"], units["fresh, raw"], strict=True)]  # fmt: skip
    print(
        f"\nfresh sets of the evaluation half: variance removed (duplicate sets: "
        f"{', '.join(dup)}), CPU per rated game, bias (corrected - raw)"
    )
    print(f"{'scheme':46} {'CPU/game':>9}  " + "  ".join(f"{p.name:>14}" for p in pairs)
          + "  bias per pair")  # fmt: skip
    for name, keys, *rollouts in schemes:
        print(f"{name:46} {cpu(keys, *rollouts):6.1f} ms  " + "  ".join(removed[name])
              + "  " + "; ".join(bias[name]), flush=True)  # fmt: skip
    separation(units, args.leagues, rng)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--chance-deals", type=int, default=0, help="Chance corrections: deals per pair."
    )
    parser.add_argument(
        "--chance-large", action="store_true", help="Also greedy x 8, 16, 32 (past the budget)."
    )
    parser.add_argument(
        "--chance-sets", type=int, default=100_000, help="Fresh sets drawn per pair."
    )
