"""Latency figures as the arena reports them, for a seat's plays and for a bot's profile."""

from __future__ import annotations


def nearest_rank_percentile(sorted_values: list[float], percent: int) -> float:
    """The nearest-rank percentile: always one of the measured values, never an interpolation."""
    rank = max(1, -(-percent * len(sorted_values) // 100))
    return sorted_values[rank - 1]
