"""The SPRT of version tests: bounds, the constrained fit, the LLR's behaviour and decisions."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments import sprt

counts_strategy = st.lists(st.integers(0, 400), min_size=5, max_size=5).filter(lambda c: sum(c))


def test_wald_bounds():
    lower, upper = sprt.bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95))
    assert upper == pytest.approx(math.log(0.95 / 0.05)) == pytest.approx(2.944, abs=1e-3)
    low, high = sprt.bounds(0.01, 0.2)
    assert low == pytest.approx(math.log(0.2 / 0.99)) and high == pytest.approx(math.log(80))


def test_elo_and_score_are_inverse():
    for elo in (-400, -35.5, 0, 10, 200):
        assert sprt.score_to_elo(sprt.elo_to_score(elo)) == pytest.approx(elo)
    assert sprt.elo_to_score(0) == 0.5


def test_outcome_index_accepts_quarters_only():
    assert [sprt.outcome_index(s) for s in sprt.SCORES] == [0, 1, 2, 3, 4]
    for bad in (0.1, -0.25, 1.25):
        with pytest.raises(ValueError):
            sprt.outcome_index(bad)


@settings(max_examples=200, deadline=None)
@given(counts=counts_strategy, elo=st.floats(-300, 300))
def test_constrained_fit_is_a_distribution_with_the_asked_mean(counts, elo):
    freqs = [(c or sprt.REGULARIZE) for c in counts]
    freqs = [f / sum(freqs) for f in freqs]
    fitted = sprt._constrained_mle(freqs, sprt.SCORES, sprt.elo_to_score(elo))
    assert all(p > 0 for p in fitted)
    assert sum(fitted) == pytest.approx(1, abs=1e-9)
    mean = sum(p * v for p, v in zip(fitted, sprt.SCORES, strict=True))
    assert mean == pytest.approx(sprt.elo_to_score(elo), abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(counts=counts_strategy)
def test_llr_grows_with_a_better_result(counts):
    """Moving one set from a loss to a win never lowers the evidence for H1."""
    if counts[0] == 0:
        return
    better = [counts[0] - 1, *counts[1:4], counts[4] + 1]
    assert sprt.llr(better, 0, 30) >= sprt.llr(counts, 0, 30) - 1e-9


@settings(max_examples=100, deadline=None)
@given(counts=counts_strategy)
def test_llr_is_antisymmetric_in_the_hypotheses(counts):
    assert sprt.llr(counts, 0, 40) == pytest.approx(-sprt.llr(counts, 40, 0), abs=1e-7)


def test_llr_scales_with_the_number_of_sets():
    one = sprt.llr([5, 20, 50, 30, 10], 0, 30)
    assert sprt.llr([50, 200, 500, 300, 100], 0, 30) == pytest.approx(10 * one, rel=1e-3)
    assert sprt.llr([0, 0, 0, 0, 0], 0, 30) == 0


def test_decisions():
    common = {"elo0": 0, "elo1": 30, "alpha": 0.05, "beta": 0.05}
    assert sprt.decide([0, 0, 0, 0, 0], max_sets=100, **common).status == "running"
    strong = sprt.decide([10, 40, 100, 80, 40], max_sets=1000, **common)
    assert strong.status == "accepted" and strong.llr >= strong.upper
    weak = sprt.decide([40, 80, 100, 40, 10], max_sets=1000, **common)
    assert weak.status == "rejected" and weak.llr <= weak.lower
    even = sprt.decide([2, 3, 6, 3, 2], max_sets=16, **common)
    assert even.status == "inconclusive" and even.lower < even.llr < even.upper


def test_estimate_is_the_mean_score_with_a_normal_interval():
    assert sprt.estimate([0, 0, 0, 0, 0]) is None
    even = sprt.estimate([10, 20, 40, 20, 10])
    assert even.elo == pytest.approx(0) and even.low == pytest.approx(-even.high)
    # mean 0.5, sd of set scores sqrt(0.075) -> half-width 1.96 * sqrt(0.075 / 100) = 0.0537
    assert sprt.elo_to_score(even.high) == pytest.approx(0.5 + 1.959964 * math.sqrt(0.00075))
    better = sprt.estimate([5, 10, 40, 30, 15])
    assert better.low < better.elo < better.high and better.elo > 0


def test_a_simulated_test_decides_right_most_of_the_time():
    """A small run of the benchmark's simulation (benchmarks/sprt.py has the full figures)."""
    rng = random.Random(11)
    base = [0.05, 0.2, 0.5, 0.2, 0.05]

    def run(elo: float) -> str:
        probabilities = sprt._constrained_mle(base, sprt.SCORES, sprt.elo_to_score(elo))
        counts = [0] * 5
        while True:
            counts[rng.choices(range(5), probabilities)[0]] += 1
            decision = sprt.decide(counts, elo0=0, elo1=40, alpha=0.1, beta=0.1, max_sets=10**6)
            if decision.status != "running":
                return decision.status

    assert sum(run(40) == "accepted" for _ in range(60)) >= 45
    assert sum(run(0) == "rejected" for _ in range(60)) >= 45
