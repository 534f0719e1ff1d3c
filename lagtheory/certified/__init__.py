"""Certified forms of the book's closed forms: ball arithmetic (python-flint's ``arb``).

Every function here evaluates one closed form of the book in ball arithmetic at
``PREC`` bits (``acb``, complex balls, for the strip of :prf:ref:`lem-strip`): the result
is a ball (midpoint and radius) that provably contains
the exact value of the formula at the given arguments, with every rounding error
and every truncated tail of an infinite sum bounded rigorously inside the radius.
An inequality that holds for the whole ball (``a < b`` between arbs is True only
when it holds for every pair of points of the two balls) is thereby proved for
that instance. This is an independent second path beside the package's float64
forms: nothing here calls them.

What a certificate proves is the inequality at the instance evaluated (or on a
box of parameters, where a function covers one by subdivision), not the theorem
for all parameters; see the contributing page ("Certified checks").

Arguments are exact: ints, :class:`fractions.Fraction`, floats (taken as the
exact binary number they are) or arbs (balls, e.g. an enclosure of ``t1``).
Infinite sums over lengths are summed up to ``terms`` and their tails added as
an interval ``[0, bound]`` with the bound named in each docstring.

The modules, one per chapter (every name below is importable as ``certified.<name>``)::

    balls.py              balls of exact arguments, intervals, ends and mpmath values as exact rationals, tails in the radius, decided floors, printing; sigmoid, softplus, relu
    laws.py               the length and count laws of the setting chapter, their masses and tails
    boxes.py              statements decided on whole boxes of parameters by bisection (branch and bound)
    tail_expansion.py     the setting chapter's tail expansion: thm-tail-expansion's expectations, lem-strip, lem-midpoint-sum
    representation.py     pooled weight, population loss and gradient, unscaled softmax
    threshold.py          thm-threshold: odds, worst length, horizon, loss bounds
    three_phase.py        thm-three-phase and prop-sampled-phases
    failures.py           thm-one-step
    generalisations.py    prop-d-tokens, several b's, the ReLU readout, FIRST
    icl.py                the empirical ICL chapter's closed forms (exact rationals)
"""

from .balls import (
    PREC,
    Number,
    ball,
    describe,
    ends,
    floor_certified,
    interval,
    mp_fraction,
    relu,
    sigmoid,
    softplus,
    width_bound,
    with_tail,
)
from .boxes import Cover, check_tiling, cover
from .failures import (
    gamma_geometric,
    recovery_lower_bounds,
    saturation_factor_geometric,
    small_sigma_success,
)
from .generalisations import (
    ReluCertificate,
    SeveralBCertificate,
    d_token_phase_two,
    first_marker_factor_geometric,
    first_uniform_margin,
    relu_readout_certificate,
    several_b_certificate,
)
from .icl import (
    icl_mean_error,
    icl_optimal_step,
)
from .laws import (
    geometric_log_tail,
    geometric_pmf,
    geometric_tail,
    kappa_binomial,
    kappa_uniform,
    power_law_log_tail,
    power_law_pmf,
    power_law_tail,
)
from .representation import (
    PopulationGradient,
    one_b_weight,
    pooled_weight,
    population_gradient,
    pull_on_u_b,
    unscaled_best_margin,
    unscaled_horizon,
    unscaled_weight,
)
from .tail_expansion import (
    midpoint_constants,
    power_law_tail_terms,
    strip_bounds,
    strip_certificate,
    strip_end_terms,
    strip_half_width,
    strip_terms,
)
from .three_phase import (
    PhaseThree,
    PhaseTwo,
    SampledMoments,
    attention_factor_geometric,
    mean_b_fraction_geometric,
    phase_one_output,
    phase_three_certificate,
    phase_two,
    sampled_phase_moments,
)
from .threshold import (
    HorizonCertificate,
    horizon,
    horizon_certificate,
    loss_bound_certificate,
    loss_geometric_one_b,
    margin_certificate,
    odds,
    threshold_loss_bound,
    worst_one_b_length,
)

__all__ = [  # noqa: RUF022 (in the order of the modules above: the API page lists them so)
    "PREC",
    "Number",
    "ball",
    "interval",
    "ends",
    "mp_fraction",
    "with_tail",
    "floor_certified",
    "width_bound",
    "describe",
    "sigmoid",
    "softplus",
    "relu",
    "Cover",
    "cover",
    "check_tiling",
    "geometric_pmf",
    "geometric_tail",
    "power_law_pmf",
    "power_law_tail",
    "geometric_log_tail",
    "power_law_log_tail",
    "kappa_uniform",
    "kappa_binomial",
    "power_law_tail_terms",
    "strip_half_width",
    "strip_bounds",
    "strip_terms",
    "strip_end_terms",
    "strip_certificate",
    "midpoint_constants",
    "pooled_weight",
    "one_b_weight",
    "unscaled_weight",
    "PopulationGradient",
    "population_gradient",
    "pull_on_u_b",
    "unscaled_best_margin",
    "unscaled_horizon",
    "odds",
    "worst_one_b_length",
    "HorizonCertificate",
    "horizon_certificate",
    "horizon",
    "loss_geometric_one_b",
    "threshold_loss_bound",
    "margin_certificate",
    "loss_bound_certificate",
    "mean_b_fraction_geometric",
    "phase_one_output",
    "attention_factor_geometric",
    "PhaseTwo",
    "phase_two",
    "SampledMoments",
    "sampled_phase_moments",
    "PhaseThree",
    "phase_three_certificate",
    "gamma_geometric",
    "saturation_factor_geometric",
    "recovery_lower_bounds",
    "small_sigma_success",
    "d_token_phase_two",
    "SeveralBCertificate",
    "several_b_certificate",
    "ReluCertificate",
    "relu_readout_certificate",
    "first_uniform_margin",
    "first_marker_factor_geometric",
    "icl_optimal_step",
    "icl_mean_error",
]
