"""The pure-Python statistics against scipy (to 1e-10) and against published values."""

from __future__ import annotations

import random

import pytest

from nomos_forensics import stats

scipy_stats = pytest.importorskip("scipy.stats")


def _tables(count: int, seed: int = 7):
    rng = random.Random(seed)
    out = [(0, 0, 0, 0), (0, 5, 0, 7), (3, 0, 0, 4), (1, 1, 1, 1), (10, 10, 10, 10), (0, 30, 6, 24)]
    while len(out) < count:
        n1, n2 = rng.choice([5, 17, 60, 400, 3000]), rng.choice([4, 23, 80, 500, 2500])
        p1, p2 = rng.random() * 0.4, rng.random() * 0.4
        a = sum(rng.random() < p1 for _ in range(n1))
        c = sum(rng.random() < p2 for _ in range(n2))
        out.append((a, n1 - a, c, n2 - c))
    return out


@pytest.mark.parametrize("table", _tables(60))
def test_fisher_exact_matches_scipy(table):
    a, b, c, d = table
    expected = scipy_stats.fisher_exact([[a, b], [c, d]], alternative="two-sided").pvalue
    assert stats.fisher_exact(a, b, c, d) == pytest.approx(expected, abs=1e-10)


def test_fisher_exact_published_tea_tasting():
    # Fisher's lady tasting tea: [[3, 1], [1, 3]], two-sided p = 34/70
    assert stats.fisher_exact(3, 1, 1, 3) == pytest.approx(34 / 70, abs=1e-12)


@pytest.mark.parametrize("x,n", [(0, 1), (0, 10), (1, 10), (5, 10), (10, 10), (3, 17), (81, 263), (2, 3000)])
def test_wilson_matches_scipy(x, n):
    ci = scipy_stats.binomtest(x, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = stats.wilson(x, n)
    assert low == pytest.approx(ci.low, abs=1e-10)
    assert high == pytest.approx(ci.high, abs=1e-10)


def test_newcombe_published_values():
    # Newcombe (1998), Table II, method 10: 56/70 - 48/80 -> (0.0524, 0.3339); 9/10 - 3/10 -> (0.1705, 0.8090)
    low, high = stats.newcombe(56, 70, 48, 80)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)
    low, high = stats.newcombe(9, 10, 3, 10)
    assert (round(low, 4), round(high, 4)) == (0.1705, 0.8090)


@pytest.mark.parametrize("x1,n1,x2,n2", [(0, 10, 0, 20), (5, 40, 1, 50), (300, 1000, 280, 1000), (0, 7, 7, 7)])
def test_newcombe_is_built_from_the_wilson_intervals(x1, n1, x2, n2):
    w1 = scipy_stats.binomtest(x1, n1).proportion_ci(method="wilson")
    w2 = scipy_stats.binomtest(x2, n2).proportion_ci(method="wilson")
    p1, p2 = x1 / n1, x2 / n2
    low, high = stats.newcombe(x1, n1, x2, n2)
    assert low == pytest.approx(p1 - p2 - ((p1 - w1.low) ** 2 + (w2.high - p2) ** 2) ** 0.5, abs=1e-10)
    assert high == pytest.approx(p1 - p2 + ((w1.high - p1) ** 2 + (p2 - w2.low) ** 2) ** 0.5, abs=1e-10)
    assert low <= p1 - p2 <= high


@pytest.mark.parametrize("seed", range(5))
def test_benjamini_hochberg_matches_scipy(seed):
    rng = random.Random(seed)
    ps = [rng.random() ** 3 for _ in range(rng.randint(1, 20))] + [1.0, 0.0]
    expected = scipy_stats.false_discovery_control(ps, method="bh")
    assert stats.benjamini_hochberg(ps) == pytest.approx(list(expected), abs=1e-10)


def test_chi2_and_normal_tails_match_scipy():
    for x in (0.0, 0.3, 1.0, 3.84, 10.0, 40.0):
        assert stats.chi2_1_sf(x) == pytest.approx(scipy_stats.chi2.sf(x, 1), abs=1e-12)
        assert stats.normal_sf(x) == pytest.approx(scipy_stats.norm.sf(x), abs=1e-12)


# R's documentation example for mantelhaen.test: penicillin and rabbits, 5 strata of
# [[cured, died] delayed; [cured, died] immediate]; published: X-squared = 3.9286 (corrected),
# p-value = 0.04747; the MH common odds ratio is (18/12 + 24/12) / (6/12) = 7.
RABBITS = [((0, 6), (0, 5)), ((3, 3), (0, 6)), ((6, 0), (2, 4)), ((5, 1), (6, 0)), ((2, 0), (5, 0))]


def test_mantel_haenszel_published_rabbits():
    strata = [stats.Stratum(a=a, n1=a + b, c=c, n0=c + d) for (a, b), (c, d) in RABBITS]
    result = stats.mantel_haenszel(strata)
    assert round(result.chi2, 4) == 3.9286
    assert round(result.p_value, 5) == 0.04747
    assert result.odds_ratio == pytest.approx(7.0, abs=1e-12)


def test_mantel_haenszel_one_stratum_is_the_crude_difference():
    a, n1, c, n0 = 30, 200, 12, 180
    result = stats.mantel_haenszel([stats.Stratum(a, n1, c, n0)], correction=False)
    p1, p0 = a / n1, c / n0
    assert result.risk_difference == pytest.approx(p1 - p0, abs=1e-12)
    se = (p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0) ** 0.5
    assert result.interval == pytest.approx((p1 - p0 - stats.Z95 * se, p1 - p0 + stats.Z95 * se), abs=1e-12)
    # uncorrected CMH on one table is the chi-squared test scaled by (n - 1) / n
    chi2 = scipy_stats.chi2_contingency([[a, n1 - a], [c, n0 - c]], correction=False).statistic
    n = n1 + n0
    assert result.chi2 == pytest.approx(chi2 * (n - 1) / n, rel=1e-10)


def test_mantel_haenszel_without_informative_strata():
    result = stats.mantel_haenszel([stats.Stratum(3, 10, 0, 0), stats.Stratum(0, 0, 2, 5)])
    assert result.strata == 0 and result.p_value == 1.0 and result.risk_difference is None
