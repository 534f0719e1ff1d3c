"""A catalogue of bad inputs across the public API: each raises a clear error
(ValueError for a bad value, TypeError for a wrong type) whose message names the
argument. Nothing is clamped, nothing returns NaN."""

import numpy as np
import pytest
import torch

import lagtheory as L
from lagtheory import schedules as S
from lagtheory.attention_step import attention_factor, first_marker_factor, phase_one_output
from lagtheory.count_table import population_table
from lagtheory.dfa import DFA
from lagtheory.exact_recognition import horizon_at_t0, worst_one_b_length
from lagtheory.experiments.engine import cells as E
from lagtheory.experiments.statistics import paired as PS
from lagtheory.languages import CONTAINS_B
from lagtheory.model import ShallowTransformer
from lagtheory.population_gd import run_schedule

ONE_STATE = {"states": (0,), "alphabet": ("a",), "transitions": {(0, "a"): 0}, "start": 0, "accepting": set()}

CATALOGUE = {
    # lengths and counts
    "empty string (n = 0)": (lambda: L.pooled_weight(0, 0, 1.0), ValueError, r"n must be >= 1"),
    "fractional length": (lambda: L.pooled_weight(3.5, 1, 1.0), ValueError, r"n must be a whole number"),
    "k above n": (lambda: L.pooled_weight(3, 4, 1.0), ValueError, r"0 <= k <= n"),
    "NaN attention": (lambda: L.pooled_weight(3, 1, np.nan), ValueError, r"t must be finite"),
    "string for a length": (lambda: L.pooled_weight("3", 1, 0.0), TypeError, r"n must be"),
    "unknown scaling": (lambda: L.pooled_weight(3, 1, 0.0, scaling="sqrt"), ValueError, r"scaling must be"),
    # distributions
    "geometric mean 1": (lambda: L.Geometric(1.0), ValueError, r"mean must be > 1"),
    "geometric mean as text": (lambda: L.Geometric("ten"), TypeError, r"mean must be a real number"),
    "power law exponent 1": (lambda: L.PowerLaw(1.0), ValueError, r"exponent must be > 1"),
    "binomial q out of range": (lambda: L.BinomialCount(1.5), ValueError, r"q must lie in"),
    "unknown positives": (
        lambda: L.population([0, 0], [0, 0], L.Data(L.Geometric(3), 3)),
        ValueError,
        r"positives must be",
    ),
    # population and recognition
    "theta of wrong length": (
        lambda: L.population([0, 1, 2], [0, 0], L.Data(L.Geometric(3))),
        ValueError,
        r"theta must be a vector of length 2",
    ),
    "infinite u": (lambda: L.population([0, 0], [np.inf, 0], L.Data(L.Geometric(3))), ValueError, r"u must be finite"),
    "tolerance zero": (lambda: L.population([0, 0], [0, 0], L.Data(L.Geometric(3), tol=0)), ValueError, r"tol must be"),
    "hopeless tolerance for a heavy tail": (
        lambda: L.population([0, 0], [0, 1], L.Data(L.PowerLaw(1.02), "uniform")),
        ValueError,
        r"tol too small",
    ),
    "prior 0": (lambda: L.population([0, 0], [0, 0], L.Data(L.Geometric(3), prior=0)), ValueError, r"prior must be"),
    "unknown tail mode": (
        lambda: L.population([0, 0], [0, 0], L.Data(L.Geometric(3)), tail="drop"),
        ValueError,
        r"tail must",
    ),
    "tail expansion of a geometric law": (
        lambda: L.population([0, 0], [0, 0], L.Data(L.Geometric(3)), tail="expanded"),
        ValueError,
        r"tail='expanded' needs power-law",
    ),
    "lengths not a distribution": (lambda: L.population([0, 0], [0, 0], L.Data(10)), TypeError, r"lengths must be"),
    "recognition max_length 0": (lambda: L.recognition([0, 1], [-1, 3], 0), ValueError, r"max_length must be"),
    "recognition max_length beyond 1e18": (
        lambda: L.recognition([0, 1], [-1, 3], 1e19),
        ValueError,
        r"max_length must be",
    ),
    # closed forms of the first steps, the horizon at t = 0, the worst length, the torch population table
    "worst length below the threshold": (lambda: worst_one_b_length(0.5), ValueError, r"t must be > 1"),
    "worst length with max_length 0": (lambda: worst_one_b_length(1.5, 0), ValueError, r"max_length must be"),
    "horizon of a u of length 3": (
        lambda: horizon_at_t0([0.0, 1.0, 2.0]),
        ValueError,
        r"u must be a vector of length 2",
    ),
    "attention factor of a u of the wrong shape": (
        lambda: attention_factor(np.zeros((2, 3)), L.Data(L.Geometric(3))),
        ValueError,
        r"u must have shape",
    ),
    "attention factor without a length law": (
        lambda: attention_factor((0, 0), L.Data(10)),
        TypeError,
        r"lengths must be",
    ),
    "phase-one step of size 0": (lambda: phase_one_output(0.0, L.Data(L.Geometric(3))), ValueError, r"eta1 must be"),
    "first-marker factor with tol 0": (
        lambda: first_marker_factor((0, 0), L.Geometric(3), tol=0.0),
        ValueError,
        r"tol must be",
    ),
    "population table with a negative": (
        lambda: population_table([3.0], [0.0], [1.0]),
        ValueError,
        r"k must be whole numbers >= 1",
    ),
    # schedules
    "phase that trains nothing": (lambda: S.Phase(3, 0.0, 0.0), ValueError, r"must not both be 0"),
    "negative steps": (lambda: S.Phase(-3, 0.0, 1.0), ValueError, r"steps must be"),
    "empty schedule": (lambda: run_schedule([], L.Data(L.Geometric(3))), ValueError, r"phases must be"),
    "NaN initial theta": (
        lambda: run_schedule(S.joint(2, 1.0), L.Data(L.Geometric(3)), theta0=(np.nan, 0)),
        ValueError,
        r"theta0 must be finite",
    ),
    "unknown schedule name": (
        lambda: S.make_schedule("warp", S.ScheduleSettings(10, 0.1, 0.1, 2, 1.0)),
        ValueError,
        r"name must be one of",
    ),
    # experiments
    "unknown optimiser": (
        lambda: E.TrainingConfig(
            steps=10, attention_lr=0.1, output_lr=0.1, warm_steps=2, big_step=1.0, batch_size=8, optimiser="lbfgs"
        ),
        ValueError,
        r"optimiser must be one of",
    ),
    "unknown attention initialisation": (
        lambda: E.TrainingConfig(
            steps=10, attention_lr=0.1, output_lr=0.1, warm_steps=2, big_step=1.0, batch_size=8, attention_init="ones"
        ),
        ValueError,
        r"attention_init must be one of",
    ),
    "repeated seeds": (lambda: E.check_seeds([1, 1]), ValueError, r"seeds must be distinct"),
    "equivalence margin 0": (lambda: PS.tost([0.1, 0.2], 0.0), ValueError, r"margin must be"),
    # languages
    "DFA with a missing transition": (
        lambda: DFA(states=(0, 1), alphabet=("a",), transitions={(0, "a"): 1}, start=0, accepting={1}),
        ValueError,
        r"transitions is missing the pair",
    ),
    "DFA with an unknown start": (lambda: DFA(**{**ONE_STATE, "start": 7}), ValueError, r"start"),
    "DFA with an empty alphabet": (
        lambda: DFA(**{**ONE_STATE, "alphabet": (), "transitions": {}}),
        ValueError,
        r"alphabet",
    ),
    "DFA accepting outside states": (lambda: DFA(**{**ONE_STATE, "accepting": {9}}), ValueError, r"accepting"),
    "symbol outside the alphabet": (lambda: CONTAINS_B.accepts("abc"), ValueError, r"word has symbol 'c'"),
    "monoid size limit 0": (lambda: L.is_star_free(CONTAINS_B, max_monoid_size=0), ValueError, r"max_monoid_size"),
    # model
    "vocabulary of one token": (lambda: ShallowTransformer(vocab_size=1), ValueError, r"vocab_size must be"),
    "unknown readout": (lambda: ShallowTransformer(readout="mlp"), ValueError, r"readout must be one of"),
    "unknown model scaling": (lambda: ShallowTransformer(scaling="cube"), ValueError, r"scaling must be"),
    "empty string in a batch": (
        lambda: ShallowTransformer()(torch.zeros(1, 3, dtype=torch.long), torch.zeros(1, 3, dtype=torch.bool)),
        ValueError,
        r"mask must mark at least one",
    ),
    "token id out of range": (
        lambda: ShallowTransformer()(torch.full((1, 3), 5, dtype=torch.long), torch.ones(1, 3, dtype=torch.bool)),
        ValueError,
        r"tokens must lie in",
    ),
    "negative token count": (
        lambda: ShallowTransformer().forward_counts(torch.tensor([[-1.0, 2.0]], dtype=torch.float64)),
        ValueError,
        r"counts must be",
    ),
    "unknown initialisation": (
        lambda: L.initialise(ShallowTransformer(), kind="xavier"),
        ValueError,
        r"kind must be one of",
    ),
}


@pytest.mark.parametrize("case", sorted(CATALOGUE))
def test_bad_input_raises_a_clear_error(case):
    call, error, message = CATALOGUE[case]
    with pytest.raises(error, match=message):
        call()


def test_catalogue_is_large():
    assert len(CATALOGUE) >= 20
