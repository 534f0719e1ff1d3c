"""The shallow transformer of the book (:prf:ref:`def-model`), in torch.

A vocabulary of ``d`` tokens with ids ``0..d-1`` (for Sigma = {a, b}: a = 0,
b = 1) and one-hot embeddings ``e_v``. One attention layer with a fixed query
gives the token ``v`` the score ``theta[v]``; with length scaling the weights
of a string ``x_1..x_n`` are

    alpha_i = n^theta[x_i] / sum_j n^theta[x_j]          (:eq:`eq-attention`)

and without it ``alpha_i`` is proportional to ``exp(theta[x_i])`` (book eq.
:eq:`eq-unscaled`). The pooled vector ``h = sum_i alpha_i e_(x_i)`` is a point of
the simplex and the readout is linear, ``f = u . h`` (:eq:`eq-readout`), or
a one-hidden-layer ReLU network ``f = sum_j a_j relu(v_j . h + b_j)``.

Positional marker (used for the language FIRST, statement :prf:ref:`prop-first`):
with ``first_position_score=True`` a learnable scalar ``s`` (initially 0) is
added to the score of position 1 only, so under length scaling position 1 has
weight ``n^(theta[x_1] + s) / (n^(theta[x_1] + s) + sum_(j>1) n^theta[x_j])``;
with ``theta = 0`` this is ``n^s / (n^s + n - 1)``.

Two ways in: ``forward(tokens, mask)`` on padded token strings, and
``forward_counts(counts)`` on token counts, which is exact because the model
is permutation invariant (apart from position 1 when the marker is on, whose
token is then passed as ``first_token``). The count path works in log space,
``logit_v = log(count_v) + theta_v log n``, and stays finite, with finite
gradients, for lengths up to 1e18.

Everything is float64.
"""

from __future__ import annotations

import math

import torch

from ._validation import check_integer, check_positive, check_scaling
from .count_forward import linear_readout, pooled_from_counts, score_scale
from .memory import MEMORY_BUDGET, check_memory_budget, require_memory

PARAMETER_BYTES = 56
"""Bytes per trained number while the model trains on a batch of one string, seven float64 (the parameter,
its gradient, Adam's two moments, and up to three parameter-sized temporaries of the backward pass and the
step), an upper bound. One step of Adam on one string peaks at 40 to 48 bytes per number (the resident set's
growth, benchmarks/bench.py's memory rows; tests/test_memory.py), one of SGD at 22 to 32. The
estimate :class:`ShallowTransformer` compares with its ``memory_budget``; a batch's own tensors (each
intermediate of :meth:`~ShallowTransformer.forward_counts` is batch by ``vocab_size``) are its caller's to count
(:func:`lagtheory.sampled.run_sampled`)."""

_READOUTS = ("linear", "ffn")
_INITIALISATIONS = ("zero", "symmetric", "random")


class ShallowTransformer(torch.nn.Module):
    """One length-scaled attention layer with a fixed query, then a readout (:prf:ref:`def-model`).

    Parameters
    ----------
    vocab_size : int, optional
        The number d of tokens, an integer >= 2 (default 2: a = 0, b = 1).
    readout : {"linear", "ffn"}, optional
        The linear readout ``f = u . h`` (:eq:`eq-readout`) or the one-hidden-layer ReLU network.
    hidden : int or None, optional
        The width of the ReLU layer, an integer >= 1 for ``readout="ffn"``; must be None for
        ``readout="linear"``.
    scaling : {"log", "none"}, optional
        Length-scaled scores (:eq:`eq-attention`) or plain softmax scores (:eq:`eq-unscaled`).
    first_position_score : bool, optional
        Whether position 1 carries the learnable extra score ``s`` (the marker for FIRST).
    memory_budget : int, optional
        The most bytes the parameters may take while they train on one string, with their gradients,
        Adam's state and a step's temporaries, ``PARAMETER_BYTES`` each
        (:data:`lagtheory.memory.MEMORY_BUDGET` by default); refused before anything is allocated, naming
        ``vocab_size`` and ``hidden``. Keyword only.

    Raises
    ------
    ValueError
        If ``vocab_size`` or ``hidden`` is out of range (or the parameters need more than
        ``memory_budget``), ``readout`` or ``scaling`` is not one of the names above, or ``hidden``
        is given for the linear readout.
    TypeError
        If ``vocab_size`` or ``hidden`` is not an integer, or ``first_position_score`` not a bool.

    Notes
    -----
    The trained tensors (``torch.nn.Parameter``, float64, zero at construction) are
    ``theta`` (d,) the attention scores; ``u`` (d,) for the linear readout, or
    ``V`` (hidden, d), ``b`` (hidden,), ``a`` (hidden,) for the ReLU readout;
    ``s`` (scalar) the position-1 score when ``first_position_score=True``.

    Two pieces of arithmetic are arranged so that the zero attention gradient
    of symmetric initialisations (:prf:ref:`thm-one-step` (a),
    :prf:ref:`prop-ffn-symmetric`) is exactly 0.0 in floating point, not only up to
    rounding:

    * the linear readout is evaluated as ``u_0 + sum_(v>=1) (u_v - u_0) h_v``,
      equal to ``u . h`` on the simplex (``sum_v h_v = 1``); for d = 2 this is
      ``c + w p`` with ``c = u_a``, ``w = u_b - u_a``. When all ``u_v`` are
      equal the gradient reaching ``h`` is exactly zero;
    * the ReLU readout is evaluated as the sum of its even-indexed and its
      odd-indexed neurons, two identical computations; for neuron pairs with
      equal ``V``, ``b`` rows and ``a_(2j+1) = -a_(2j)`` their gradients with
      respect to ``h`` are exact negatives and cancel exactly.
    """

    def __init__(
        self,
        vocab_size: int = 2,
        readout: str = "linear",
        hidden: int | None = None,
        scaling: str = "log",
        first_position_score: bool = False,
        *,
        memory_budget: int = MEMORY_BUDGET,
    ) -> None:
        super().__init__()
        check_integer(vocab_size, "vocab_size", minimum=2)
        if readout not in _READOUTS:
            raise ValueError(f"readout must be one of {_READOUTS}, got {readout!r}")
        if readout == "ffn":
            check_integer(hidden, "hidden", minimum=1)
        elif hidden is not None:
            raise ValueError(f"hidden must be None for readout='linear' (it is the ffn width), got {hidden!r}")
        check_scaling(scaling)
        if not isinstance(first_position_score, bool):
            raise TypeError(f"first_position_score must be True or False, got {first_position_score!r}")
        numbers = vocab_size * (2 if readout == "linear" else hidden + 1) + (0 if hidden is None else 2 * hidden) + 1
        memory_budget = check_memory_budget(memory_budget)
        require_memory(
            numbers * PARAMETER_BYTES,
            memory_budget,
            f"the {numbers:.3g} parameters of vocab_size = {vocab_size} and hidden = {hidden}",
            f"at most {memory_budget // PARAMETER_BYTES:.3g} parameters (vocab_size (hidden + 1) + 2 hidden + 1 with the "
            "ReLU readout, 2 vocab_size + 1 with the linear one)",
        )
        self.vocab_size = vocab_size
        self.readout = readout
        self.hidden = hidden
        self.scaling = scaling
        self.first_position_score = first_position_score

        def zeros(*shape: int) -> torch.nn.Parameter:
            return torch.nn.Parameter(torch.zeros(shape, dtype=torch.float64))

        self.theta = zeros(vocab_size)
        if first_position_score:
            self.s = zeros()
        if readout == "linear":
            self.u = zeros(vocab_size)
        else:
            self.V = zeros(hidden, vocab_size)
            self.b = zeros(hidden)
            self.a = zeros(hidden)

    def extra_repr(self) -> str:
        return (
            f"vocab_size={self.vocab_size}, readout={self.readout!r}, hidden={self.hidden}, "
            f"scaling={self.scaling!r}, first_position_score={self.first_position_score}"
        )

    def attention_parameters(self) -> list[torch.nn.Parameter]:
        """The attention group trained by the schedules: ``theta`` (and ``s``)."""
        return [self.theta, self.s] if self.first_position_score else [self.theta]

    def output_parameters(self) -> list[torch.nn.Parameter]:
        """The output-layer group trained by the schedules: ``u``, or ``V, b, a``."""
        return [self.u] if self.readout == "linear" else [self.V, self.b, self.a]

    # -- token strings ---------------------------------------------------

    def attention_weights(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The weights ``alpha_i`` of :eq:`eq-attention` (or :eq:`eq-unscaled`), shape (batch, L).

        Parameters
        ----------
        tokens : torch.Tensor
            LongTensor (batch, L) with L >= 1; token ids of real positions lie in
            ``[0, vocab_size)``, padding ids are ignored.
        mask : torch.Tensor
            BoolTensor of the shape of ``tokens``, true on the real positions, which come
            first (padding to the right); every row has ``n = mask.sum() >= 1``.

        Returns
        -------
        torch.Tensor
            float64 (batch, L); padding gets weight exactly 0.

        Raises
        ------
        TypeError
            If ``tokens`` is not a LongTensor or ``mask`` not a BoolTensor.
        ValueError
            If the shapes disagree, a row has no real position, the mask is not a prefix,
            or a token id is out of range.

        Notes
        -----
        The softmax denominator is a float sum over the ``n`` positions, so its relative
        rounding grows with ``n`` (about 3e-12 at n = 1e6 with one b); long strings belong
        to ``forward_counts``.
        """
        lengths = self._check_tokens(tokens, mask)
        ids = torch.where(mask, tokens, torch.zeros_like(tokens))
        raw_scores = self.theta[ids]
        if self.first_position_score:
            position_one = torch.zeros(tokens.shape[1], dtype=torch.float64, device=tokens.device)
            position_one[0] = 1.0
            raw_scores = raw_scores + self.s * position_one
        scores = raw_scores * self._score_scale(lengths.to(torch.float64)).unsqueeze(1)
        return torch.softmax(scores.masked_fill(~mask, -math.inf), dim=1)

    def pooled(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The pooled vector ``h = sum_i alpha_i e_(x_i)``, shape (batch, d), a point of the simplex.

        Parameters
        ----------
        tokens, mask : torch.Tensor
            The padded token strings and their mask, as in :meth:`attention_weights` (which
            raises on bad input).

        Returns
        -------
        torch.Tensor
            float64 (batch, d).
        """
        alpha = self.attention_weights(tokens, mask)
        ids = torch.where(mask, tokens, torch.zeros_like(tokens))
        empty = torch.zeros(tokens.shape[0], self.vocab_size, dtype=torch.float64, device=tokens.device)
        return empty.scatter_add(1, ids, alpha)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The model output ``f(x)`` (:eq:`eq-readout`) for each string, shape (batch,).

        Parameters
        ----------
        tokens, mask : torch.Tensor
            The padded token strings and their mask, as in :meth:`attention_weights` (which
            raises on bad input).

        Returns
        -------
        torch.Tensor
            float64 (batch,).
        """
        return self._readout(self.pooled(tokens, mask))

    # -- token counts ----------------------------------------------------

    def pooled_counts(self, counts: torch.Tensor, first_token: torch.Tensor | None = None) -> torch.Tensor:
        """The pooled vector ``h`` from token counts, shape (batch, d).

        The token ``v`` carries total weight ``softmax(logit)_v`` with ``logit_v = log(count_v) +
        theta_v log n`` (``+ theta_v`` without scaling); a count of 0 has logit -inf and weight
        exactly 0. With the positional marker the count of ``x_1`` is reduced by one and
        position 1 gets the separate logit ``log 1 + (theta[x_1] + s) log n``.

        Parameters
        ----------
        counts : torch.Tensor
            float64 (batch, d) of finite whole-number token counts >= 0, each row with
            length ``n = counts.sum(1) >= 1`` (up to 1e18 and beyond).
        first_token : torch.Tensor, optional
            LongTensor (batch,), the token ``x_1`` at position 1, in ``[0, vocab_size)`` with
            count >= 1 in its row; required when ``first_position_score=True``, None otherwise.

        Returns
        -------
        torch.Tensor
            float64 (batch, d).

        Raises
        ------
        TypeError
            If ``counts`` is not float64 or ``first_token`` not a LongTensor.
        ValueError
            If ``counts`` has the wrong shape, is not finite whole numbers >= 0, or a row
            is empty; or ``first_token`` is missing, superfluous or out of range.

        Notes
        -----
        The values are accurate to rounding at any length; autograd's gradient
        through the softmax carries a factor formed as ``1 - p``, so where one
        token's weight ``p`` is within ``delta`` of 1 its relative accuracy is
        about ``1e-16 / delta`` (1e-7 at n = 1e18, t = 1.5, one b).
        """
        self._check_counts(counts, first_token)
        return pooled_from_counts(
            self.theta, self.s if self.first_position_score else None, counts, first_token, self.scaling
        )

    def forward_counts(self, counts: torch.Tensor, first_token: torch.Tensor | None = None) -> torch.Tensor:
        """The model output ``f`` from token counts, shape (batch,).

        Parameters
        ----------
        counts : torch.Tensor
            float64 (batch, d) token counts, as in :meth:`pooled_counts` (which raises on bad
            input).
        first_token : torch.Tensor, optional
            LongTensor (batch,), the token at position 1, as in :meth:`pooled_counts`.

        Returns
        -------
        torch.Tensor
            float64 (batch,).
        """
        return self._readout(self.pooled_counts(counts, first_token))

    # -- shared pieces ---------------------------------------------------

    def _score_scale(self, lengths: torch.Tensor) -> torch.Tensor:
        """The factor multiplying the scores: ``log n`` :eq:`eq-attention` or 1 :eq:`eq-unscaled`."""
        return score_scale(lengths, self.scaling)

    def _readout(self, h: torch.Tensor) -> torch.Tensor:
        """``f = u . h`` :eq:`eq-readout` or ``f = sum_j a_j relu(V_j . h + b_j)``; see the class docstring."""
        if self.readout == "linear":
            return linear_readout(self.u, h)
        return self._relu_neurons(h, slice(0, None, 2)) + self._relu_neurons(h, slice(1, None, 2))

    def _relu_neurons(self, h: torch.Tensor, neurons: slice) -> torch.Tensor:
        """``sum_(j in neurons) a_j relu(V_j . h + b_j)`` over a slice of the hidden layer."""
        return torch.relu(h @ self.V[neurons].T + self.b[neurons]) @ self.a[neurons]

    def _check_tokens(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Validate a padded token batch; return the lengths ``n`` (batch,)."""
        if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long:
            raise TypeError(f"tokens must be a torch LongTensor (int64), got {_describe(tokens)}")
        if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
            raise TypeError(f"mask must be a torch BoolTensor, got {_describe(mask)}")
        if tokens.ndim != 2 or tokens.shape[1] < 1:
            raise ValueError(f"tokens must have shape (batch, L) with L >= 1, got {tuple(tokens.shape)}")
        if mask.shape != tokens.shape:
            raise ValueError(f"mask must have the shape of tokens {tuple(tokens.shape)}, got {tuple(mask.shape)}")
        lengths = mask.sum(dim=1)
        if bool((lengths < 1).any()):
            raise ValueError("mask must mark at least one real position (n >= 1) in every row")
        prefix = torch.arange(tokens.shape[1], device=mask.device).unsqueeze(0) < lengths.unsqueeze(1)
        if not bool((prefix == mask).all()):
            raise ValueError("mask must be true on a prefix of each row (real positions first, padding to the right)")
        real = tokens[mask]
        if bool(((real < 0) | (real >= self.vocab_size)).any()):
            raise ValueError(
                f"tokens must lie in [0, {self.vocab_size}) on real positions (vocab_size={self.vocab_size})"
            )
        return lengths

    def _check_counts(self, counts: torch.Tensor, first_token: torch.Tensor | None) -> torch.Tensor:
        """Validate a batch of token counts (and the first tokens); return the lengths ``n``."""
        if not isinstance(counts, torch.Tensor) or counts.dtype != torch.float64:
            raise TypeError(f"counts must be a torch float64 tensor, got {_describe(counts)}")
        if counts.ndim != 2 or counts.shape[1] != self.vocab_size:
            raise ValueError(f"counts must have shape (batch, {self.vocab_size}), got {tuple(counts.shape)}")
        if not bool(torch.isfinite(counts).all()):
            raise ValueError("counts must be finite (no NaN or infinity)")
        if bool((counts < 0).any()) or not bool((counts == counts.floor()).all()):
            raise ValueError("counts must be whole numbers >= 0")
        lengths = counts.sum(dim=1)
        if bool((lengths < 1).any()):
            raise ValueError("counts must have at least one positive entry in every row (n >= 1)")
        if not bool(torch.isfinite(lengths).all()):
            raise ValueError("counts must sum to a finite length n in every row")
        if not self.first_position_score:
            if first_token is not None:
                raise ValueError("first_token must be None unless the model has first_position_score=True")
            return lengths
        if first_token is None:
            raise ValueError("first_token is required when first_position_score=True (the token at position 1)")
        if not isinstance(first_token, torch.Tensor) or first_token.dtype != torch.long:
            raise TypeError(f"first_token must be a torch LongTensor (int64), got {_describe(first_token)}")
        if first_token.shape != (counts.shape[0],):
            raise ValueError(f"first_token must have shape ({counts.shape[0]},), got {tuple(first_token.shape)}")
        if bool(((first_token < 0) | (first_token >= self.vocab_size)).any()):
            raise ValueError(f"first_token must lie in [0, {self.vocab_size}) (vocab_size={self.vocab_size})")
        if bool((counts.gather(1, first_token.unsqueeze(1)) < 1).any()):
            raise ValueError("first_token must be a token with count >= 1 in its row of counts")
        return lengths


def initialise(
    model: ShallowTransformer,
    kind: str = "zero",
    scale: float = 1.0,
    generator: torch.Generator | None = None,
) -> ShallowTransformer:
    """Set the parameters in place and return ``model``; attention (``theta``, ``s``) is set to 0.

    Parameters
    ----------
    model : ShallowTransformer
        The model to initialise.
    kind : {"zero", "symmetric", "random"}
        How the readout is drawn:

        * ``"zero"``: every parameter 0;
        * ``"symmetric"``: linear readout, all ``u_v`` equal to one N(0, scale^2)
          draw (``u_a = u_b``); ReLU readout, neurons in pairs ``(2j, 2j+1)`` with
          equal N(0, scale^2) rows of ``V`` and entries of ``b`` and opposite
          output weights ``a_(2j+1) = -a_(2j)`` (``hidden`` must be even). The
          first attention gradient is then exactly 0 (:prf:ref:`thm-one-step` (a));
        * ``"random"``: the readout i.i.d. N(0, scale^2).
    scale : float, optional
        A finite number > 0, the standard deviation of the draws (unused for ``"zero"``).
    generator : torch.Generator, optional
        For reproducible draws.

    Returns
    -------
    ShallowTransformer
        ``model``, initialised in place.
    """
    if not isinstance(model, ShallowTransformer):
        raise TypeError(f"model must be a ShallowTransformer, got {type(model).__name__}")
    if kind not in _INITIALISATIONS:
        raise ValueError(f"kind must be one of {_INITIALISATIONS}, got {kind!r}")
    scale = check_positive(scale, "scale")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    if kind == "symmetric" and model.readout == "ffn" and model.hidden % 2 != 0:
        raise ValueError(f"hidden must be even for kind='symmetric' (neurons come in pairs), got {model.hidden}")

    def normal(*shape: int) -> torch.Tensor:
        return scale * torch.randn(*shape, dtype=torch.float64, generator=generator)

    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        if kind == "zero":
            return model
        if model.readout == "linear":
            model.u.copy_(normal(1).expand(model.vocab_size) if kind == "symmetric" else normal(model.vocab_size))
        elif kind == "random":
            model.V.copy_(normal(model.hidden, model.vocab_size))
            model.b.copy_(normal(model.hidden))
            model.a.copy_(normal(model.hidden))
        else:
            pairs = model.hidden // 2
            model.V.copy_(normal(pairs, model.vocab_size).repeat_interleave(2, dim=0))
            model.b.copy_(normal(pairs).repeat_interleave(2))
            model.a.copy_((normal(pairs).unsqueeze(1) * torch.tensor([1.0, -1.0], dtype=torch.float64)).reshape(-1))
    return model


def to_reduced(model: ShallowTransformer) -> tuple[float, float, float]:
    """The reduced coordinates ``(t, c, w) = (theta_b - theta_a, u_a, u_b - u_a)``.

    Defined for the two-token linear model without positional marker, where
    ``f = c + w p(n, k; t)`` (:eq:`eq-pooled-weight`).

    Parameters
    ----------
    model : ShallowTransformer
        With ``readout="linear"``, ``vocab_size=2`` and ``first_position_score=False``.

    Returns
    -------
    tuple of float
        ``(t, c, w)``.

    Raises
    ------
    TypeError
        If ``model`` is not a :class:`ShallowTransformer`.
    ValueError
        If ``model`` is not the two-token linear model without marker.
    """
    if not isinstance(model, ShallowTransformer):
        raise TypeError(f"model must be a ShallowTransformer, got {type(model).__name__}")
    if model.readout != "linear" or model.vocab_size != 2 or model.first_position_score:
        raise ValueError(
            "model must have readout='linear', vocab_size=2 and first_position_score=False for to_reduced, got "
            f"readout={model.readout!r}, vocab_size={model.vocab_size}, first_position_score={model.first_position_score}"
        )
    theta = model.theta.detach()
    u = model.u.detach()
    return float(theta[1] - theta[0]), float(u[0]), float(u[1] - u[0])


def _describe(value: object) -> str:
    """A short description of a wrong-typed argument for error messages."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of dtype {value.dtype}"
    return type(value).__name__
