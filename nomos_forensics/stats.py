"""The statistics `compare` needs, in pure Python (no numpy or scipy at run time, to keep the
install lean): Fisher's exact test, Wilson and Newcombe intervals, Benjamini–Hochberg, and
Mantel–Haenszel over strata with the Cochran–Mantel–Haenszel test. The tests check each one
against scipy or published values."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
_TIE = 1 + 1e-7  # tables as probable as the observed one count as as extreme (R, scipy)


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test for the 2x2 table [[a, b], [c, d]]: the total
    probability of the tables with the same margins that are no more probable than this one."""
    if min(a, b, c, d) < 0:
        raise ValueError("counts must be non-negative")
    row1, col1, n = a + b, a + c, a + b + c + d
    low, high = max(0, col1 - (n - row1)), min(row1, col1)
    if low == high:
        return 1.0
    log_p = [_log_choose(row1, x) + _log_choose(n - row1, col1 - x) for x in range(low, high + 1)]
    top = max(log_p)
    weights = [math.exp(v - top) for v in log_p]
    observed = weights[a - low]
    total = math.fsum(weights)
    extreme = math.fsum(w for w in weights if w <= observed * _TIE)
    return min(1.0, extreme / total)


def wilson(x: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for x successes in n trials ((0, 1) when n is 0)."""
    if n == 0:
        return 0.0, 1.0
    p = x / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe(x1: int, n1: int, x2: int, n2: int, z: float = Z95) -> tuple[float, float]:
    """Newcombe's hybrid score interval (his method 10) for p1 - p2, from the two Wilson intervals."""
    p1, p2 = (x1 / n1 if n1 else 0.0), (x2 / n2 if n2 else 0.0)
    l1, u1 = wilson(x1, n1, z)
    l2, u2 = wilson(x2, n2, z)
    diff = p1 - p2
    return (diff - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            diff + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (q-values), in the order given."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i], reverse=True)
    adjusted = [0.0] * m
    running = 1.0
    for rank_from_top, i in enumerate(order):
        rank = m - rank_from_top
        running = min(running, p_values[i] * m / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2))


def chi2_1_sf(x: float) -> float:
    """P(X > x) for X chi-squared with one degree of freedom."""
    return math.erfc(math.sqrt(max(x, 0.0) / 2))


@dataclass(frozen=True)
class Stratum:
    """One 2x2 table: `a` of `n1` sessions of the first group show the signature, `c` of `n0` of the second."""

    a: int
    n1: int
    c: int
    n0: int

    @property
    def n(self) -> int:
        return self.n1 + self.n0

    @property
    def informative(self) -> bool:
        return self.n1 > 0 and self.n0 > 0


@dataclass(frozen=True)
class MantelHaenszel:
    """Mantel–Haenszel estimates over strata: the common risk difference (group 1 minus group 0)
    with its Greenland–Robins 95% interval, the common odds ratio, and the CMH test's p-value."""

    risk_difference: float | None
    interval: tuple[float, float] | None
    odds_ratio: float | None
    chi2: float | None
    p_value: float
    strata: int


def mantel_haenszel(strata: Sequence[Stratum], correction: bool = True, z: float = Z95) -> MantelHaenszel:
    """Mantel–Haenszel over `strata` (only strata with sessions in both groups count).

    The CMH statistic is (|sum(a - E[a])| - 0.5)^2 / sum(Var a) with the continuity correction
    (as R's mantelhaen.test: only when |sum(a - E[a])| >= 0.5), or without it."""
    used = [s for s in strata if s.informative and s.n > 1]
    if not used:
        return MantelHaenszel(None, None, None, None, 1.0, 0)
    rd_num = rd_den = var_num = or_num = or_den = 0.0
    deviation = variance = 0.0
    for s in used:
        b, d, n = s.n1 - s.a, s.n0 - s.c, s.n
        weight = s.n1 * s.n0 / n
        rd_num += (s.a * s.n0 - s.c * s.n1) / n
        rd_den += weight
        var_num += (s.a * b * s.n0 ** 3 + s.c * d * s.n1 ** 3) / (s.n1 * s.n0 * n * n)
        or_num += s.a * d / n
        or_den += b * s.c / n
        events = s.a + s.c
        deviation += s.a - s.n1 * events / n
        variance += s.n1 * s.n0 * events * (n - events) / (n * n * (n - 1))
    rd = rd_num / rd_den
    se = math.sqrt(var_num) / rd_den
    odds = or_num / or_den if or_den else None
    if variance <= 0:
        return MantelHaenszel(rd, (rd - z * se, rd + z * se), odds, None, 1.0, len(used))
    excess = abs(deviation) - (0.5 if correction and abs(deviation) >= 0.5 else 0.0)
    chi2 = excess ** 2 / variance
    return MantelHaenszel(rd, (rd - z * se, rd + z * se), odds, chi2, chi2_1_sf(chi2), len(used))
