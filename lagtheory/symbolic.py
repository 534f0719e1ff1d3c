"""The sympy objects the chapters manipulate, defined once so that no chapter
retypes a formula. Symbols follow the book: n (length), k (count of b's),
t = theta_b - theta_a, u_a, u_b, c = u_a, w = u_b - u_a.

Each function returns a fresh sympy expression; the book equation it encodes
is named in its docstring.
"""

from __future__ import annotations

import sympy as sp

n, k = sp.symbols("n k", positive=True)
t = sp.Symbol("t", real=True)
theta_a, theta_b = sp.symbols("theta_a theta_b", real=True)
u_a, u_b = sp.symbols("u_a u_b", real=True)
c, w = sp.symbols("c w", real=True)
z = sp.Symbol("z", real=True)


def sigmoid(x: sp.Expr) -> sp.Expr:
    """The logistic function ``sigma(x) = 1 / (1 + e^(-x))``.

    Parameters
    ----------
    x : sympy.Expr
        The argument.

    Returns
    -------
    sympy.Expr
        ``1 / (1 + exp(-x))``.
    """
    return 1 / (1 + sp.exp(-x))


def logistic_loss(margin: sp.Expr) -> sp.Expr:
    """The logistic loss ``l(z) = log(1 + e^(-z))`` (:eq:`eq-population-loss`).

    Parameters
    ----------
    margin : sympy.Expr
        The margin ``z`` (the label times the model output).

    Returns
    -------
    sympy.Expr
        ``log(1 + exp(-margin))``.
    """
    return sp.log(1 + sp.exp(-margin))


def attention_weight_of_b(scaling: str = "log") -> sp.Expr:
    """Weight of one b among k b's and n - k a's (:eq:`eq-attention`).

    Parameters
    ----------
    scaling : {"log", "none"}, optional
        ``"log"`` (default) for the length-scaled form; any other value (the book writes
        ``"none"``) gives the unscaled form with ``e`` in place of ``n``.

    Returns
    -------
    sympy.Expr
        ``n^theta_b / (k n^theta_b + (n - k) n^theta_a)``, or with ``e`` in place of ``n``
        unscaled (:eq:`eq-unscaled`).
    """
    base = n if scaling == "log" else sp.E
    return base**theta_b / (k * base**theta_b + (n - k) * base**theta_a)


def pooled_weight(scaling: str = "log") -> sp.Expr:
    """The pooled weight ``p(n, k; t)`` of the b's (:eq:`eq-pooled-weight`).

    Parameters
    ----------
    scaling : {"log", "none"}, optional
        ``"log"`` (default) for the length-scaled form; any other value (the book writes
        ``"none"``) gives the unscaled form with ``e`` in place of ``n``.

    Returns
    -------
    sympy.Expr
        ``k n^t / (k n^t + n - k)``, or ``k e^t / (k e^t + n - k)`` unscaled (:eq:`eq-unscaled`).
    """
    base = n if scaling == "log" else sp.E
    return k * base**t / (k * base**t + n - k)


def readout(scaling: str = "log") -> sp.Expr:
    """The readout ``F = u_a (1 - p) + u_b p`` (:eq:`eq-readout`), in the original output coordinates.

    Parameters
    ----------
    scaling : {"log", "none"}, optional
        ``"log"`` (default) for the length-scaled form; any other value (the book writes
        ``"none"``) gives the unscaled form with ``e`` in place of ``n``.

    Returns
    -------
    sympy.Expr
        ``F`` in the symbols ``u_a, u_b, n, k, t``.
    """
    p = pooled_weight(scaling)
    return u_a * (1 - p) + u_b * p


def readout_reduced(scaling: str = "log") -> sp.Expr:
    """The readout ``F = c + w p`` in the reduced coordinates ``c = u_a``, ``w = u_b - u_a`` (:eq:`eq-readout`).

    Parameters
    ----------
    scaling : {"log", "none"}, optional
        ``"log"`` (default) for the length-scaled form; any other value (the book writes
        ``"none"``) gives the unscaled form with ``e`` in place of ``n``.

    Returns
    -------
    sympy.Expr
        ``F`` in the symbols ``c, w, n, k, t``.
    """
    return c + w * pooled_weight(scaling)


def positive_loss(scaling: str = "log") -> sp.Expr:
    """Loss of one positive string, ``l(f(n, k))`` with ``f`` of :eq:`eq-readout` (:eq:`eq-population-loss`).

    Parameters
    ----------
    scaling : {"log", "none"}, optional
        ``"log"`` (default) for the length-scaled form; any other value (the book writes
        ``"none"``) gives the unscaled form with ``e`` in place of ``n``.

    Returns
    -------
    sympy.Expr
        ``log(1 + exp(-F))`` with ``F`` of :func:`readout`.
    """
    return logistic_loss(readout(scaling))


def negative_loss() -> sp.Expr:
    """Loss of the negative a^n: l(-u_a) = log(1 + e^(u_a)), independent of n and theta."""
    return logistic_loss(-u_a)


def closed_form_gradients(scaling: str = "log") -> dict[str, sp.Expr]:
    """Per-positive-string closed forms of :prf:ref:`lem-gradients` (:eq:`eq-grad-u`, :eq:`eq-grad-t`).

    Parameters
    ----------
    scaling : {"log", "none"}, optional
        ``"log"`` (default) for the length-scaled form; any other value (the book writes
        ``"none"``) gives the unscaled form with ``e`` in place of ``n``.

    Returns
    -------
    dict of str to sympy.Expr
        ``"u_a"``: ``-sigma(-f) (1 - p)``; ``"u_b"``: ``-sigma(-f) p``;
        ``"t"``: ``-(u_b - u_a) sigma(-f) s(n) p (1 - p)``, with ``s(n) = log n``
        (length scaling) or 1.
    """
    p = pooled_weight(scaling)
    f = readout(scaling)
    scale = sp.log(n) if scaling == "log" else sp.Integer(1)
    miss = sigmoid(-f)
    return {
        "u_a": -miss * (1 - p),
        "u_b": -miss * p,
        "t": -(u_b - u_a) * miss * scale * p * (1 - p),
    }
