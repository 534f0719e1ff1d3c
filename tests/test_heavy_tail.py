"""The tail expansion of the population sums over power-law lengths (book thm-tail-expansion):
its error against brute-force sums (tight where the brute force is complete, loose where it
is not), against mpmath's Euler-Maclaurin summation at tol 1e-12, and its proven bound."""

import functools
import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from lagtheory import BinomialCount, Data, OneB, PowerLaw, UniformCount, population
from lagtheory.heavy_tail import string_bounds, tail_expansion


@functools.lru_cache(maxsize=3)
def _strings_up_to(counts, last):
    """``counts.table`` over the lengths 1..last (rows in order of n) and the row where each n begins: built
    once per count law and shared by the brute-force sums (the binomial table took most of each sum's time)."""
    n, k, kappa = counts.table(np.arange(1, last + 1))
    return n, k, kappa, np.searchsorted(n, np.arange(1, last + 2), side="left")


@pytest.fixture(scope="module", autouse=True)
def _drop_the_tables():
    """The shared tables (up to ~100 MB each) are let go once this module's tests are done."""
    yield
    _strings_up_to.cache_clear()


def brute_expectations(law, counts, t, u_a, u_b, first, last, log_scaled=True):
    """sum_{first <= n <= last} pi(n) sum_k kappa(k | n) (loss, d/du_a, d/du_b, d/dt terms), written
    out from the definitions with the pooled weight p = k n^t / (k n^t + n - k) (eq-pooled-weight)."""
    table_n, table_k, table_kappa, begins = _strings_up_to(counts, last)
    total = np.zeros(4)
    for start in range(first, last + 1, 500):
        rows = slice(begins[start - 1], begins[min(start + 500, last + 1) - 1])  # n in [start, start + 500)
        n, k, kappa = table_n[rows], table_k[rows], table_kappa[rows]
        score = n**t if log_scaled else math.exp(t)
        p = k * score / (k * score + n - k)
        f = u_a + (u_b - u_a) * p
        miss = 1 / (1 + np.exp(f))
        scale = np.log(n) if log_scaled else 1.0
        terms = np.stack([np.log1p(np.exp(-f)), miss * (1 - p), miss * p, miss * p * (1 - p) * scale])
        total += terms @ (n**-law.exponent / law.normaliser * kappa)
    return total


COUNT_LAWS = [OneB(), UniformCount(), BinomialCount(0.3)]
POINTS = [(1.2, -1.0, 2.0), (0.3, 0.5, -0.4), (-0.7, -2.0, 3.0), (2.5, 1.0, 9.0)]


@pytest.mark.parametrize("counts", COUNT_LAWS, ids=repr)
@pytest.mark.parametrize("t,u_a,u_b", POINTS)
@pytest.mark.parametrize("log_scaled", [True, False])
def test_tail_within_its_bound_where_brute_force_is_complete(counts, t, u_a, u_b, log_scaled):
    # s = 6: beyond n = 3000 the power law has mass < 1e-18, so the brute-force tail is exact
    law = PowerLaw(6.0)
    expansion = tail_expansion(law, counts, t, u_a, u_b, log_scaled, 1e-14, 1e-14)
    assert expansion is not None
    brute = brute_expectations(law, counts, t, u_a, u_b, expansion.exact_length + 1, 3000, log_scaled)
    error = np.abs(expansion.tail - brute)
    assert np.all(error <= expansion.bound + 1e-17), (error, expansion.bound)
    budget = string_bounds(u_a, u_b) * np.array([1e-14, 1e-14, 1e-14, 1.0]) + np.array([0, 0, 0, 1e-14])
    assert np.all(expansion.bound <= budget * (1 + 1e-12))


@pytest.mark.parametrize("counts", COUNT_LAWS, ids=repr)
def test_population_at_1e12_against_brute_force_up_to_3000(counts):
    # the brute force misses n > 3000, at most P(n > 3000) times the per-string bound
    law = PowerLaw(3.0)
    theta, u = (0.0, 1.2), (-1.0, 2.0)
    result = population(theta, u, Data(law, counts, tol=1e-12))
    assert result.tail == "expanded"
    brute = brute_expectations(law, counts, 1.2, -1.0, 2.0, 1, 3000)
    missed = string_bounds(-1.0, 2.0) * law.tail_mass_bound(3000)
    missed[3] = law.tail_log_moment_bound(3000)
    loss = 0.5 * math.log1p(math.e**-1.0) + 0.5 * brute[0]
    grad_t = -0.5 * 3.0 * brute[3]
    assert abs(result.loss - loss) <= 0.5 * missed[0] + 1e-12
    assert abs(result.grad_theta[1] - grad_t) <= 0.5 * 3.0 * missed[3] + 1e-12
    assert abs(result.grad_u[0] - (0.5 / (1 + math.e) - 0.5 * brute[1])) <= 0.5 * missed[1] + 1e-12
    assert abs(result.grad_u[1] + 0.5 * brute[2]) <= 0.5 * missed[2] + 1e-12


def mpmath_one_b(theta, u, s, prior):
    """Loss and gradients for one b by mpmath (30 digits): the lengths below 200 summed, the rest
    by mpmath's Euler-Maclaurin summation of the analytic per-length term."""
    mpmath.mp.dps = 30
    t = mpmath.mpf(theta[1]) - theta[0]
    u_a, u_b = mpmath.mpf(u[0]), mpmath.mpf(u[1])
    zeta = mpmath.zeta(s)

    def term(n, i):
        p = 1 / (1 + (n - 1) * mpmath.power(n, -t))
        f = u_a + (u_b - u_a) * p
        miss = 1 / (1 + mpmath.exp(f))
        value = [mpmath.log(1 + mpmath.exp(-f)), miss * (1 - p), miss * p, miss * p * (1 - p) * mpmath.log(n)][i]
        return value * mpmath.power(n, -s) / zeta

    expected = []
    for i in range(4):
        head = mpmath.fsum(term(mpmath.mpf(n), i) for n in range(1, 200))
        expected.append(head + mpmath.nsum(lambda n, i=i: term(n, i), [200, mpmath.inf], method="euler-maclaurin"))
    loss = (1 - prior) * mpmath.log(1 + mpmath.exp(u_a)) + prior * expected[0]
    grad_t = -prior * (u_b - u_a) * expected[3]
    grad_ua = (1 - prior) / (1 + mpmath.exp(-u_a)) - prior * expected[1]
    return np.array([float(loss), float(grad_t), float(grad_ua), float(-prior * expected[2])])


@pytest.mark.parametrize("s,theta,u,prior", [(3.0, (0.0, 1.2), (-1.0, 2.0), 0.5), (2.5, (0.4, -0.3), (0.5, -1.5), 0.3)])
def test_population_at_1e12_against_mpmath(s, theta, u, prior):
    result = population(theta, u, Data(PowerLaw(s), prior=prior, tol=1e-12))
    assert result.tail == "expanded"
    got = np.array([result.loss, result.grad_theta[1], result.grad_u[0], result.grad_u[1]])
    assert np.all(np.abs(got - mpmath_one_b(theta, u, s, prior)) <= 1e-12 + 1e-15)


def test_exact_sum_kept_where_it_is_short():
    # the expansion only replaces sums over more than 2e5 strings
    result = population((0.0, 1.2), (-1.0, 2.0), Data(PowerLaw(4.0), tol=1e-12))
    assert result.tail == "bounded" and result.truncation_length == 10342


def test_too_heavy_a_tail_is_refused_clearly():
    with pytest.raises(ValueError, match="tol too small"):
        population((0.0, 0.0), (0.0, 1.0), Data(PowerLaw(1.02), "uniform", tol=1e-12))


@pytest.mark.parametrize("counts", ["one-b", "uniform", BinomialCount(0.3)], ids=repr)
def test_expanded_and_bounded_tails_agree_within_tol(counts):
    # PowerLaw(4) at 1e-8: term by term visits at most 2e5 strings ("auto" keeps it), expanded on request
    theta, u = (0.2, 1.1), (-0.5, 1.5)
    bounded = population(theta, u, Data(PowerLaw(4.0), counts, tol=1e-8))
    expanded = population(theta, u, Data(PowerLaw(4.0), counts, tol=1e-8), tail="expanded")
    assert bounded.tail == "bounded" and expanded.tail == "expanded"
    assert abs(bounded.loss - expanded.loss) <= 2e-8
    assert np.all(np.abs(bounded.grad_theta - expanded.grad_theta) <= 2e-8)
    assert np.all(np.abs(bounded.grad_u - expanded.grad_u) <= 2e-8)


@pytest.mark.parametrize(("A", "w"), [(4, 3.0), (12, 0.5), (48, 40.0)])
def test_uniform_inner_bound_has_the_constant_C_A_of_the_book(A, w):
    # lem-midpoint-sum / thm-tail-expansion: |E_in| <= C_A M sum_{n > N0} pi(n) s(n) / n with
    # C_A = 13 / (360 rho^4 (A - 1/2)^3) + 1 / (48 rho^3 A^3), rho = sin(r / 2), r the strip half-width;
    # without s(n), the sum is at most int_{N0}^inf x^-(s+1) dx / zeta(s) = N0^-s / (s zeta(s)) (by hand)
    from lagtheory.heavy_tail import _Problem, count_tail, strip_half_width

    law, counts = PowerLaw(3.5), UniformCount()
    r = strip_half_width(w)
    problem = _Problem(law, counts, count_tail(counts), -1.0, w - 1.0, 0.3, True, r, string_bounds(-1.0, w - 1.0))
    N0 = 1000
    plain, _ = count_tail(counts).inner_bound(problem, N0, A)
    rho = mpmath.sin(mpmath.mpf(r) / 2)
    C_A = mpmath.mpf(13) / 360 / (rho**4 * (A - mpmath.mpf(1) / 2) ** 3) + mpmath.mpf(1) / 48 / (rho**3 * A**3)
    expected = C_A * mpmath.mpf(N0) ** -3.5 / (mpmath.mpf(3.5) * mpmath.zeta(3.5))
    assert plain == pytest.approx(float(expected), rel=1e-12, abs=0)


def _h_mpmath(kappa, n, t, u_a, u_b, term):
    """h(kappa; n) of thm-tail-expansion in mpmath, written from the book: Phi at the log-odds
    z = log kappa - log(n - kappa) + t log n, Phi_t times log n."""
    z = mpmath.log(kappa) - mpmath.log(n - kappa) + t * mpmath.log(n)
    p = 1 / (1 + mpmath.exp(-z))
    f = u_a + (u_b - u_a) * p
    miss = 1 / (1 + mpmath.exp(f))
    return [mpmath.log(1 + mpmath.exp(-f)), miss * (1 - p), miss * p, miss * p * (1 - p) * mpmath.log(n)][term]


@pytest.mark.parametrize("t,u_a,u_b", [(1.2, -1.0, 2.0), (-0.7, -2.0, 3.0)])
@pytest.mark.parametrize("A", [4, 8])
def test_uniform_stand_in_error_is_the_next_euler_maclaurin_term(t, u_a, u_b, A):
    # m(n) - m~(n) = E_n / n, E_n the remainder of lem-midpoint-sum for g = h(.; n) on [A + 1, n - A - 1].
    # After the difference correction the leading term of E_n is (7/5760 + 1/576) [g'''] =
    # (17/5760) (g'''(n - A - 1/2) - g'''(A + 1/2)) (Euler-Maclaurin's next term, plus the central
    # differences' g''' / 24). Checked to 10% against m(n) summed over every k in mpmath (30 digits):
    # a wrong weight of the correction, wrong bulk limits or a cut bulk integral is off by > 10x.
    from lagtheory.heavy_tail import _Problem, count_tail, strip_half_width

    n, counts = 300, UniformCount()
    problem = _Problem(
        PowerLaw(6.0),
        counts,
        count_tail(counts),
        u_a,
        u_b,
        t,
        True,
        strip_half_width(u_b - u_a),
        string_bounds(u_a, u_b),
    )
    stand_in, _ = count_tail(counts).surrogate(np.array([float(n)]), problem, A)
    with mpmath.workdps(30):
        half = mpmath.mpf(1) / 2
        for term in range(4):
            p_one = [mpmath.log(1 + mpmath.exp(-u_b)), 0, 1 / (1 + mpmath.exp(u_b)), 0][term]  # k = n: p = 1
            exact = (mpmath.fsum(_h_mpmath(mpmath.mpf(k), n, t, u_a, u_b, term) for k in range(1, n)) + p_one) / n
            remainder = n * (exact - mpmath.mpf(float(stand_in[term, 0])))

            def third(x, term=term):
                return mpmath.diff(lambda y: _h_mpmath(y, n, t, u_a, u_b, term), x, 3)

            expected = mpmath.mpf(17) / 5760 * (third(n - A - half) - third(A + half))
            assert abs(remainder - expected) <= 0.1 * abs(expected) + 1e-9, (term, remainder, expected)


@pytest.mark.parametrize("w", [0.0, 1.0, -2.0, 3.0, -40.0, 3030.0])
def test_strip_half_width_is_the_lemma_s_and_the_bounds_hold_on_its_edge(w):
    # lem-strip: r = min(pi/2, pi/|w|); on Im z = r, |sigma(-f)| <= 1 (mpmath, 30 digits). A strip
    # twice as wide reaches Im f = pi, where sigma(-f) has a pole: the bound fails there.
    from lagtheory.heavy_tail import strip_half_width

    with mpmath.workdps(30):
        stated = mpmath.pi / 2 if w == 0 else min(mpmath.pi / 2, mpmath.pi / abs(mpmath.mpf(w)))
        r = strip_half_width(w)
        assert r == pytest.approx(float(stated), rel=1e-15, abs=0)
        u_a = -w / 2
        worst = max(
            abs(1 / (1 + mpmath.exp(u_a + w / (1 + mpmath.exp(-mpmath.mpc(x, r)))))) for x in np.linspace(-12, 12, 481)
        )
        assert worst <= 1


@pytest.mark.parametrize("distance,radius", [(0.0, math.pi / 2), (0.0, 0.3), (1.5, 1.0), (6.0, 0.01)])
def test_logistic_density_bound_is_the_maximum_on_the_panel_disks(distance, radius):
    # max |sigma'(xi)| over |Re xi| >= distance, |Im xi| <= radius, by mpmath on a grid (attained at the
    # corner distance + i radius): the bound may neither fall below it nor exceed it by more than rounding
    from lagtheory.heavy_tail import logistic_density_bound

    with mpmath.workdps(30):
        grid = [
            abs(mpmath.exp(-xi) / (1 + mpmath.exp(-xi)) ** 2)
            for a in np.linspace(distance, distance + 4, 41)
            for b in np.linspace(-radius, radius, 41)
            for xi in [mpmath.mpc(a, b)]
        ]
    bound = float(logistic_density_bound(np.array([distance]), radius)[0])
    assert max(grid) <= bound * (1 + 1e-12) and max(grid) >= bound * (1 - 1e-12)


def test_quadrature_and_midpoint_constants():
    # gamma_8: the 8-point Gauss-Legendre error on x^16 over [0, 1] (mpmath); 13/5760 and 1/576 exactly
    from fractions import Fraction

    from lagtheory.heavy_tail import CELL_CONSTANT, END_CONSTANT, GL_CONSTANT, GL_NODES

    nodes, weights = np.polynomial.legendre.leggauss(GL_NODES)
    with mpmath.workdps(40):
        gauss = mpmath.fsum(
            mpmath.mpf(w) / 2 * ((mpmath.mpf(x) + 1) / 2) ** (2 * GL_NODES) for x, w in zip(nodes, weights, strict=True)
        )
        error = float(mpmath.mpf(1) / (2 * GL_NODES + 1) - gauss)
    assert GL_CONSTANT == pytest.approx(error, rel=1e-5, abs=0)
    assert abs(Fraction(CELL_CONSTANT) - Fraction(13, 5760)) <= Fraction(13, 5760) / 10**15
    assert abs(Fraction(END_CONSTANT) - Fraction(1, 576)) <= Fraction(1, 576) / 10**15


@pytest.mark.parametrize("s,t,w,A,N0", [(6.0, 1.2, 3.0, 4, 256), (3.0, -0.7, 5.0, 8, 512), (2.5, 0.3, 0.9, 12, 1024)])
def test_outer_bound_and_truncation_are_the_theorem_s(s, t, w, A, N0):
    # thm-tail-expansion item 2 for uniform counts, written out in mpmath from the statement: phi, rho1, y0,
    # K, then E_out = 13/240 int_{N0 - 1/2}^inf F / (rho1 y)^4 + F(N0) / (96 (rho1 N0)^3), per unit of M; and
    # the rest of the length integral beyond e^V, K int_{e^V}^inf pi(x) sbar(x) dx. Each to 1e-9.
    from lagtheory.heavy_tail import _outer_bound, _outer_geometry, _plan_outer_integral, _Problem, count_tail

    counts, law = UniformCount(), PowerLaw(s)
    u_a, u_b = -1.0, w - 1.0
    problem = _Problem(
        law, counts, count_tail(counts), u_a, u_b, t, True, min(math.pi / 2, math.pi / w), string_bounds(u_a, u_b)
    )
    rho1_p, phi_p, K_p = _outer_geometry(problem, N0, A)
    plain, logged = _outer_bound(problem, N0, rho1_p, phi_p, K_p)
    with mpmath.workdps(30):
        r = min(mpmath.pi / 2, mpmath.pi / w)
        phi = min(r / (2 + abs(t)), mpmath.asin(mpmath.mpf(4) / (s + 4)))
        rho1 = mpmath.sin(phi) * (N0 - (2 * A + 1)) / N0
        y0 = N0 * (1 - rho1)
        K = 1 + (2 * A + mpmath.mpf(7) / 6) / y0
        assert (float(rho1), float(phi), float(K)) == pytest.approx((rho1_p, phi_p, K_p), rel=1e-12, abs=0)
        zeta_s = mpmath.zeta(s)
        for hat, package in [(lambda y: 1, plain), (lambda y: mpmath.log(y * (1 + rho1)) + phi, logged)]:

            def F(y, hat=hat):
                return K * (y * (1 - rho1)) ** -s * hat(y) / zeta_s

            stated = mpmath.mpf(13) / 240 * mpmath.quad(lambda y, F=F: F(y) / (rho1 * y) ** 4, [N0 - 0.5, mpmath.inf])
            stated += F(mpmath.mpf(N0)) / (96 * (rho1 * N0) ** 3)
            assert package == pytest.approx(float(stated), rel=1e-9, abs=0)
        plan = _plan_outer_integral(problem, N0, rho1_p, phi_p, K_p, 1e-12)
        assert plan is not None
        edges, (truncation_plain, truncation_log), _ = plan
        end = mpmath.exp(mpmath.mpf(float(edges[-1])))
        for sbar, package in [(lambda x: 1, truncation_plain), (mpmath.log, truncation_log)]:
            stated = K * mpmath.quad(lambda x, sbar=sbar: x**-s * sbar(x), [end, mpmath.inf]) / zeta_s
            assert package == pytest.approx(float(stated), rel=1e-9, abs=0)


def test_quadrature_bound_of_the_outer_integral_is_the_book_s():
    # per panel of length L in v = log x: gamma_8 L (L/R)^16 times the integrand's bound on the v-disks of
    # radius R = log(1 + rho1), (1 + rho1) K (1 - rho1)^-s e^((1 - s) a) / zeta(s) at the panel's left end a
    # (times log(e^(a + L) (1 + rho1)) + phi for the log-weighted term), written out in mpmath
    from lagtheory.heavy_tail import _outer_geometry, _plan_outer_integral, _Problem, count_tail

    s, t, w, A, N0 = 6.0, 1.2, 3.0, 4, 256
    counts, law = UniformCount(), PowerLaw(s)
    problem = _Problem(
        law, counts, count_tail(counts), -1.0, w - 1.0, t, True, math.pi / w, string_bounds(-1.0, w - 1.0)
    )
    rho1, phi, K = _outer_geometry(problem, N0, A)
    edges, _, (plain, logged) = _plan_outer_integral(problem, N0, rho1, phi, K, 1e-14)
    with mpmath.workdps(30):
        gamma = mpmath.factorial(8) ** 4 / (17 * mpmath.factorial(16) ** 2)
        radius = mpmath.log1p(rho1)
        width = mpmath.mpf(float(edges[1])) - mpmath.mpf(float(edges[0]))
        front = (1 + rho1) * K * (1 - mpmath.mpf(rho1)) ** -s / mpmath.zeta(s)
        panels = [front * mpmath.exp((1 - s) * mpmath.mpf(float(a))) for a in edges[:-1]]
        per_panel = gamma * width * (width / radius) ** 16
        stated_plain = per_panel * mpmath.fsum(panels)
        stated_log = per_panel * mpmath.fsum(
            value * (mpmath.mpf(float(a)) + width + radius + phi) for value, a in zip(panels, edges[:-1], strict=True)
        )
    assert plain == pytest.approx(float(stated_plain), rel=1e-9, abs=0)
    assert logged == pytest.approx(float(stated_log), rel=1e-9, abs=0)


@pytest.mark.parametrize(("q", "J", "N0"), [(0.3, 4, 256), (0.5, 8, 512), (0.1, 6, 1024)])
def test_binomial_inner_bound_is_the_book_s(q, J, N0):
    # thm-tail-expansion item 1, binomial k: e (J + 1) / (rho_q^J (1 - (1 - q)^N0)) sum_{n > N0} pi(n) sbar(n)
    # mu_J^+(n) / n^J per unit of M, the sum bounded by its integral from N0; mu_J^+ from the cumulants of a
    # Bernoulli(q) in sympy (the moment recursion run with |c_i|), not from the package
    from lagtheory.heavy_tail import _Problem, count_tail

    s, w = 3.0, 3.0
    counts = BinomialCount(q)
    problem = _Problem(
        PowerLaw(s), counts, count_tail(counts), -1.0, w - 1.0, 0.5, True, math.pi / w, string_bounds(-1.0, w - 1.0)
    )
    plain, logged = count_tail(counts).inner_bound(problem, N0, J)
    x, v, qq = sp.symbols("x v q", positive=True)
    log_mgf = sp.log(1 - qq + qq * sp.exp(v))
    c = [0] + [sp.diff(log_mgf, v, i).subs(v, 0).subs(qq, sp.Rational(str(q))) for i in range(1, J + 1)]
    mu = [sp.Integer(1), sp.Integer(0)]  # central moments of Binomial(x, q) from the cumulants x c_i (i >= 2)
    for m in range(2, J + 1):
        mu.append(sp.expand(sum(sp.binomial(m - 1, i - 1) * x * abs(c[i]) * mu[m - i] for i in range(2, m + 1))))
    upper = sp.Poly(mu[J], x).all_coeffs()[::-1]  # in x^0, x^1, ...
    with mpmath.workdps(30):
        rho_q = mpmath.sin(mpmath.pi / w / 2) * min(q, 1 - q)
        factor = mpmath.e * (J + 1) / (rho_q**J * mpmath.zeta(s) * (1 - (1 - mpmath.mpf(q)) ** N0))
        for sbar, package in [(lambda y: 1, plain), (mpmath.log, logged)]:
            integral = mpmath.fsum(
                mpmath.mpf(sp.Rational(coefficient).p)
                / sp.Rational(coefficient).q
                * mpmath.quad(lambda y, i=i, sbar=sbar: y ** (i - J - s) * sbar(y), [N0, mpmath.inf])
                for i, coefficient in enumerate(upper)
                if coefficient > 0
            )
            assert package == pytest.approx(float(factor * integral), rel=1e-9, abs=0)
