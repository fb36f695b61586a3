"""Pure: a probe rate with its uncertainty, the Wilson score interval (Wilson 1927), and how the text shows it.

The normal approximation p +- z*sqrt(p(1-p)/n) collapses to [0, 0] for 0 hits and leaves [0, 1] at the edges;
Wilson's interval stays inside [0, 1] and is honest for the few dozen probes a small draft gets.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile: a two-sided 95% interval


def wilson(hits: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of the proportion hits/n; (0, 1) when nothing was observed."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= hits <= n:
        raise ValueError(f"{hits} hits out of {n}")
    p, z2 = hits / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # At 0 or n hits an endpoint is exactly 0 or 1; rounding must not leave it a hair inside.
    return (0.0 if hits == 0 else max(0.0, centre - half)), (1.0 if hits == n else min(1.0, centre + half))


def _percent(x: float) -> str:
    return f"{100 * x:.2g}" if 0 < 100 * x < 0.1 else f"{100 * x:.1f}"


def rate(hits: int, n: int) -> str:
    """`1/34 (2.9%, 95% CI 0.5-14.9%)`: the count, the rate and its 95% Wilson interval."""
    if n <= 0:
        return "0/0"
    low, high = wilson(hits, n)
    return f"{hits}/{n} ({_percent(hits / n)}%, 95% CI {_percent(low)}-{_percent(high)}%)"
