"""Small statistics helpers: medians and nearest-rank percentiles."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (share in 0..1) of the values; nan when there are none."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def ratio(numerator: float, denominator: float) -> float:
    if not denominator or math.isnan(numerator) or math.isnan(denominator):
        return math.nan
    return numerator / denominator
