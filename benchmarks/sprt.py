"""Does the version tests' SPRT keep its promises? Error rates against simulated known Elo.

    .venv/bin/python benchmarks/sprt.py [--tests 1000] [--elo0 0] [--elo1 50] [--alpha 0.05]
                                        [--beta 0.05] [--seed 1]

Each simulated test draws duplicate-set outcomes (candidate's score 0, ¼, ½, ¾, 1) from a
pentanomial distribution whose mean is exactly the expected score of a known Elo advantage, and
runs ``tournaments.sprt.decide`` after every set, as the service does, until it decides (no
``max_sets``). Two shapes of distribution: "split" (most sets ½: the duplicate deal cancels the
luck, as between bots of similar strength) and "decisive" (many sets 0 or 1). The shape at
0 Elo is tilted to the wanted mean by the same maximum-likelihood tilt the GSPRT uses.

For true Elo = elo0 the test should accept H1 in at most ``alpha`` of the runs; for true Elo =
elo1 it should accept H0 in at most ``beta``. Printed: the observed rates with a 95 % interval
(Wilson), and the mean and 90th percentile of the sets each test needed. Wald's bounds are
slightly conservative (the LLR overshoots them), so observed rates at or a little below the
nominal ones are the expected outcome.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tournaments import sprt  # noqa: E402

SHAPES = {
    "split": [0.04, 0.16, 0.60, 0.16, 0.04],
    "decisive": [0.20, 0.10, 0.40, 0.10, 0.20],
}


def run_test(probabilities, rng, *, elo0, elo1, alpha, beta) -> tuple[str, int]:
    counts = [0] * 5
    cells = range(5)
    cumulative = [sum(probabilities[: i + 1]) for i in cells]
    while True:
        draw = rng.random()
        counts[next((i for i in cells if draw < cumulative[i]), 4)] += 1
        decision = sprt.decide(counts, elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, max_sets=10**9)
        if decision.status != "running":
            return decision.status, sum(counts)


def wilson(hits: int, total: int) -> tuple[float, float]:
    z = 1.959964
    share = hits / total
    centre = (share + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total**2)) / (1 + z * z / total)
    return max(0.0, centre - half), min(1.0, centre + half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=50.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load {os.getloadavg()}")
    print(
        f"H0: elo {args.elo0:g}, H1: elo {args.elo1:g}, alpha {args.alpha:g}, "
        f"beta {args.beta:g}, {args.tests} tests per row"
    )
    rng = random.Random(args.seed)
    options = {"elo0": args.elo0, "elo1": args.elo1, "alpha": args.alpha, "beta": args.beta}
    for shape, base in SHAPES.items():
        for true_elo, wrong, nominal in (
            (args.elo0, "accepted", args.alpha),
            (args.elo1, "rejected", args.beta),
            ((args.elo0 + args.elo1) / 2, None, None),
        ):
            probabilities = sprt._constrained_mle(base, sprt.SCORES, sprt.elo_to_score(true_elo))
            results = [run_test(probabilities, rng, **options) for _ in range(args.tests)]
            lengths = sorted(n for _, n in results)
            mean_sets = sum(lengths) / len(lengths)
            p90 = lengths[int(0.9 * len(lengths))]
            accepted = sum(status == "accepted" for status, _ in results)
            if wrong is None:
                verdict = f"accepted H1 in {accepted / args.tests:.3f}"
            else:
                errors = sum(status == wrong for status, _ in results)
                low, high = wilson(errors, args.tests)
                kind = "alpha" if wrong == "accepted" else "beta"
                verdict = (
                    f"wrong ({wrong}) {errors / args.tests:.3f} "
                    f"[95 % {low:.3f}-{high:.3f}] vs {kind} {nominal:g}"
                )
            print(
                f"{shape:>8} true elo {true_elo:6.1f}: {verdict}; "
                f"sets mean {mean_sets:6.1f}, p90 {p90}"
            )


if __name__ == "__main__":
    main()
