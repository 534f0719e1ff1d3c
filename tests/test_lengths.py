"""Length distributions and their proven tail bounds (book eq. eq-geometric, eq-power-law, eq-tail-bound)."""

import math

import mpmath
import numpy as np
import pytest

from lagtheory import Geometric, PowerLaw


def test_geometric_pmf_and_exact_tail():
    g = Geometric(4.0)
    q = 0.25
    assert g.pmf(1) == pytest.approx(q)
    assert g.pmf(3) == pytest.approx(q * (1 - q) ** 2)
    n = np.arange(1, 400)
    assert g.pmf(n).sum() == pytest.approx(1.0, abs=1e-15)
    assert np.sum(n * g.pmf(n)) == pytest.approx(4.0, rel=1e-12)
    for N in (1, 5, 30):
        assert g.tail_mass_bound(N) == pytest.approx(1 - g.pmf(np.arange(1, N + 1)).sum(), rel=1e-10)


@pytest.mark.parametrize("N", [1, 2, 10, 50])
def test_geometric_log_bound_dominates(N):
    g = Geometric(6.0)
    n = np.arange(N + 1, 5000)
    true_tail = float(np.sum(np.log(n) * g.pmf(n)))
    assert true_tail <= g.tail_log_moment_bound(N)
    assert g.tail_log_moment_bound(N) < 10 * true_tail + 1e-300  # and is not absurdly loose


@pytest.mark.parametrize("s", [1.5, 2.0, 3.0])
def test_power_law_pmf_normalised(s):
    p = PowerLaw(s)
    assert p.pmf(2) == pytest.approx(2.0**-s / float(mpmath.zeta(s)), rel=1e-14)


@pytest.mark.parametrize("s,N", [(1.5, 3), (2.0, 3), (2.0, 100), (3.0, 10), (4.0, 1000)])
def test_power_law_bounds_dominate_exact_tails(s, N):
    p = PowerLaw(s)
    zeta = mpmath.zeta(s)
    with mpmath.workdps(30):  # sum_{n > N} n^-s = zeta(s, N + 1) and sum_{n > N} log(n) n^-s = -d/ds zeta(s, N + 1)
        mass = mpmath.zeta(s, N + 1) / zeta  # (Hurwitz; nsum's default method is off by up to 28% on these slow tails)
        logm = -mpmath.zeta(s, N + 1, 1) / zeta
    assert float(mass) <= p.tail_mass_bound(N) <= 3 * float(mass)
    assert float(logm) <= p.tail_log_moment_bound(N) <= 3 * float(logm)


def test_truncation_length_is_the_smallest_valid_one():
    g = Geometric(10.0)
    N = g.truncation_length(1e-12, 1e-12)
    assert g.tail_mass_bound(N) <= 1e-12 and g.tail_log_moment_bound(N) <= 1e-12
    assert g.tail_mass_bound(N - 1) > 1e-12 or g.tail_log_moment_bound(N - 1) > 1e-12
    # the exact tail (1 - q)^N <= tol alone needs N >= log(tol)/log(0.9)
    assert N >= math.ceil(math.log(1e-12) / math.log(0.9))


def test_truncation_refuses_hopeless_tolerance():
    with pytest.raises(ValueError, match="tol"):
        PowerLaw(1.5).truncation_length(1e-12, 1e-12)


@pytest.mark.parametrize(
    "factory,arg,match",
    [
        (Geometric, 1.0, "mean must be > 1"),
        (Geometric, -2.0, "mean"),
        (PowerLaw, 1.0, "exponent must be > 1"),
        (PowerLaw, np.nan, "exponent"),
        (Geometric, float("inf"), "mean"),
    ],
)
def test_bad_parameters(factory, arg, match):
    with pytest.raises(ValueError, match=match):
        factory(arg)


def test_pmf_rejects_bad_lengths():
    with pytest.raises(ValueError, match="n must be >= 1"):
        Geometric(3.0).pmf(0)
