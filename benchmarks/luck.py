"""The luck of fresh deals: duplicate deals against fresh deals corrected by the baseline.

    .venv/bin/python -m benchmarks.ranking_quality luck [--deals 2000] [--pool-deals 60]

Rated sets are dealt afresh (no bot sees a deal twice) and the luck of the cards is taken out by
the baseline correction (``games.ratings.baseline``, docs/ratings.md). For the neighbouring pairs
random-greedy and greedy-expert, ``--deals`` deals are played in both seat orders in-process
(``bots_sdk.local.play_game``), and every deal is played by the baseline's policies: the greedy
play, random plays and lopsided plays (one team greedy, the others random), kept so any smaller
number of plays is a prefix, and the expert's self-play (``games.expert``, one game). From them:

- a **duplicate** set is the two games of one deal, scored as the arena scores a duplicate set
  (``games.ratings.sets.set_pair_scores``: games won, a split set leaning by points); a
  **fresh** set the stronger bot's seat-0 game of one deal with its seat-1 game of another
  (independent deals, seats rotated, as rated play deals them), scored as the arena scores a
  rated set (``fresh_set_pair_scores``: by game points); **fresh + baseline** is that score
  less the pair's weighted controls times the coefficients of its band, and **fresh +
  baseline, by games** the same with fresh sets scored as duplicate sets are (the coefficients
  fitted for that score), to show what scoring by points buys (and **duplicate, by points**
  the duplicate sets scored by points, to show why they keep their own rule); a scheme's
  **even terms** are its controls' squares (how swingy the deal is), less their mean over the
  fit half's deals (frozen, as the service freezes it per pool and period), weighted by the
  pair's expected edge (``games.ratings.baseline.edge_weight``), not by ``pair_weight``;
- the coefficients (``beta_fit``, per band) and each pair's weight are fitted on the first half
  of the deals and used, frozen, on the second half: per baseline scheme the share of a fresh
  set's variance removed, its CPU per rated game, and the bias check (mean corrected minus raw
  within its interval);
- games per pair for leagues to separate random < greedy < expert at 95 % (a z test per pair),
  fresh sets being drawn as independent pairs of deals, and the same to a finer grain than whole
  sets: the sets a pair needs by the normal approximation, ((1.960 + 1.645) sd / (mean - 1/2))^2;
- with ``--pool-deals``, Kendall's tau of the eight noisy experts of ``known_order`` per design.

With ``--chance-deals N`` it measures instead the measured candidate of ``benchmarks.luck_chance``:
corrections at the chance events of the game actually played (AIVAT-style), alone and beside
the deal-level controls, on N deals per pair.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks import luck_chance
from benchmarks.known_order import (
    BOTS,
    CONFIDENCE,
    EPSILONS,
    METHOD_BUDGETS,
    TAU_GOAL,
    cached_map,
    fit_order,
    kendall_tau,
    noisy_expert,
)
from bots_sdk.local import play_game
from games.ratings.sets import SET_MARGIN

LUCK_CACHE = Path("artifacts/ranking_quality_luck.jsonl")
CONTROLS_CACHE = Path("artifacts/ranking_quality_controls.jsonl")
POOL_CACHE = Path("artifacts/ranking_quality_pool.jsonl")
DESIGNS = ("fresh, raw", "duplicate", "fresh + baseline")
BY_GAMES = "fresh + baseline, by games"
DUPLICATE_BY_POINTS = "duplicate, by points"
RANDOM_PLAYS = 32  # random plays kept per deal
MIXED_PLAYS = 8  # lopsided plays kept per deal and greedy team
PAIRS = [("random", "greedy"), ("greedy", "expert")]
BUDGETS = list(range(2, 62, 2))


def play_pair_deal(job: tuple[str, str, int]) -> dict:
    """One deal of a named pair, both seat orders (two games on the one seed)."""
    weak, strong, seed = job
    games = []
    for seating in ((strong, weak), (weak, strong)):
        result = play_game([BOTS[name] for name in seating], seed=seed, game_id=f"{seed}")
        games.append({"seating": list(seating), "winner": result.winner, "totals": result.totals})
    return {"pair": [weak, strong], "seed": seed, "games": games}


def noisy_pair_deal(job: tuple[int, int, int]) -> dict:
    """One deal between noisy experts ``first`` and ``second`` (indexes of ``EPSILONS``), both
    seat orders."""
    first, second, seed = job
    bots = {i: noisy_expert(EPSILONS[i]) for i in (first, second)}
    games = []
    for k, seating in enumerate(((first, second), (second, first))):
        result = play_game([bots[i] for i in seating], seed=seed, game_id=f"{seed}-{k}")
        games.append({"seating": list(seating), "winner": result.winner, "totals": result.totals})
    return {"pair": [first, second], "seed": seed, "games": games}


def mixed_totals(ruleset, seed: int, greedy_team: int, plays: int) -> list[list[int]]:
    """The game points per team of ``plays`` lopsided plays of deal ``seed``: team
    ``greedy_team`` plays the baseline's greedy policy, every other seat uniformly random legal
    moves (as a strong bot against a weak one). A candidate control the benchmark measures; the
    service does not use it (it removed no more variance per CPU second)."""
    from games.engine import Game
    from games.ratings.baseline import greedy_move

    found = []
    for k in range(plays):
        game = Game.new(ruleset, seed)
        rng = random.Random(f"baseline/{seed}/mixed/{greedy_team}/{k}")
        while not game.is_over:
            if ruleset.team_of(game.current_seat) == greedy_team:
                game.apply(greedy_move(game))
            else:
                game.play_random(rng, 1, True)
        found.append(list(game.result.totals))
    return found


def deal_plays(seed: int) -> dict:
    """The baseline's plays of one two-player classic deal (``games.ratings.baseline``): the
    greedy play, ``RANDOM_PLAYS`` random plays and ``MIXED_PLAYS`` lopsided plays per greedy
    team, each play's totals, with the CPU each kind took."""
    from games.engine import Ruleset
    from games.expert import expert_totals
    from games.ratings.baseline import greedy_totals, random_totals

    ruleset = Ruleset.from_preset("classic", {"players": 2})
    clock = [time.process_time()]

    def lap() -> float:
        clock.append(time.process_time())
        return clock[-1] - clock[-2]

    greedy = greedy_totals(ruleset, seed)
    greedy_cpu = lap()
    expert = expert_totals(ruleset, seed)
    expert_cpu = lap()
    randoms = random_totals(ruleset, seed, RANDOM_PLAYS)
    random_cpu = lap()
    mixed = [mixed_totals(ruleset, seed, team, MIXED_PLAYS) for team in range(2)]
    mixed_cpu = lap()
    return {
        "seed": seed,
        "greedy": greedy,
        "expert": expert,
        "random": randoms,
        "mixed": mixed,
        "greedy_cpu_s": greedy_cpu,
        "expert_cpu_s": expert_cpu,
        "random_cpu_s": random_cpu / RANDOM_PLAYS,
        "mixed_cpu_s": mixed_cpu / (2 * MIXED_PLAYS),
    }


def generate(args: argparse.Namespace) -> tuple[dict, dict, list]:
    """Play (or load) the pairs' deals and the baseline's plays of each."""
    jobs = [(w, s, 3_000_000 + 10_000 * k + n) for k, (w, s) in enumerate(PAIRS)
            for n in range(args.deals)]  # fmt: skip
    played = cached_map(
        args.cache, jobs, play_pair_deal, lambda i: (i[0], i[1], i[2]) if isinstance(i, tuple)
        else (*i["pair"], i["seed"]), args.processes,
    )  # fmt: skip
    seeds = sorted({job[2] for job in jobs})
    if args.pool_deals:
        n_bots = len(EPSILONS)
        pool_jobs = [(a, b, 5_000_000 + 1_000 * (a * n_bots + b) + n)
                     for a, b in itertools.combinations(range(n_bots), 2)
                     for n in range(args.pool_deals)]  # fmt: skip
        played |= cached_map(
            args.pool_cache, pool_jobs, noisy_pair_deal,
            lambda i: tuple(i) if isinstance(i, tuple) else (*i["pair"], i["seed"]),
            args.processes,
        )  # fmt: skip
        seeds += [j[2] for j in pool_jobs]
    values = cached_map(
        args.values, seeds, deal_plays, lambda i: i if isinstance(i, int) else i["seed"],
        args.processes,
    )  # fmt: skip
    return played, values, jobs


# -- the controls of each deal, and the fresh and duplicate sets of each pair -------------------


@dataclass(frozen=True)
class Scheme:
    """A baseline: how many random and lopsided plays, which controls (each a sum of the
    names ``greedy``, ``random``, ``lopsided``, ``expert``, one coefficient each), and which of
    the named controls also enter squared (``even``: one coefficient each)."""

    name: str
    random_plays: int
    lopsided_plays: int
    controls: tuple[tuple[str, ...], ...]
    greedy: bool = True
    even: tuple[str, ...] = ()

    def cpu_ms(self, cpu: dict[str, float]) -> float:
        """CPU per rated game of this baseline (two teams), from the measured CPU per play."""
        return 1000 * (
            cpu["greedy"] * self.greedy
            + cpu["random"] * self.random_plays
            + 2 * cpu["mixed"] * self.lopsided_plays
            + cpu["expert"] * self.uses("expert")
        )

    def uses(self, name: str) -> bool:
        return any(name in control for control in self.controls) or name in self.even


def seat_controls(item: dict, scheme: Scheme) -> np.ndarray:
    """Seat 0's controls of a deal under ``scheme`` (``games.ratings.baseline.deal_controls``
    on the first plays of each kind), then its even terms, not yet less their mean."""
    named = named_controls(item, scheme)
    odd = [sum(named[n] for n in control) for control in scheme.controls]
    return np.array(odd + [named[n] ** 2 for n in scheme.even])


def named_controls(item: dict, scheme: Scheme) -> dict[str, float]:
    """Seat 0's value of a deal under each named control."""
    from games.ratings.baseline import deal_controls

    values = deal_controls(
        item["greedy"], item["random"][: max(1, scheme.random_plays)], item["expert"]
    )
    named = dict(zip(("greedy", "random", "expert"), values[0], strict=True))
    # the lopsided control: seat 0's centred points over both greedy seats' lopsided plays
    lopsided = [row for plays in item["mixed"] for row in plays[: max(1, scheme.lopsided_plays)]]
    named["lopsided"] = sum((a - b) / 2 for a, b in lopsided) / len(lopsided)
    if not scheme.greedy:
        named["greedy"] = 0.0
    return named


def fresh_controls(x: np.ndarray, scheme: Scheme, means: np.ndarray, i, j, p: float) -> np.ndarray:
    """The controls of the fresh sets (i, j) for the stronger bot expected to score ``p``: the
    odd ones seat 0's value of deal i less deal j's, weighted by ``pair_weight``; the even ones
    the mean of the two deals' squares less their frozen ``means``, weighted by the edge."""
    from games.ratings.baseline import edge_weight, pair_weight

    odd = len(scheme.controls)
    front = (x[i, :odd] - x[j, :odd]) * pair_weight(p)
    back = ((x[i, odd:] - means) + (x[j, odd:] - means)) / 2 * edge_weight(p)
    return np.c_[front, back]


@dataclass
class PairDeals:
    """One pair's deals, for its stronger bot: its score and point margin in the game where it
    sat first (``s0``, ``p0``) and second (``s1``, ``p1``), and seat 0's controls."""

    name: str
    s0: np.ndarray
    p0: np.ndarray
    s1: np.ndarray
    p1: np.ndarray
    seeds: list[int]

    def part(self, rows: slice) -> PairDeals:
        return PairDeals(
            self.name, self.s0[rows], self.p0[rows], self.s1[rows], self.p1[rows],
            self.seeds[rows],
        )  # fmt: skip

    def duplicate(self) -> np.ndarray:
        return games_score(self.s0, self.p0, self.s1, self.p1)

    def fresh(self, i: np.ndarray, j: np.ndarray, score=None) -> np.ndarray:
        """The fresh sets of the deal pairs (i, j): seat 0 on deal i, seat 1 on deal j, scored
        as rated sets are (``set_score``) unless another ``score`` is given."""
        return (score or set_score)(self.s0[i], self.p0[i], self.s1[j], self.p1[j])


def set_score(s0, p0, s1, p1) -> np.ndarray:
    """The arena's score of a rated two-game set (``games.ratings.sets.fresh_set_pair_scores``,
    vectorised): 1/2 plus the game-point margin over the set, in whole twelfths."""
    margin = np.asarray(p0 + p1)
    scale = 2 * SET_MARGIN  # two games
    twelfths = np.minimum(6, (12 * np.abs(margin) + scale) // (2 * scale))
    return (6 + np.sign(margin) * twelfths) / 12


def games_score(s0, p0, s1, p1) -> np.ndarray:
    """The arena's score of a duplicate two-game set (``games.ratings.sets.set_pair_scores``):
    the share of games won, a level share leaning a quarter to the side with more game points
    over the set."""
    share = (s0 + s1) / 2
    points = p0 + p1
    lean = np.where(points > 0, 0.75, np.where(points < 0, 0.25, 0.5))
    return np.where(share == 0.5, lean, share)


def pair_deals(played: dict, strong_first: list[dict], name: str, strong) -> PairDeals:
    """The pair's deals from their two games (``strong`` the stronger bot's name or index)."""
    rows = []
    for deal in strong_first:
        by_seat = {tuple(g["seating"]).index(strong): g for g in deal["games"]}
        scores = []
        for seat in (0, 1):
            game = by_seat[seat]
            won = game["winner"]
            totals = game["totals"]
            scores += [0.5 if won is None else float(won == seat), totals[seat] - totals[1 - seat]]
        rows.append(scores)
    data = np.array(rows, dtype=float)
    seeds = [deal["seed"] for deal in strong_first]
    return PairDeals(name, data[:, 0], data[:, 1], data[:, 2], data[:, 3], seeds)


def draws(rng: np.random.Generator, n: int, size) -> tuple[np.ndarray, np.ndarray]:
    """Independent deal pairs (i, j), i != j, of ``n`` deals: fresh sets as rated play deals
    them (each game its own deal)."""
    i = rng.integers(0, n, size)
    j = (i + rng.integers(1, n, size)) % n
    return i, j


# -- the experiment -------------------------------------------------------------------------------

ODD = (("greedy",), ("random",), ("expert",))  # the service's candidate controls
SCHEMES = (
    Scheme("random x 16", 16, 0, (("random",),), greedy=False),
    Scheme("greedy", 0, 0, (("greedy",),)),
    Scheme("greedy + random x 16, one beta (before)", 16, 0, (("greedy", "random"),)),
    Scheme("greedy, random x 16, two betas", 16, 0, (("greedy",), ("random",))),
    Scheme("greedy, random x 32, two betas", 32, 0, (("greedy",), ("random",))),
    Scheme("lopsided x 2", 0, 2, (("lopsided",),), greedy=False),
    Scheme("greedy, lopsided x 2", 0, 2, (("greedy",), ("lopsided",))),
    Scheme("greedy, lopsided x 4", 0, 4, (("greedy",), ("lopsided",))),
    Scheme("greedy, random x 8, lopsided x 2", 8, 2, (("greedy",), ("random",), ("lopsided",))),
    Scheme("greedy, random x 16, lopsided x 4", 16, 4, (("greedy",), ("random",), ("lopsided",))),
    Scheme("greedy, random x 32, lopsided x 8", 32, 8, (("greedy",), ("random",), ("lopsided",))),
    Scheme("expert", 0, 0, (("expert",),), greedy=False),
    Scheme("greedy, random x 16, even", 16, 0, ODD[:2], even=("greedy", "random")),
    Scheme("greedy, random x 16, expert", 16, 0, ODD),
    Scheme("greedy, expert, even", 0, 0, (("greedy",), ("expert",)), even=("greedy", "expert")),
    Scheme("greedy, random x 8, expert, even", 8, 0, ODD, even=("greedy", "random", "expert")),
    Scheme(
        "greedy, random x 16, expert, even (published)",
        16,
        0,
        ODD,
        even=("greedy", "random", "expert"),
    ),
)


PUBLISHED = SCHEMES[-1].name  # games.ratings.baseline's CONTROLS, EVEN and DEFAULT_PLAYS


def least_squares(scores: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """The coefficients of ``scores`` on ``controls`` (rows), with an intercept (numpy: the
    exploratory table; the chosen scheme is fitted by the service's ``beta_fit``)."""
    design = np.c_[controls, np.ones(len(controls))]
    return np.linalg.lstsq(design, scores, rcond=None)[0][:-1]


def luck(args: argparse.Namespace) -> None:
    from games.ratings.baseline import BetaFit, beta_fit, pair_band

    if args.chance_deals:
        return luck_chance.chance(args)
    global SET_MARGIN  # noqa: PLW0603 - the one knob set_score reads, set once per run
    SET_MARGIN = args.set_margin or SET_MARGIN
    started = time.perf_counter()
    played, values, jobs = generate(args)
    elapsed = time.perf_counter() - started
    print(f"{2 * len(jobs)} games, {len(values)} deals valued; {elapsed:.0f} s")
    cpu = {k: float(np.median([v[f"{k}_cpu_s"] for v in values.values()]))
           for k in ("greedy", "random", "mixed", "expert")}  # fmt: skip
    print("baseline CPU per play (one core, median): " + ", ".join(
        f"{k} {1000 * v:.3f} ms" for k, v in cpu.items()))  # fmt: skip
    rng = np.random.default_rng(2026)
    pairs = []
    for weak, strong in PAIRS:
        deals = [played[(weak, strong, j[2])] for j in jobs if (j[0], j[1]) == (weak, strong)]
        pairs.append(pair_deals(played, deals, f"{strong} over {weak}", strong))
    half = args.deals // 2
    fits = [p.part(slice(0, half)) for p in pairs]
    evals = [p.part(slice(half, None)) for p in pairs]
    # the pair's weight and band come from its mean score on the fit half ("before the set")
    expected = [float(f.fresh(*draws(rng, half, 50_000)).mean()) for f in fits]

    def controls(deals: PairDeals, scheme: Scheme) -> np.ndarray:
        return np.array([seat_controls(values[s], scheme) for s in deals.seeds])

    def frozen_means(scheme: Scheme) -> np.ndarray:
        """The even terms' means over the fit half's deals (both pairs'), frozen."""
        found = np.concatenate([controls(deals, scheme) for deals in fits])
        return found[:, len(scheme.controls) :].mean(axis=0)

    print("\nshare of a fresh set's score variance removed (fitted and measured on the fit half):")
    print(f"{'baseline':46} {'CPU/game':>9}  " + "  ".join(f"{p.name:>18}" for p in pairs))
    for scheme in SCHEMES:
        cells = []
        for deals, p in zip(fits, expected, strict=True):
            x = controls(deals, scheme)
            i, j = draws(rng, half, 200_000)
            y, c = deals.fresh(i, j), fresh_controls(x, scheme, frozen_means(scheme), i, j, p)
            corrected = y - c @ least_squares(y, c)
            cells.append(f"{1 - corrected.var() / y.var():18.1%}")
        print(f"{scheme.name:46} {scheme.cpu_ms(cpu):6.2f} ms  " + "  ".join(cells), flush=True)

    scheme = next(s for s in SCHEMES if s.name == args.scheme)
    means = frozen_means(scheme)
    print(f"\nchosen: {scheme.name}, {scheme.cpu_ms(cpu):.2f} ms of CPU per rated game")

    def band_fits(score, expected_scores: list[float]) -> dict[int, BetaFit]:
        """The coefficients per band for fresh sets scored by ``score``, on the fit half."""
        bands: dict[int, list] = {}
        for deals, p in zip(fits, expected_scores, strict=True):
            x = controls(deals, scheme)
            i, j = draws(rng, half, args.fit_sets)
            c = fresh_controls(x, scheme, means, i, j, p)
            rows = zip(deals.fresh(i, j, score), c.tolist(), strict=True)
            bands.setdefault(pair_band(p), []).extend(rows)
        zero = (0.0,) * (len(scheme.controls) + len(scheme.even))
        return {band: beta_fit(rows, zero) for band, rows in bands.items()}

    fitted = band_fits(set_score, expected)
    for band, fit in sorted(fitted.items()):
        print(f"  band {band}: betas {np.round(fit.betas, 5).tolist()} on {fit.samples} sets "
              f"({fit.variance_removed:.1%} removed)")  # fmt: skip
    if scheme.even:
        print(f"  even terms' frozen means: {np.round(means, 4).tolist()}")
    expected_by_games = [
        float(f.fresh(*draws(rng, half, 50_000), games_score).mean()) for f in fits
    ]
    fitted_by_games = band_fits(games_score, expected_by_games)

    designs = (*DESIGNS, BY_GAMES, DUPLICATE_BY_POINTS)
    units: dict[str, list[tuple[np.ndarray, float]]] = {d: [] for d in designs}
    print("\nevaluation half, the stronger bot's score:")
    for deals, p, p_games in zip(evals, expected, expected_by_games, strict=True):
        x = controls(deals, scheme)
        n = len(deals.seeds)
        betas = np.array(fitted[pair_band(p)].betas)
        i, j = draws(rng, n, 400_000)
        raw = deals.fresh(i, j)
        by_games = deals.fresh(i, j, games_score)
        found = {
            "fresh, raw": raw,
            "duplicate": deals.duplicate(),
            "fresh + baseline": raw - fresh_controls(x, scheme, means, i, j, p) @ betas,
            BY_GAMES: by_games
            - fresh_controls(x, scheme, means, i, j, p_games)
            @ np.array(fitted_by_games[pair_band(p_games)].betas),
            DUPLICATE_BY_POINTS: set_score(deals.s0, deals.p0, deals.s1, deals.p1),
        }
        sds = {design: float(v.std()) for design, v in found.items()}
        # the bias check on independent sets: deal k's first game with deal k + 1's second
        k = np.arange(0, n - 1, 2)
        own = deals.fresh(k, k + 1)
        shift = -fresh_controls(x, scheme, means, k, k + 1, p) @ betas
        interval = 1.96 * shift.std(ddof=1) / math.sqrt(len(k))
        raw_interval = 1.96 * own.std(ddof=1) / math.sqrt(len(k))
        within = "within" if abs(shift.mean()) <= interval else "OUTSIDE"
        print(f"  {deals.name}: raw {own.mean():.3f} ± {raw_interval:.3f}; corrected - raw "
              f"{shift.mean():+.4f} ± {interval:.4f} ({within} its interval); variance per set: "
              + ", ".join(f"{d} {sds[d] ** 2:.4f}" for d in found)
              + "; mean over sd: " + ", ".join(
                  f"{d} {(v.mean() - 0.5) / sds[d]:.3f}" for d, v in found.items()))  # fmt: skip
        if scheme.even:  # over every pair of these deals the odd controls' mean is 0 exactly
            from games.ratings.baseline import edge_weight

            odd = len(scheme.controls)
            drift = (x[:, odd:].mean(axis=0) - means) * edge_weight(p)
            print(f"    the frozen means' miss on these deals moves it by "
                  f"{-drift @ betas[odd:]:+.4f}")  # fmt: skip
        for design in units:
            units[design].append((found[design], sds[design]))
    separation(units, args.leagues, rng)
    if args.pool_deals:
        pool_tau(args, played, values, scheme, fitted, means)


def separation(units: dict, leagues: int, rng: np.random.Generator) -> None:
    """Games per pair for ``leagues`` random leagues to separate every pair at 95 %: a z test of
    the pair's mean set score against 1/2 with the design's standard deviation for the pair."""
    needed: dict[str, int | None] = dict.fromkeys(units)
    print(f"\nleagues separating random < greedy < expert at {CONFIDENCE:.0%} (z test):")
    print("games/pair  " + "  ".join(f"{d[-18:]:>18}" for d in units))
    for games in BUDGETS:
        sets = games // 2
        cells = []
        for design, pools in units.items():
            hits = np.ones(leagues, dtype=bool)
            for scores, sd in pools:
                means = scores[rng.integers(0, len(scores), (leagues, sets))].mean(axis=1)
                if sd > 0:
                    hits &= (means - 0.5) / (sd / math.sqrt(sets)) > 1.959963984540054
                else:  # every set scores the same
                    hits &= means > 0.5
            power = float(hits.mean())
            if needed[design] is None and power >= CONFIDENCE:
                needed[design] = games
            cells.append(f"{power:18.1%}")
        print(f"{games:10}  " + "  ".join(cells), flush=True)
        if all(needed.values()):
            break
    for design, games in needed.items():
        print(f"{design}: {games or 'more than tried'} games per pair")
    base = needed["duplicate"]
    for design in units:
        if design != "duplicate" and base and needed[design]:
            print(f"{design} / duplicate: {needed[design] / base:.2f}")
    # the same to a finer grain than whole sets: the normal approximation per pair, the worst pair
    fine = {
        design: max(2 * ((1.959963984540054 + 1.6448536269514722) * sd / (scores.mean() - 0.5))
                    ** 2 for scores, sd in pools)
        for design, pools in units.items()
    }  # fmt: skip
    print("games per pair by the normal approximation (2 sets of ((1.960 + 1.645) sd / "
          "(mean - 1/2))^2, the pair needing most): " + ", ".join(
              f"{d} {g:.2f} ({g / fine['duplicate']:.2f}x)" for d, g in fine.items()))  # fmt: skip


def pool_tau(
    args: argparse.Namespace, played: dict, values: dict, scheme: Scheme, fitted, means
) -> None:
    """Kendall's tau of the eight noisy experts of ``known_order`` under each design (fit per
    set): the share of leagues with tau >= 0.9, and the games per pair for 95 % of them."""
    from games.ratings.baseline import pair_band

    n_bots = len(EPSILONS)
    rng = np.random.default_rng(7)
    pools = {}
    for a, b in itertools.combinations(range(n_bots), 2):  # a is the stronger (smaller epsilon)
        deals = [played[(a, b, 5_000_000 + 1_000 * (a * n_bots + b) + n)]
                 for n in range(args.pool_deals)]  # fmt: skip
        pair = pair_deals(played, deals, f"{a} over {b}", a)
        x = np.array([seat_controls(values[s], scheme) for s in pair.seeds])
        i, j = draws(rng, len(deals), 20_000)
        raw = pair.fresh(i, j)
        p = float(raw.mean())
        betas = np.array(fitted[min(pair_band(p), max(fitted))].betas)
        corrected = raw - fresh_controls(x, scheme, means, i, j, p) @ betas
        pools[(a, b)] = {"fresh, raw": raw, "duplicate": pair.duplicate(),
                         "fresh + baseline": corrected}  # fmt: skip
    needed = dict.fromkeys(DESIGNS)
    print(f"\n8-bot pool: share of {args.pool_leagues} leagues with tau >= {TAU_GOAL}, fit per set")
    print("games/pair  " + "  ".join(f"{d:>16}" for d in DESIGNS))
    firsts_one = np.array([a for a, _ in pools])
    seconds_one = np.array([b for _, b in pools])
    for games in METHOD_BUDGETS:
        if games > args.max_games:
            break
        sets = max(1, games // 2)
        firsts, seconds = np.repeat(firsts_one, sets), np.repeat(seconds_one, sets)
        cells = []
        for design in DESIGNS:
            good = 0
            for _ in range(args.pool_leagues):
                scores = np.concatenate(
                    [found[design][rng.integers(0, len(found[design]), sets)]
                     for found in pools.values()]
                )  # fmt: skip
                ratings = fit_order(firsts, seconds, scores, n_bots)
                good += kendall_tau(list(ratings)) >= TAU_GOAL
            share = good / args.pool_leagues
            cells.append(f"{share:16.1%}")
            if needed[design] is None and share >= CONFIDENCE:
                needed[design] = games
        print(f"{games:10}  " + "  ".join(cells), flush=True)
        if all(needed.values()):
            break
    for design in DESIGNS:
        print(f"{design}: tau >= {TAU_GOAL} in 95 % of leagues at {needed[design]} games per pair")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``luck`` command's options (``benchmarks.ranking_quality``)."""
    parser.add_argument("--deals", type=int, default=2000, help="Deals per pair (both seats).")
    parser.add_argument("--leagues", type=int, default=4000, help="Random leagues per budget.")
    parser.add_argument("--fit-sets", type=int, default=20_000, help="Sets the betas fit on.")
    parser.add_argument("--scheme", default=PUBLISHED, help="The baseline judged.")
    parser.add_argument(
        "--set-margin", type=int, help="Points a game that take a whole set (SET_MARGIN)."
    )
    parser.add_argument("--pool-deals", type=int, default=0, help="8-bot pool: deals per pair.")
    parser.add_argument("--pool-leagues", type=int, default=500, help="8-bot pool leagues.")
    parser.add_argument("--max-games", type=int, default=40, help="Largest games per pair tried.")
    parser.add_argument("--cache", type=Path, default=LUCK_CACHE)
    parser.add_argument("--values", type=Path, default=CONTROLS_CACHE)
    parser.add_argument("--pool-cache", type=Path, default=POOL_CACHE)
    luck_chance.add_arguments(parser)
