"""The nearest-rank percentile behind a bot's latency figures (no database)."""

import pytest

from tournaments.selectors.pages import nearest_rank_percentile


@pytest.mark.parametrize(
    ("percent", "expected"), [(50, 50.0), (90, 90.0), (99, 99.0), (100, 100.0), (1, 1.0)]
)
def test_nearest_rank_percentile_of_one_to_a_hundred(percent, expected):
    assert nearest_rank_percentile([float(n) for n in range(1, 101)], percent) == expected


def test_nearest_rank_percentile_is_always_a_measured_value():
    values = [0.4, 1.2, 7.5]
    assert nearest_rank_percentile(values, 50) == 1.2
    assert nearest_rank_percentile(values, 99) == 7.5
    assert nearest_rank_percentile([3.0], 90) == 3.0
