"""The data distribution as one value (lagtheory.data.Data), the methods the sums ask of the laws,
and the bounded memory of a public population call."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

import lagtheory.heavy_tail as heavy_tail
from lagtheory import BinomialCount, Data, Geometric, OneB, PowerLaw, UniformCount, population
from lagtheory.heavy_tail import count_tail


def test_data_resolves_the_count_law_names_and_is_hashable():
    data = Data(PowerLaw(3), "uniform", prior=0.25, tol=1e-9)
    assert data.positives == UniformCount() and data.prior == 0.25 and data.tol == 1e-9
    assert Data(Geometric(10)).positives == OneB()
    assert hash(data) == hash(Data(PowerLaw(3), UniformCount(), prior=0.25, tol=1e-9))
    with pytest.raises(AttributeError):
        data.tol = 1.0  # frozen


@pytest.mark.parametrize("counts", [OneB(), UniformCount(), BinomialCount(0.3)])
def test_strings_up_to_counts_the_rows_of_the_table(counts):
    for N in (1, 2, 7, 50):
        rows = counts.table(np.arange(1, N + 1, dtype=np.int64))[0].size  # enumerated, not the closed form
        assert counts.strings_up_to(N) == rows


def test_every_count_law_of_the_package_has_tail_pieces_and_others_none():
    for counts in (OneB(), UniformCount(), BinomialCount(0.3)):
        assert count_tail(counts) is not None

    class Other(OneB):
        pass

    assert count_tail(Other()) is not None  # a subclass inherits its parent's pieces
    assert count_tail(object()) is None


def test_power_law_density_is_the_pmf_at_whole_lengths():
    law = PowerLaw(2.5)
    n = np.arange(1.0, 40.0)
    np.testing.assert_allclose(law.density(n), n**-2.5 / 1.341487257250917, rtol=1e-14)  # zeta(2.5), mpmath
    np.testing.assert_array_equal(law.density(n), law.pmf(n))


def test_sample_support_is_none_for_the_exact_geometric_draws():
    assert Geometric(5).sample_support(1e-12) is None
    N = PowerLaw(3).sample_support(1e-6)
    assert PowerLaw(3).tail_mass_bound(N) <= 1e-6 < PowerLaw(3).tail_mass_bound(N - 1)
    draws = PowerLaw(3).sample(10_000, np.random.default_rng(0), 1e-6)
    assert draws.min() >= 1 and draws.max() <= N


def test_an_expansion_too_costly_for_bounded_memory_is_refused_naming_the_arguments():
    # A review found: at u = (-30, 3000) the strip of lem-strip has half-width pi/3030, and the expansion that
    # meets tol = 0.1 with uniform counts needed about 1e9 per-string evaluations (7.3 GiB)
    data = Data(PowerLaw(3), "uniform", tol=0.1)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"tail='expanded' refused for u = \(-30, 3000\).*\|u_b - u_a\| = 3030"):
            population((0.0, 0.0), (-30.0, 3000.0), data, tail="expanded")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50e6
    # the same call with tail="auto" answers: the exact sum is short here
    answer = population((0.0, 0.0), (-30.0, 3000.0), data)
    assert answer.tail == "bounded" and answer.truncation_length < 100


def test_an_expansion_beyond_the_memory_budget_falls_back_to_the_exact_sum_under_auto(monkeypatch):
    theta, u = (0.0, 1.2), (-1.0, 2.0)
    data = Data(PowerLaw(3), "uniform", tol=1e-6)  # the exact sum: N = 1081, 584821 strings
    expanded = population(theta, u, data)
    assert expanded.tail == "expanded"
    monkeypatch.setattr(heavy_tail, "EVALUATION_BYTES", 2**30)  # every expansion beyond the 1 GiB budget
    exact = population(theta, u, data)
    assert exact.tail == "bounded" and exact.truncation_length > expanded.truncation_length
    assert abs(exact.loss - expanded.loss) <= 2 * data.tol
    assert np.max(np.abs(exact.grad_u - expanded.grad_u)) <= 2 * data.tol
    assert abs(exact.grad_t - expanded.grad_t) <= 2 * data.tol
    with pytest.raises(ValueError, match="refused"):
        population(theta, u, data, tail="expanded")
    assert math.isfinite(exact.loss)


@pytest.mark.parametrize(
    ("arguments", "keywords", "error", "message"),
    [
        ((Geometric(10),), {"prior": 1.0}, ValueError, "prior"),
        ((Geometric(10),), {"prior": 0.0}, ValueError, "prior"),
        ((Geometric(10),), {"tol": 0.0}, ValueError, "tol"),
        ((Geometric(10),), {"tol": math.nan}, ValueError, "tol"),
        ((Geometric(10), "two-b"), {}, ValueError, "two-b"),
        ((10,), {}, TypeError, "lengths must be a LengthDistribution"),
        ((Geometric(10), "one-b", 0.3), {}, TypeError, "positional"),  # prior and tol are keyword-only
    ],
)
def test_bad_data_is_refused_when_built_naming_the_argument(arguments, keywords, error, message):
    with pytest.raises(error, match=message):
        Data(*arguments, **keywords)


def test_the_sums_and_samplers_take_only_a_data_value():
    from lagtheory.attention_step import attention_factor, mean_b_fraction, phase_one_output
    from lagtheory.population_gd import run_schedule
    from lagtheory.sampled import DataSampler
    from lagtheory.schedules import output_only

    law = Geometric(10)
    for call in (
        lambda: population((0, 0), (0, 0), law),
        lambda: run_schedule(output_only(1, 1.0), law),
        lambda: DataSampler(law),
        lambda: mean_b_fraction(law),
        lambda: phase_one_output(1.0, law),
        lambda: attention_factor((0.0, 0.0), law),
    ):
        with pytest.raises(TypeError, match=r"data must be a lagtheory\.Data"):
            call()
    with pytest.raises(TypeError):
        population((0, 0), (0, 0), Data(law), "log")  # scaling and tail are keyword-only


def test_length_draws_are_the_inverse_cdf_draws_written_out():
    # the draws the samplers made before the laws had a sample method, written out here without the
    # package: geometric by the closed-form inverse CDF, the power law by searchsorted on its CDF to N
    uniform = np.random.default_rng(7).random(5000)
    q = 1 / 10
    geometric = 1 + np.floor(np.log1p(-uniform) / math.log1p(-q)).astype(np.int64)
    np.testing.assert_array_equal(Geometric(10).sample(5000, np.random.default_rng(7), 1e-12), geometric)
    law, tol = PowerLaw(3), 1e-9
    N = law.sample_support(tol)
    support = np.arange(1, N + 1, dtype=np.float64)
    cdf = np.cumsum(support**-3.0)
    power = 1 + np.searchsorted(cdf, uniform * cdf[-1], side="right")
    np.testing.assert_array_equal(law.sample(5000, np.random.default_rng(7), tol), power)
