"""lagtheory.certified: each enclosure contains an independent high-precision value (mpmath at 60
digits, sympy, brute force), is narrow enough for that to mean something, and a wrong formula
(the planted variants below) falls outside it."""

import math
from fractions import Fraction

import mpmath
import pytest
import sympy as sp
from flint import arb

from lagtheory import certified as C

Q = Fraction(1, 10)
DPS = 60


def reference(value, error=1e-50) -> arb:
    """An mpmath value as a ball of radius ``error`` (its own rounding is far below it)."""
    return arb(mpmath.nstr(value, 55), error)


def encloses(ball: arb, value, width=1e-40) -> bool:
    """The ball meets the reference and is narrower than ``width``: they agree to ``width``."""
    return ball.overlaps(reference(value)) and 2 * float(ball.rad()) < width


def geometric_sum(term, start=1, stop=3000):
    """sum_{n=start}^{stop} q (1 - q)^(n-1) term(n) in mpmath; the rest is below 0.9^3000 < 1e-137 times sup |term|."""
    q = mpmath.mpf(1) / 10
    return mpmath.fsum(q * (1 - q) ** (n - 1) * term(mpmath.mpf(n)) for n in range(start, stop + 1))


@pytest.fixture(autouse=True)
def precision():
    with mpmath.workdps(DPS):
        yield


def sigma(z):
    return 1 / (1 + mpmath.exp(-z))


def test_phase_two_constants_enclose_the_series():
    m_ref = geometric_sum(lambda n: 1 / n)  # the series of m, not its closed form
    phase = C.phase_two(1, 150, Q)
    assert encloses(phase.m, m_ref)
    c1, w1 = -m_ref / 4, m_ref / 2
    G_ref = geometric_sum(lambda n: sigma(-c1 - w1 / n) * mpmath.log(n) * (n - 1) / n**2)
    assert encloses(phase.G, G_ref)
    assert encloses(phase.t1, 150 * w1 * G_ref)
    assert encloses(phase.eta2_star, 2 / (m_ref * G_ref))
    # the tempting form of a step on t (t1 = eta2 (w1/2) G) is outside the ball
    assert not (150 * phase.w1 / 2 * phase.G).overlaps(reference(150 * w1 * G_ref))
    assert phase.t1 > 1 and phase.G > 0


def test_tail_is_part_of_the_enclosure():
    """With 40 terms the tail is kept in the radius: the ball still contains G; the bare partial sum does not."""
    m = C.mean_b_fraction_geometric(Q)
    c1, w1 = C.phase_one_output(1, m)
    short = C.attention_factor_geometric(c1, w1, Q, terms=40)
    m_ref = geometric_sum(lambda n: 1 / n)
    G_ref = geometric_sum(lambda n: sigma(m_ref / 4 - m_ref / 2 / n) * mpmath.log(n) * (n - 1) / n**2)
    assert short.overlaps(reference(G_ref))
    partial = short.lower()  # the partial sum itself sits at the ball's lower end
    assert not partial.overlaps(reference(G_ref))


@pytest.mark.parametrize("t_value", [1.000001, 1.001, 1.22, 1.5, 2.0, 10.0, 200.0, 1.7605639965])
def test_worst_length_against_brute_force(t_value):
    t = mpmath.mpf(t_value)
    brute = (
        max(range(1, 2_000_001 if t_value < 1.0001 else 20_000), key=lambda n: (n - 1) * mpmath.mpf(n) ** (-t))
        if t_value > 1.0001
        else None
    )
    certified = C.worst_one_b_length(t_value)
    if brute is not None:
        assert certified == brute
    else:  # t = 1 + 1e-6: peak 1000001, compare the two neighbours and the peak's integer part directly
        g = lambda n: (n - 1) * mpmath.mpf(n) ** (-t)  # noqa: E731
        assert g(certified) >= g(certified - 1) and g(certified) >= g(certified + 1)


def test_worst_length_refuses_undecided_or_bad_t():
    with pytest.raises(ValueError, match="t must be > 1"):
        C.worst_one_b_length(1.0)
    with pytest.raises(ValueError, match=r"straddles|not decided"):
        C.worst_one_b_length(arb(1.5, 0.2))  # a wide ball: t/(t-1) anywhere in [2.2, 4.3]


def brute_horizon(t, R):
    n = 1
    while (n - 1) * mpmath.mpf(n) ** (-mpmath.mpf(t)) < R:
        n += 1
    return n - 1


@pytest.mark.parametrize("t_value,R", [(0.5, 3.0), (-1.0, 40.0), (0.9, 3.0), (0.25, 1000.0), (0.0, 7.5)])
def test_horizon_certificate_holds_for_the_horizon_only(t_value, R):
    u_a = -0.2
    u_b = R * 0.2
    N = brute_horizon(t_value, mpmath.mpf(u_b) / mpmath.mpf(0.2))
    assert C.horizon_certificate(t_value, u_a, u_b, N).holds
    assert C.horizon(t_value, u_a, u_b) == N
    assert not C.horizon_certificate(t_value, u_a, u_b, N + 1).below
    if N > 0:
        assert not C.horizon_certificate(t_value, u_a, u_b, N - 1).beyond


def test_horizon_where_float64_cannot_tell():
    """t = 0.97, u = (-1, 3): the horizon is near 8e15, where g_t moves by a relative 4e-18 per unit
    of n, below float64 resolution; the bisection in balls finds the n with g(n) < 3 <= g(n + 1)."""
    N = C.horizon(0.97, -1.0, 3.0)
    t = mpmath.mpf(0.97)
    with mpmath.workdps(80):
        assert (N - 1) * mpmath.mpf(N) ** (-t) < 3 <= N * mpmath.mpf(N + 1) ** (-t)
    with pytest.raises(ValueError, match="beyond max_length"):
        C.horizon(0.97, -1.0, 3.0, max_length=10**15)


def test_loss_and_threshold_bound():
    for r in [1.5, 4.5, 64.5]:
        loss = C.loss_geometric_one_b(0, (-r, r * r), Q)
        r_mp = mpmath.mpf(r)
        w = r_mp * r_mp + r_mp
        ref = (
            mpmath.log(1 + mpmath.exp(-r_mp)) / 2
            + geometric_sum(lambda n, r_mp=r_mp, w=w: mpmath.log(1 + mpmath.exp(r_mp - w / n))) / 2
        )
        assert encloses(loss, ref)
        bound_ref = mpmath.exp(-r_mp) + (r_mp + mpmath.log(2)) / 2 * mpmath.mpf("0.9") ** math.floor(r / 2)
        assert encloses(C.threshold_loss_bound(r, Q), bound_ref)
    # at t1 > 1 and u1 the loss (theta = (0, t)): an independent sum with p = 1/(1 + (n-1) n^-t)
    t = mpmath.mpf("1.5")
    p = lambda n: 1 / (1 + (n - 1) * n ** (-t))  # noqa: E731
    ref = mpmath.log(1 + mpmath.exp(-1)) / 2 + geometric_sum(lambda n: mpmath.log(1 + mpmath.exp(1 - 3 * p(n)))) / 2
    assert encloses(C.loss_geometric_one_b(1.5, (-1, 2), Q), ref)


def test_phase_three_certificate():
    phase = C.phase_two(1, 150, Q)
    cert = C.phase_three_certificate(phase.t1, (phase.c1, phase.c1 + phase.w1), 4, lambda n: C.geometric_pmf(n, Q))
    t1 = mpmath.mpf(phase.t1.mid().str(40, radius=False))
    n_star = max(range(1, 100), key=lambda n: (n - 1) * mpmath.mpf(n) ** (-t1))
    assert cert.n_star == n_star
    pi_star = mpmath.mpf(1) / 10 * mpmath.mpf("0.9") ** (n_star - 1)
    eps = mpmath.log(2) / 2 * min(1, pi_star)
    R = mpmath.log(2 / eps)
    m = geometric_sum(lambda n: 1 / n)
    distance2 = (-m / 4 + R) ** 2 + (m / 4 - 3 * R) ** 2
    assert encloses(cert.eps_star, eps) and encloses(cert.R, R) and encloses(cert.distance2, distance2, 1e-30)
    assert cert.T_star == int(mpmath.floor(distance2 / (4 * eps))) + 1


def test_one_step_failure_constants():
    gamma_ref = geometric_sum(lambda n: mpmath.log(n) * (n - 1) / n**2)
    gamma = C.gamma_geometric(Q)
    assert encloses(gamma, gamma_ref)
    assert encloses(C.attention_factor_geometric(0, 0, Q), gamma_ref / 2)  # G(0) = Gamma / 2
    lambda_ref = geometric_sum(lambda n: mpmath.log(n) / (n - 1), start=2) / 2
    lambda0 = C.saturation_factor_geometric(0, Q)
    assert encloses(lambda0, lambda_ref)
    lam3 = geometric_sum(lambda n: mpmath.log(n) * n**-3 / (n - 1), start=2) / 2
    assert encloses(C.saturation_factor_geometric(-3, Q), lam3)
    with_w, plain = C.recovery_lower_bounds(-4, 4, lambda0, W=2.5)
    assert encloses(with_w, 15 / (2 * mpmath.log(2) * 4 * 2.5 * lambda_ref))
    assert encloses(plain, mpmath.sqrt(15 / (mpmath.log(2) * 16 * lambda_ref)))
    for x in [1, 2, 4, 16]:
        assert encloses(C.small_sigma_success(x), 1 - mpmath.ncdf(mpmath.sqrt(2) / x))
    with pytest.raises(ValueError, match="t must be <= 0"):
        C.saturation_factor_geometric(0.5, Q)


def test_several_b_certificate_and_the_old_form():
    pmf = lambda n: C.geometric_pmf(n, Q)  # noqa: E731
    uniform_tail = lambda M: C.geometric_tail(M, Q) / (M + 1)  # noqa: E731
    cert = C.several_b_certificate((-20, 600), pmf, C.kappa_uniform, uniform_tail, horizon=30, loss_terms=120)
    assert cert.holds
    # L(0, u) summed in mpmath over every (n, k), n <= 400 (the rest is below 0.9^400 (20 + log 2) < 1e-17)
    loss_ref = (
        mpmath.log(1 + mpmath.exp(-20)) / 2
        + geometric_sum(
            lambda n: mpmath.fsum(mpmath.log(1 + mpmath.exp(20 - 620 * k / n)) for k in range(1, int(n) + 1)) / n,
            stop=400,
        )
        / 2
    )
    assert cert.loss_lower < loss_ref < 1.01 * float(cert.loss_lower.mid()) + 1e-3 * loss_ref
    bound_ref = mpmath.log(2) / 2 * geometric_sum(lambda n: 1 / n, start=31)
    assert abs(float(cert.bound_upper.mid()) - float(bound_ref)) <= 1e-12 * float(bound_ref)
    # the old form (every positive beyond the horizon counted: pi_+(n) replaced by pi(n)) is refused here
    old = C.several_b_certificate(
        (-20, 600), pmf, C.kappa_uniform, lambda M: C.geometric_tail(M, Q), 30, 120, one_b=pmf
    )
    assert not old.holds


def test_several_b_on_a_box():
    """u in a box: the lower bound of L holds for every u of it."""
    pmf = lambda n: C.geometric_pmf(n, Q)  # noqa: E731
    box = (C.interval(arb(-3), arb(-2.9)), C.interval(arb(40), arb(41)))
    cert = C.several_b_certificate(box, pmf, C.kappa_uniform, lambda M: C.geometric_tail(M, Q) / (M + 1), 13, 60)
    corner = C.several_b_certificate(
        (-2.9, 41), pmf, C.kappa_uniform, lambda M: C.geometric_tail(M, Q) / (M + 1), 13, 60
    )
    assert cert.holds and cert.loss_lower <= corner.loss_lower


def test_icl_optimal_step_exact():
    m = sp.Symbol("m")
    D = 5
    harmonic = sp.summation(1 / m, (m, 2, 40)) / 39
    expected = 1 / (1 + (D + 1) * harmonic)
    step = C.icl_optimal_step(D, 2, 40)
    assert sp.Rational(step.numerator, step.denominator) == expected
    eta = sp.Symbol("eta")
    mean_error = sp.summation(eta**2 * (1 + (D + 1) / m) - 2 * eta + 1, (m, 2, 40)) / 39
    assert sp.solve(sp.diff(mean_error, eta), eta) == [expected]
    assert C.icl_mean_error(step, D, range(2, 41)) == Fraction(str(sp.Rational(mean_error.subs(eta, expected))))
    assert C.icl_optimal_step(D, 2, 2) == Fraction(2, 8)  # one size m: m / (m + D + 1)
    with pytest.raises(ValueError, match="max_context"):
        C.icl_optimal_step(5, 4, 3)


def test_midpoint_constants_from_sympy_integrals():
    u = sp.Symbol("u")
    half = sp.Rational(1, 2)
    constants = C.midpoint_constants()
    assert constants["cell_fourth"] == Fraction(str(sp.integrate(u**4 / 24, (u, -half, half))))
    assert constants["cell_second"] == Fraction(str(sp.integrate(u**2 / 2, (u, -half, half))))
    assert constants["cell"] == Fraction(13, 5760)
    assert constants["C_A_cells"] == Fraction(13, 360) and constants["C_A_ends"] == Fraction(1, 48)
    assert constants["E_out_cells"] == Fraction(13, 240) and constants["E_out_end"] == Fraction(1, 96)


def test_helpers():
    assert C.floor_certified(arb(2.5)) == 2
    with pytest.raises(ValueError, match="straddles"):
        C.floor_certified(arb(3, 0.01), "x")
    assert C.describe(C.ball(Fraction(1, 3))).startswith("0.33333333 (width < 1e-7")
    assert C.describe(arb(2)) == "2 (width 0)"
    assert C.describe(arb(1.25, 0.001)) == "1.2 (width < 1e-02)" or C.describe(arb(1.25, 0.001)).startswith("1 (")
    assert C.width_bound(arb(1, 3e-31)) == 1e-30
    with pytest.raises(TypeError, match="int, float, Fraction or arb"):
        C.ball("0.1")
    with pytest.raises(ValueError, match="finite"):
        C.ball(math.inf)
