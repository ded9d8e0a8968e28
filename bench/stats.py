"""Small, dependency-free statistics for repeated measurements.

A benchmark on a shared machine is noisy; every figure is reported as the median of its
samples with their spread (min-max and the inter-quartile range), and comparisons are
ratios of medians, never of single runs.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Summary", "ratio", "summarize"]


@dataclass(frozen=True)
class Summary:
    """The distribution of one metric's samples."""

    median: float
    low: float
    high: float
    q1: float
    q3: float
    count: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def spread_pct(self) -> float:
        """(max - min) / median, in percent: how much to trust the median."""
        return (self.high - self.low) / self.median * 100 if self.median else 0.0


def summarize(samples: Sequence[float]) -> Summary:
    """Median, extremes and quartiles of at least one sample."""
    if not samples:
        raise ValueError("no samples to summarize")
    ordered = sorted(samples)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return Summary(
        median=statistics.median(ordered),
        low=ordered[0],
        high=ordered[-1],
        q1=q1,
        q3=q3,
        count=len(ordered),
    )


def ratio(numerator: Summary | None, denominator: Summary | None) -> float | None:
    """The ratio of two medians, or None when either is missing or zero."""
    if numerator is None or denominator is None or not denominator.median:
        return None
    return numerator.median / denominator.median
