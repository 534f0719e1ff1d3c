"""The sympy expressions of lagtheory.symbolic against each other and against numerics."""

import sympy as sp

from lagtheory import pooled_weight
from lagtheory import symbolic as S


def test_pooled_weight_is_k_times_attention_on_one_b():
    expr = S.k * S.attention_weight_of_b() - S.pooled_weight().subs(S.t, S.theta_b - S.theta_a)
    assert sp.simplify(expr.subs(S.theta_a, 0)) == 0


def test_closed_form_gradients_are_derivatives():
    loss = S.positive_loss()
    grads = S.closed_form_gradients()
    assert sp.simplify(sp.diff(loss, S.u_a) - grads["u_a"]) == 0
    assert sp.simplify(sp.diff(loss, S.u_b) - grads["u_b"]) == 0
    assert sp.simplify(sp.diff(loss, S.t) - grads["t"]) == 0


def test_unscaled_gradient():
    loss = S.positive_loss("none")
    assert sp.simplify(sp.diff(loss, S.t) - S.closed_form_gradients("none")["t"]) == 0


def test_numeric_agreement_with_package():
    expr = S.pooled_weight()
    value = float(expr.subs({S.n: 1000, S.k: 3, S.t: sp.Rational(7, 10)}))
    assert abs(value - pooled_weight(1000, 3, 0.7)) < 1e-15


def test_reduced_readout_matches():
    f = S.readout().subs(S.u_b, S.c + S.w).subs(S.u_a, S.c)
    assert sp.simplify(f - S.readout_reduced()) == 0


def test_negative_loss_is_softplus():
    assert sp.simplify(S.negative_loss() - sp.log(1 + sp.exp(S.u_a))) == 0
