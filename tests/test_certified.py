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


def test_mp_fraction_is_the_exact_dyadic_value():
    # by other paths: floats (Fraction(float) is exact, and float(v) == v says v is that float), exact powers of
    # two, and the scaled integer int(ldexp(v, k)) with ldexp(that, -k) == v (ldexp and int are exact there)
    for value in [-2.75, -1e-300, 5e-324, 0.1, 1 / 3, 1e300, -(2.0**1000), 0.0]:
        v = mpmath.mpf(value)
        assert float(v) == value and C.mp_fraction(v) == Fraction(value)
    assert C.mp_fraction(mpmath.mpf(0)) == 0 and C.mp_fraction(-mpmath.mpf(0)) == 0
    for k in [-100000, -1075, -1, 0, 1, 1024, 100000]:  # beyond float range both ways
        assert C.mp_fraction(mpmath.ldexp(mpmath.mpf(-3), k)) == -3 * Fraction(2) ** k
    with mpmath.workdps(100):
        for value in [mpmath.mpf(1) / 3, -mpmath.mpf(2) / 7, mpmath.pi * 10**-200, -mpmath.e * 10**250]:
            k = 400 - int(mpmath.floor(mpmath.log(abs(value), 2)))  # 400 bits above its leading bit: every bit
            scaled = int(mpmath.ldexp(value, k))
            assert mpmath.ldexp(scaled, -k) == value
            assert C.mp_fraction(value) == Fraction(scaled) * Fraction(2) ** -k
        third = C.mp_fraction(mpmath.mpf(1) / 3)
        assert third != Fraction(1, 3) and abs(third - Fraction(1, 3)) < Fraction(1, 2**330)
    with pytest.raises(TypeError, match=r"value must be an mpmath\.mpf"):
        C.mp_fraction(0.5)
    with pytest.raises(ValueError, match="value must be finite"):
        C.mp_fraction(mpmath.inf)
    with pytest.raises(ValueError, match="value must be finite"):
        C.mp_fraction(mpmath.nan)


def test_ends_are_the_exact_ends_of_the_ball():
    third = C.ball(1) / 3
    low, high = C.ends(third)
    assert low < Fraction(1, 3) < high and high - low < Fraction(1, 2**250)
    assert C.ends(C.ball(Fraction(-3, 4))) == (Fraction(-3, 4), Fraction(-3, 4))
    with pytest.raises(ValueError, match="finite"):
        C.ends(C.ball(1) / 0)


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
    # the ends against the same truncated sum (n <= 120) in mpmath at 100 digits, compared exactly: the loss ball
    # contains it and its lower end lies below it; the right side's ball contains it and its upper end lies above it
    with mpmath.workdps(100):
        truncated = (
            mpmath.log1p(mpmath.exp(-20)) / 2
            + mpmath.fsum(
                mpmath.mpf(1)
                / 10
                * (mpmath.mpf(9) / 10) ** (n - 1)
                / n
                * mpmath.fsum(mpmath.log1p(mpmath.exp(20 - mpmath.mpf(620) * k / n)) for k in range(1, n + 1))
                for n in range(1, 121)
            )
            / 2
        )
        right = (
            mpmath.log(2)
            / 2
            * mpmath.fsum(mpmath.mpf(1) / 10 * (mpmath.mpf(9) / 10) ** (n - 1) / n for n in range(31, 3001))
        )
    loss_low, loss_high = C.ends(cert.loss_ball)
    assert loss_low <= C.mp_fraction(truncated) <= loss_high and C.ends(cert.loss_lower)[1] < C.mp_fraction(truncated)
    bound_low, bound_high = C.ends(cert.bound_ball)
    assert bound_low <= C.mp_fraction(right) <= bound_high and C.mp_fraction(right) < C.ends(cert.bound_upper)[0]
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
    with pytest.raises(ValueError, match="sizes must hold at least one"):
        C.icl_mean_error(step, D, [])
    with pytest.raises(ValueError, match="sizes"):
        C.icl_mean_error(step, D, [3, 0])


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


SLOW_SERIES = "euler-maclaurin"
"""nsum's method for the sums over n^-6 times smooth terms at 40 digits: its default (Richardson, then Shanks) takes
several times as long there and drifts from the sum in the 11th or 12th digit (the loss term checked against a direct
sum to 6000 plus the Euler-Maclaurin tail)."""


def _mp_terms(n, k, s, t, u_a, u_b):
    """The four per-string terms of thm-tail-expansion times n^(-s), in mpmath (60 digits)."""
    scaled = mpmath.power(n, t)
    p = k * scaled / (k * scaled + n - k)
    f = u_a + (u_b - u_a) * p
    miss = 1 / (1 + mpmath.exp(f))
    return [mpmath.log(1 + mpmath.exp(-f)), miss * (1 - p), miss * p, miss * p * (1 - p) * mpmath.log(n)]


def test_power_law_tail_terms_one_b_against_mpmath():
    s, t, u = 6, mpmath.mpf("1.2"), (-1, 2)
    balls = C.power_law_tail_terms(s, "one-b", 1.2, (-1.0, 2.0), 65, 400)
    with mpmath.workdps(40):
        zeta_s = mpmath.zeta(s)
        for i, enclosure in enumerate(balls):
            exact = (
                mpmath.nsum(lambda n, i=i: _mp_terms(n, 1, s, t, *u)[i] * n**-s, [65, mpmath.inf], method=SLOW_SERIES)
                / zeta_s
            )
            assert enclosure.contains(arb(mpmath.nstr(exact, 38)))
            assert 2 * float(enclosure.rad()) < 1e-2 * float(exact)  # the remainder beyond 400 is ~1e-3 relative
    # the fourth term without its log n falls outside
    with mpmath.workdps(40):
        wrong = mpmath.nsum(
            lambda n: _mp_terms(n, 1, s, t, *u)[2] * (1 - 1 / (1 + (n - 1) * n**-t)) * n**-s,
            [65, mpmath.inf],
            method=SLOW_SERIES,
        ) / mpmath.zeta(s)
    assert not balls[3].contains(arb(mpmath.nstr(wrong, 38)))


def test_power_law_tail_terms_uniform_against_mpmath():
    s, t, u = 6, mpmath.mpf("-0.7"), (-2, 3)
    balls = C.power_law_tail_terms(6, "uniform", -0.7, (-2.0, 3.0), 20, 60)
    with mpmath.workdps(30):
        zeta_s = mpmath.zeta(s)
        # lengths 20..150 exactly: more than the balls' partial sums (to 60), less than the exact tails
        per_length = [  # each string's four terms computed once
            [
                mpmath.fsum(column) * mpmath.mpf(n) ** (-s - 1)
                for column in zip(*(_mp_terms(n, k, s, t, *u) for k in range(1, n + 1)), strict=True)
            ]
            for n in range(20, 151)
        ]
        sums = [mpmath.fsum(column) / zeta_s for column in zip(*per_length, strict=True)]
    for enclosure, value in zip(balls, sums, strict=True):
        assert enclosure.contains(arb(mpmath.nstr(value, 28)))
    with pytest.raises(ValueError, match="counts"):
        C.power_law_tail_terms(6, "binomial", 1.0, (0.0, 1.0), 10, 20)
    with pytest.raises(ValueError, match="s must exceed 2"):
        C.power_law_tail_terms(2, "one-b", 1.0, (0.0, 1.0), 10, 20)


def _mp_loss(t, u_a, u_b, q, prior, counts, stop):
    """L(theta, u) of eq-population-loss summed in mpmath, lengths to ``stop``, geometric pi; the
    weight p(n, k; t) = k n^t / (k n^t + n - k) written out here."""
    t, u_a, u_b, q, prior = (mpmath.mpf(x) for x in (t, u_a, u_b, q, prior))
    w = u_b - u_a
    total = mpmath.mpf(0)
    for n in range(1, stop + 1):
        ks = [1] if counts == "one-b" else range(1, n + 1)
        scaled = mpmath.mpf(n) ** t  # n^t, once per length
        inner = mpmath.fsum(mpmath.log(1 + mpmath.exp(-(u_a + w * k * scaled / (k * scaled + n - k)))) for k in ks)
        total += q * (1 - q) ** (n - 1) * inner / (1 if counts == "one-b" else n)
    return (1 - prior) * mpmath.log(1 + mpmath.exp(u_a)) + prior * total


def _geometric_gradient(t, u, q, terms, kappa, prior):
    """The certified loss and gradient of lem-gradients under geometric lengths with parameter q, summed to
    ``terms``."""
    return C.population_gradient(
        t,
        u,
        lambda n: C.geometric_pmf(n, q),
        lambda N: C.geometric_tail(N, q),
        lambda N: C.geometric_log_tail(N, q),
        terms,
        kappa,
        prior,
    )


@pytest.mark.parametrize(
    "counts,q,prior,stop,terms",
    [("one-b", Fraction(1, 10), Fraction(3, 10), 1500, 1000), ("uniform", Fraction(1, 2), Fraction(1, 2), 170, 160)],
)
def test_population_gradient_is_the_derivative_of_the_loss(counts, q, prior, stop, terms):
    """The closed forms of lem-gradients against mpmath's numerical derivative of the loss series (an
    independent path: no gradient formula on the mpmath side); q^... tails below 1e-45 at ``stop``."""
    t, u_a, u_b = 0.7, -1.3, 0.4
    kappa = None if counts == "one-b" else C.kappa_uniform
    grad = _geometric_gradient(t, (u_a, u_b), q, terms, kappa, prior)
    qf, pf = mpmath.mpf(q.numerator) / q.denominator, mpmath.mpf(prior.numerator) / prior.denominator
    with mpmath.workdps(50):
        loss = _mp_loss(t, u_a, u_b, qf, pf, counts, stop)
        d_a = mpmath.diff(lambda x: _mp_loss(t, x, u_b, qf, pf, counts, stop), u_a)
        d_b = mpmath.diff(lambda x: _mp_loss(t, u_a, x, qf, pf, counts, stop), u_b)
        d_t = mpmath.diff(lambda x: _mp_loss(x, u_a, u_b, qf, pf, counts, stop), t)
    for enclosure, value in [(grad.loss, loss), (grad.grad_u_a, d_a), (grad.grad_u_b, d_b), (grad.grad_t, d_t)]:
        assert enclosure.overlaps(arb(mpmath.nstr(value, 45), 1e-35)) and 2 * float(enclosure.rad()) < 1e-30
    assert grad.grad_theta[0].mid() == (-grad.grad_t).mid() and grad.grad_theta[1] is grad.grad_t
    # narrow enough that a relative error of 1e-20 in any component would fall outside
    assert not grad.grad_t.overlaps(arb(mpmath.nstr(d_t * (1 + mpmath.mpf(10) ** -20), 45)))
    assert not grad.grad_u_a.overlaps(arb(mpmath.nstr(d_a * (1 + mpmath.mpf(10) ** -20), 45)))


@pytest.mark.parametrize("counts,terms", [("one-b", 40), ("uniform", 30)])
def test_population_gradient_loss_runs_from_the_partial_sum_to_its_tail_bound(counts, terms):
    """The loss ball of lem-gradients' certificate is the sum over the lengths n <= terms (mpmath, the weight
    written out in _mp_loss) plus [0, rho l(min u) P(n > terms)], to 1e-8 (a ball keeps its radius to about 30
    bits, so its ends are that much wider than the interval it encloses): a length left out moves its lower end by
    rho pi(terms) l(f) > 1e-4."""
    t, u_a, u_b, q = 0.7, -1.3, 0.4, Fraction(1, 10)
    kappa = None if counts == "one-b" else C.kappa_uniform
    grad = _geometric_gradient(t, (u_a, u_b), q, terms, kappa, Fraction(3, 10))
    with mpmath.workdps(60):
        q_mp, prior = mpmath.mpf(1) / 10, mpmath.mpf(3) / 10
        partial = _mp_loss(t, u_a, u_b, q_mp, prior, counts, terms)
        with_bound = partial + prior * mpmath.log(1 + mpmath.exp(-min(u_a, u_b))) * (1 - q_mp) ** terms
    low, high = C.ends(grad.loss)
    assert low <= C.mp_fraction(partial) < low + Fraction(1, 10**8)
    assert high - Fraction(1, 10**8) < C.mp_fraction(with_bound) <= high


def test_population_gradient_power_law_and_zero_attention_gradient():
    s = 4
    pmf = lambda n: C.power_law_pmf(n, s)  # noqa: E731
    grad = C.population_gradient(
        -0.4, (0.5, 0.5), pmf, lambda N: C.power_law_tail(N, s), lambda N: C.power_law_log_tail(N, s), 2000
    )
    assert grad.grad_t == 0 and grad.grad_t.is_exact()  # w = 0: exactly zero, lem-gradients
    grad = C.population_gradient(
        -0.4, (-0.5, 1.5), pmf, lambda N: C.power_law_tail(N, s), lambda N: C.power_law_log_tail(N, s), 2000
    )
    with mpmath.workdps(30):
        zeta4 = mpmath.zeta(4)

        def term(n):
            p = n**-0.4 / (n ** mpmath.mpf(-0.4) + n - 1)
            return n**-4 / zeta4 / (1 + mpmath.exp(-0.5 + 2 * p)) * mpmath.log(n) * p * (1 - p)

        d_t = -mpmath.mpf(1) / 2 * 2 * mpmath.nsum(term, [1, mpmath.inf], method="euler-maclaurin")
    assert grad.grad_t.contains(arb(mpmath.nstr(d_t, 25)))
    assert 2 * float(grad.grad_t.rad()) < 1e-8
    with pytest.raises(ValueError, match="prior"):
        C.population_gradient(0, (0, 1), pmf, lambda N: arb(0), lambda N: arb(0), 10, prior=1)


def test_log_tails_bound_the_true_tails():
    with mpmath.workdps(40):
        for N in [1, 5, 50]:
            true = mpmath.nsum(
                lambda n: mpmath.mpf("0.1") * mpmath.mpf("0.9") ** (n - 1) * mpmath.log(n), [N + 1, mpmath.inf]
            )
            bound = C.geometric_log_tail(N, Q)
            assert bound > arb(mpmath.nstr(true, 35)) and (N < 50 or bound < 1.5 * arb(mpmath.nstr(true, 35)))
            true_pl = -mpmath.zeta(3, N + 1, derivative=1) / mpmath.zeta(3)  # sum_{n > N} n^-3 log n / zeta(3)
            assert C.power_law_log_tail(N, 3) > arb(mpmath.nstr(true_pl, 35))
    with pytest.raises(ValueError, match="N must"):
        C.geometric_log_tail(0, Q)


def test_pooled_and_unscaled_weights_and_the_pull():
    same = (C.pooled_weight(7, 1, 0.5), C.one_b_weight(7, 0.5))
    assert same[0].mid() == same[1].mid() and same[0].rad() == same[1].rad()  # the same ball
    assert C.pooled_weight(5, 5, -3.0) == 1 and C.pooled_weight(5, 5, -3.0).is_exact()
    for n, k, t in [(7, 2, 0.3), (10**12, 3, 1.5), (2, 1, -4.0)]:
        n_mp, t_mp = mpmath.mpf(n), mpmath.mpf(t)
        assert encloses(C.pooled_weight(n, k, t), k * n_mp**t_mp / (k * n_mp**t_mp + n_mp - k))
        assert encloses(C.unscaled_weight(n, k, t), k * mpmath.exp(t_mp) / (k * mpmath.exp(t_mp) + n_mp - k))
        f = -0.25 + 1.5 * k * n_mp**t_mp / (k * n_mp**t_mp + n_mp - k)
        assert encloses(C.pull_on_u_b(n, k, t, (-0.25, 1.25)), sigma(-f) * (f + 0.25) / 1.5)
    with pytest.raises(ValueError, match="k must"):
        C.pooled_weight(3, 0, 1.0)


def test_unscaled_margin_and_horizon():
    for N, t in [(1, 0.0), (10, 2.0), (10**18, 10.0)]:
        e = mpmath.exp(mpmath.mpf(t))
        assert encloses(C.unscaled_best_margin(N, t), e / (e + 2 * N - 2))
    # the horizon against the outputs themselves: a^(n-1) b right iff u_a (1 - p) + u_b p > 0 (unscaled p)
    for t, u in [(2.0, (-0.5, 1.3)), (-3.0, (-0.01, 2.0)), (12.5, (-2.0, 0.7))]:
        H = C.unscaled_horizon(t, u)
        out = lambda n, t=t, u=u: u[0] + (u[1] - u[0]) * mpmath.exp(t) / (mpmath.exp(t) + n - 1)  # noqa: E731
        assert out(H) > 0 >= out(H + 1)
    assert C.unscaled_horizon(0, (-1, 3)) == 3  # e^0 3 / 1 = 3 exactly: n - 1 < 3 up to n = 3
    with pytest.raises(ValueError, match="straddles"):
        C.unscaled_horizon(0, (-1, arb(3, 1e-10)))


def test_d_token_phase_two():
    two, base = C.d_token_phase_two(2, 1, 150, Q), C.phase_two(1, 150, Q)
    assert two.t1.overlaps(base.t1) and two.eta2_star.overlaps(base.eta2_star) and two.c1.overlaps(base.c1)
    q3 = Fraction(1, 3)
    m_ref = mpmath.fsum(mpmath.mpf(1) / 3 * (mpmath.mpf(2) / 3) ** (n - 1) / n for n in range(1, 400))
    for d in [3, 4]:
        phase = C.d_token_phase_two(d, 1, 7, q3)
        c1, w1 = -m_ref / (4 * (d - 1)), m_ref / 4 * d / (d - 1)  # u_b = m/4, u_a = -m/(4(d-1))
        G_ref = mpmath.fsum(
            mpmath.mpf(1) / 3 * (mpmath.mpf(2) / 3) ** (n - 1) * sigma(-c1 - w1 / n) * mpmath.log(n) * (n - 1) / n**2
            for n in range(2, 400)
        )
        assert encloses(phase.c1, c1) and encloses(phase.w1, w1) and encloses(phase.G, G_ref)
        assert encloses(phase.t1, mpmath.mpf(7 * d) / (d - 1) * w1 / 2 * G_ref)
        assert encloses(phase.eta2_star * phase.t1 / 7, 1)  # t1 = 1 at eta2*
    with pytest.raises(ValueError, match="d must"):
        C.d_token_phase_two(1, 1, 1, Q)


def test_relu_certificate_against_a_dense_grid():
    """The certificate's verdict against the readout evaluated at every a^(n-1) b, n <= 5000, in mpmath."""
    V, b, a = [(0.0, 0.0), (0.0, -1.0), (0.0, 1.0), (0.0, 1.0)], [1.0, 0.5, -0.6, -0.8], [0.2, -1.0, -2.0, 4.0]

    def g(p):
        return sum(aj * max(v0 * (1 - p) + v1 * p + bj, 0) for (v0, v1), bj, aj in zip(V, b, a, strict=True))

    dip = C.relu_readout_certificate(V, b, a, 1.2)
    t = mpmath.mpf(1.2)
    worst = min(g(1 / (1 + (n - 1) * mpmath.mpf(n) ** -t)) for n in range(1, 5_001))
    assert not dip.recognises and worst < 0  # the dip near p = 0.8 is reached by some length
    assert dip.positive_min <= arb(mpmath.nstr(worst, 30))
    good = C.relu_readout_certificate([(1.0, 3.0), (2.0, -1.0)], [-1.5, -0.5], [1.0, -0.5], 2.0)
    assert good.recognises and good.n_star == 2
    assert encloses(good.negative, -0.75)  # g(0) = relu(1 - 1.5) - 0.5 relu(2 - 0.5)


def test_first_uniform_margin_brute_force():
    for s in [1.1, 1.5, 2.0]:
        sm = mpmath.mpf(s)
        n_star, gamma = C.first_uniform_margin(s)
        margins = [(mpmath.mpf(n) ** sm - n + 1) / (mpmath.mpf(n) ** sm + n - 1) for n in range(1, 5_000)]
        best = min(range(len(margins)), key=margins.__getitem__)
        assert n_star == best + 1 and encloses(gamma, margins[best])


def test_first_marker_factor_against_mpmath():
    c, w, half = -0.1, 0.3, Fraction(1, 2)
    ball_value = C.first_marker_factor_geometric(c, w, half, terms=120)

    def term(n):
        total = mpmath.mpf(0)
        for j in range(n):
            bracket = sigma(-(c + w * mpmath.mpf(1 + j) / n)) * (1 - mpmath.mpf(j) / (n - 1)) + sigma(
                c + w * mpmath.mpf(j) / n
            ) * (mpmath.mpf(j) / (n - 1))
            total += mpmath.binomial(n - 1, j) / mpmath.mpf(2) ** (n - 1) * bracket
        return mpmath.log(n) * (n - 1) / mpmath.mpf(n) ** 2 * total

    with mpmath.workdps(40):  # q = 1/2: the rest beyond 150 is below 2^-150 < 1e-45
        ref = mpmath.fsum(mpmath.mpf(2) ** -n * term(n) for n in range(2, 151))
    assert ball_value.overlaps(arb(mpmath.nstr(ref, 38), 1e-37)) and 2 * float(ball_value.rad()) < 1e-34
    assert not ball_value.overlaps(arb(mpmath.nstr(ref * (1 + mpmath.mpf(10) ** -30), 38)))
    # at w = 0, c = 0 the bracket is 1/2 (1 - j/(n-1)) + 1/2 j/(n-1) = 1/2: G_F = Gamma / 2
    assert C.first_marker_factor_geometric(0, 0, Q, 300).overlaps(C.gamma_geometric(Q, 300) / 2)


def test_strip_terms_against_mpmath():
    from flint import acb

    for (u_a, u_b), (x, y) in [((-1.0, 2.0), (0.3, 0.7)), ((-30.0, 3000.0), (-2.0, 0.001)), ((2.0, 2.0), (5.0, -1.5))]:
        z = mpmath.mpc(x, y)
        f = u_a + (u_b - u_a) * sigma(z)
        miss = sigma(-f)
        expected = [mpmath.log(1 + mpmath.exp(-f)), miss * sigma(-z), miss * sigma(z), miss * sigma(z) * sigma(-z)]
        for term, value in zip(C.strip_terms(acb(x, y), (u_a, u_b)), expected, strict=True):
            assert term.overlaps(acb(arb(mpmath.nstr(value.real, 50), 1e-45), arb(mpmath.nstr(value.imag, 50), 1e-45)))
            assert 2 * float(abs(term).rad()) < 1e-40
    assert C.strip_half_width(0).overlaps(arb.pi() / 2) and C.strip_half_width(-4).overlaps(arb.pi() / 4)
    M = C.strip_bounds((-3.0, 1.0))
    assert encloses(M[0], mpmath.log(1 + mpmath.exp(3)) + mpmath.pi / 2) and M[1] == 1


def test_sampled_phase_moments_against_mpmath():
    """Sigma_u and V_t as moments of the per-string gradients listed string by string, J by mpmath's
    numerical derivative of dL/dt (lengths to 1500; the rest is below 0.9^1500 < 1e-68)."""
    u = (-0.3, 0.45)
    moments = C.sampled_phase_moments(u, 1.0, 150.0, 1024, Q)
    q = mpmath.mpf(1) / 10
    lengths = range(1, 1501)
    mass = [q * (1 - q) ** (n - 1) / 2 for n in lengths]  # positives; the negative has mass 1/2

    def d_t(n, u_a, u_b):
        w, p = u_b - u_a, mpmath.mpf(1) / n
        return -w * sigma(-(u_a + w * p)) * mpmath.log(n) * p * (1 - p)

    with mpmath.workdps(40):
        grads = [((1 - mpmath.mpf(1) / n) / -2, -mpmath.mpf(1) / (2 * n)) for n in lengths]
        rows = [(mpmath.mpf(1) / 2, (mpmath.mpf(1) / 2, 0)), *zip(mass, grads, strict=True)]
        mean = [mpmath.fsum(m * g[i] for m, g in rows) for i in (0, 1)]
        cov = [mpmath.fsum(m * g[i] * g[j] for m, g in rows) - mean[i] * mean[j] for i, j in ((0, 0), (0, 1), (1, 1))]
        ds = [d_t(n, mpmath.mpf(u[0]), mpmath.mpf(u[1])) for n in lengths]
        v_t = (
            mpmath.fsum(m * d * d for m, d in zip(mass, ds, strict=True))
            - mpmath.fsum(m * d for m, d in zip(mass, ds, strict=True)) ** 2
        )

        def dL_dt(u_a, u_b):
            return mpmath.fsum(m * d_t(n, u_a, u_b) for m, n in zip(mass, lengths, strict=True))

        J = [
            mpmath.diff(lambda x: dL_dt(x, mpmath.mpf(u[1])), u[0]),
            mpmath.diff(lambda x: dL_dt(mpmath.mpf(u[0]), x), u[1]),
        ]
    for enclosure, value in [
        *zip(moments.sigma_u, cov, strict=True),
        (moments.v_t, v_t),
        *zip(moments.J, J, strict=True),
    ]:
        assert enclosure.overlaps(arb(mpmath.nstr(value, 35), 1e-30)) and 2 * float(enclosure.rad()) < 1e-40
    quad = J[0] ** 2 * cov[0] + 2 * J[0] * J[1] * cov[1] + J[1] ** 2 * cov[2]
    sd_ref = mpmath.sqrt(4 * 150**2 / mpmath.mpf(1024) * (v_t + quad))
    assert moments.sd_t1.overlaps(arb(mpmath.nstr(sd_ref, 35), 1e-30)) and 2 * float(moments.sd_t1.rad()) < 1e-40


def test_a_box_argument_keeps_its_radius():
    """A ball given as an argument is the box it stands for: the enclosure over t in [1, 2] contains the
    weight at interior points of the box, not only at its midpoint."""
    box = C.interval(1, 2)
    assert C.ball(box) is box
    weight = C.one_b_weight(10, box)
    for t in ("1.2", "1.8"):
        t_mp = mpmath.mpf(t)
        assert weight.contains(reference(10**t_mp / (10**t_mp + 9)))
    loss = C.loss_geometric_one_b(0, (-C.interval(3, 4), C.interval(9, 16)), Q, terms=200)
    for r in (mpmath.mpf("3.2"), mpmath.mpf("3.9")):
        ref = (
            mpmath.log(1 + mpmath.exp(-r)) / 2
            + geometric_sum(lambda n, r=r: mpmath.log(1 + mpmath.exp(r - (r * r + r) / n))) / 2
        )
        assert loss.contains(reference(ref))


def test_cover_decides_partitions_and_refuses():
    def inside_unit_disk(balls, box):
        size = balls[0] * balls[0] + balls[1] * balls[1]  # ** of a ball around 0 is nan in arb
        if size < 1:
            return True
        return False if size > 1 else None

    covered = C.cover(inside_unit_disk, [(Fraction(-1, 2), Fraction(1, 2)), (Fraction(-1, 2), Fraction(1, 2))])
    assert covered.boxes == 1 and covered.evaluations == 1
    # x (1 - x) < 0.3 on [0, 1] (its maximum is 1/4): the ball of the whole interval reaches 1, so it is cut
    covered = C.cover(lambda balls, box: True if balls[0] * (1 - balls[0]) < 0.3 else None, [(0, 1)])
    assert covered.boxes > 1 and covered.evaluations == 2 * covered.boxes - 1  # a binary tree of cuts
    with pytest.raises(ValueError, match="false on the box"):
        C.cover(inside_unit_disk, [(0, 2), (0, 2)])
    with pytest.raises(ValueError, match="max_boxes"):
        C.cover(lambda balls, box: None, [(0, 1)], max_boxes=50)


def below(limit):
    """decide for "x < limit" on a box of x: True when the whole ball is below, False when a point is not."""

    def decide(balls, box):
        if balls[0] < C.ball(limit):
            return True
        return False if balls[0].upper() >= C.ball(limit) else None

    return decide


def test_cover_refuses_a_statement_false_only_at_the_end_of_its_range_or_away_from_the_midpoints():
    # x < 1 on [0, 1] fails only at x = 1; x < 0.9 fails on [0.9, 1], away from every midpoint 1/2, 1/4, 3/4, ...
    for limit in (1, Fraction(9, 10)):
        with pytest.raises(ValueError, match=r"false on the box|max_boxes"):
            C.cover(below(limit), [(0, 1)], max_boxes=2_000)
    covered = C.cover(below(Fraction(11, 10)), [(0, 1)])
    assert covered.boxes >= 1


def test_check_tiling_proves_a_cover_and_catches_a_gap_an_overlap_a_midpoint_ball_and_a_dropped_end():
    import dataclasses

    square = [(Fraction(-1, 2), Fraction(3, 4)), (0, 1)]

    def two_humps(balls, box):  # x (1 - x) + y (1 - y) < 0.6 on the square (its largest value is 1/2)
        return True if balls[0] * (1 - balls[0]) + balls[1] * (1 - balls[1]) < 0.6 else None

    one_d = C.cover(lambda balls, box: True if balls[0] * (1 - balls[0]) < 0.3 else None, [(0, 1)])
    two_d = C.cover(two_humps, square)
    assert C.check_tiling(one_d, [(0, 1)]) == one_d.boxes > 1
    assert C.check_tiling(two_d, square) == two_d.boxes > 1
    # exact: the ends of [0, 1] tiled, every box inside, a side of zero width tiled by a point
    assert C.check_tiling(C.cover(below(2), [(1, 1)]), [(1, 1)]) == 1
    for covered, box in ((one_d, [(0, 1)]), (two_d, square)):
        last = len(covered.decided) - 1
        skipped = dataclasses.replace(covered, decided=covered.decided[1:], balls=covered.balls[1:])
        with pytest.raises(ValueError, match="a gap"):
            C.check_tiling(skipped, box)
        doubled = dataclasses.replace(
            covered, decided=(*covered.decided, covered.decided[0]), balls=(*covered.balls, covered.balls[0])
        )
        with pytest.raises(ValueError, match="an overlap"):
            C.check_tiling(doubled, box)
        at_midpoints = dataclasses.replace(
            covered, balls=tuple(tuple(C.ball((low + high) / 2) for low, high in b) for b in covered.decided)
        )
        with pytest.raises(ValueError, match="does not contain"):
            C.check_tiling(at_midpoints, box)
        wider = [(low, high + Fraction(1, 2**40)) if side == 0 else (low, high) for side, (low, high) in enumerate(box)]
        with pytest.raises(ValueError, match="a gap"):  # the cover stops short of the stated end
            C.check_tiling(covered, wider)
        with pytest.raises(ValueError, match="not inside"):  # a box beyond the stated range
            C.check_tiling(covered, [(low, high - Fraction(1, 2**40)) for low, high in box])
        assert last >= 1


@pytest.mark.parametrize("u", [(-1.0, 2.0), (0.5, -0.4), (-40.0, 60.0), (-30.0, 3000.0)])
def test_strip_certificate_covers_the_strip_and_the_ends_contain_the_limits(u):
    covered = C.strip_certificate(u)
    assert covered.boxes >= 1
    # the two end balls contain the terms far out on the strip (x = +-80, on its edge), in mpmath
    r = min(mpmath.pi / 2, mpmath.pi / abs(u[1] - u[0]))
    for end, x in zip(C.strip_end_terms(60, u), (80, -80), strict=True):
        z = mpmath.mpc(x, r)
        f = u[0] + (u[1] - u[0]) * sigma(z)
        miss = sigma(-f)
        expected = [mpmath.log(1 + mpmath.exp(-f)), miss * sigma(-z), miss * sigma(z), miss * sigma(z) * sigma(-z)]
        for term, value in zip(end, expected, strict=True):
            assert term.real.overlaps(reference(value.real)) and term.imag.overlaps(reference(value.imag))


def test_the_strip_bound_fails_on_a_strip_four_times_as_wide():
    # u = (-3, 5): r = pi/8; at 4r the imaginary part of f = u_a + w sigma(z) reaches pi, where sigma(-f) has a
    # pole: the same bisection then proves |Phi| > M on some rectangle (or cannot decide), and refuses
    from flint import acb

    u, M = (-3.0, 5.0), C.strip_bounds((-3.0, 5.0))
    wide = 4 * C.strip_half_width(8)

    def within(balls, box):
        sizes = [abs(term) for term in C.strip_terms(acb(balls[0], wide * balls[1]), u)]
        if all(size <= bound for size, bound in zip(sizes, M, strict=True)):
            return True
        return False if any(size > bound for size, bound in zip(sizes, M, strict=True)) else None

    with pytest.raises(ValueError, match=r"false on the box|max_boxes"):
        C.cover(within, [(-10, 10), (-1, 1)], max_boxes=20_000)


def test_margin_and_loss_bound_on_whole_intervals():
    covered = C.margin_certificate(Fraction(1001, 1000), 200)
    assert covered.boxes > 10
    with pytest.raises(ValueError):
        C.margin_certificate(Fraction(1, 2), 2)  # below the threshold the statement is false
    covered = C.loss_bound_certificate(Fraction(3, 2), Fraction(513, 2), Q)
    assert covered.boxes >= 1
    with pytest.raises(ValueError, match="r_low"):
        C.loss_bound_certificate(0, 1, Q)
