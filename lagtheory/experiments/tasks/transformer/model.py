"""A standard small transformer classifier in torch float64, with the two parameter groups of the
schedules, and its forward pass batched over (row, seed) models with ``torch.func``.

The model (:class:`SmallTransformer`) reads a word x_1 .. x_n over an alphabet of k letters with a
classification token prepended (id k, at position 0), as an encoder (every position attends to
every non-padding position):

* embeddings: ``tokens`` (k + 1, d), a learned vector per letter and one for the classification
  token; positions either ``learned`` (a table ``positions`` (max_positions, d)) or the fixed
  ``sinusoidal`` encoding of Vaswani et al. (2017), added to the token vectors;
* ``layers`` (1 or 2) pre-layer-norm blocks ``x <- x + Attention(LN(x))``, ``x <- x + MLP(LN(x))``:
  multi-head softmax self-attention with ``heads`` (1-4) heads of width d / heads (query, key,
  value and output projections, scores q.k / sqrt(d / heads), padding masked), and an MLP
  d -> ``mlp_width`` -> d with biases and the GELU;
* a final layer norm and a linear readout of the classification token's vector: the output f,
  a real number whose sign is the predicted label.

The layer norms have no learned gain or bias (so every trained parameter is in one of the two
groups below). Every weight matrix enters the forward pass divided by the square root of its
fan-in (the input width it contracts), so that the engine's i.i.d. N(0, scale^2) initialisation
(:class:`lagtheory.experiments.engine.cells.TrainingConfig`) gives activations of order ``scale`` at
every width: the standard deviation of the effective weight is scale / sqrt(fan-in), the usual
initialisation of torch's linear layers at scale about 0.6.

Parameter groups (:func:`parameter_groups`), the split that the schedules of
:mod:`lagtheory.schedules` move at different times:

* ``"attention"``: the query, key, value and output projections of every layer, and the token
  and learned position embeddings (the input side that the attention reads, as the book's
  position scores s belong to the attention group);
* ``"output"``: the readout (weight and bias) and, by default, the MLP of every layer.

Where the MLP goes is a stated factor (``mlp_group``, "output" or "attention"), and so is where the
embeddings go (``embedding_group``, "attention" or "output").

Seeds and schedules are batched by :func:`batched_outputs`: the parameters carry leading (row,
seed) dimensions, and ``torch.func.vmap`` of ``torch.func.functional_call`` evaluates every model
in one call, so one training step is one batched forward and one backward pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import functional_call, vmap

from lagtheory._validation import check_integer

POSITIONS = ("learned", "sinusoidal")
GROUP_NAMES = ("attention", "output")


@dataclass(frozen=True)
class TransformerShape:
    """The architecture: ``alphabet_size`` k letters (ids 0..k-1; the classification token is k),
    width ``width`` d, ``heads`` (1-4, dividing d), ``layers`` (1 or 2), ``mlp_width``, positions
    ``positions`` ("learned" or "sinusoidal") for sequences of up to ``max_positions`` tokens (the
    classification token included), and the groups of the MLP (``mlp_group``) and of the embeddings
    (``embedding_group``), each "attention" or "output".

    Attributes
    ----------
    alphabet_size : int
        The number k of letters, >= 2.
    width : int, optional
        The width d, >= 2 (even for sinusoidal positions).
    heads : int, optional
        The number of heads, in 1..4, dividing ``width``.
    layers : int, optional
        1 or 2.
    mlp_width : int, optional
        The MLP's hidden width, >= 1.
    positions : {"learned", "sinusoidal"}, optional
        The position encoding.
    max_positions : int, optional
        The longest token sequence, >= 2.
    mlp_group : {"output", "attention"}, optional
        The group of the MLP.
    embedding_group : {"attention", "output"}, optional
        The group of the token and position embeddings.

    Raises
    ------
    ValueError
        If a field is out of range.
    TypeError
        If a count is not an integer.
    """

    alphabet_size: int
    width: int = 16
    heads: int = 2
    layers: int = 1
    mlp_width: int = 32
    positions: str = "learned"
    max_positions: int = 257
    mlp_group: str = "output"
    embedding_group: str = "attention"

    def __post_init__(self) -> None:
        check_integer(self.alphabet_size, "alphabet_size", 2)
        check_integer(self.width, "width", 2)
        check_integer(self.heads, "heads", 1)
        if self.heads > 4 or self.width % self.heads:
            raise ValueError(f"heads must lie in 1..4 and divide width = {self.width}, got {self.heads}")
        check_integer(self.layers, "layers", 1)
        if self.layers > 2:
            raise ValueError(f"layers must be 1 or 2, got {self.layers}")
        check_integer(self.mlp_width, "mlp_width", 1)
        check_integer(self.max_positions, "max_positions", 2)
        if self.positions not in POSITIONS:
            raise ValueError(f"positions must be one of {POSITIONS}, got {self.positions!r}")
        if self.positions == "sinusoidal" and self.width % 2:
            raise ValueError(f"width must be even for sinusoidal positions, got {self.width}")
        for name in ("mlp_group", "embedding_group"):
            if getattr(self, name) not in GROUP_NAMES:
                raise ValueError(f"{name} must be one of {GROUP_NAMES}, got {getattr(self, name)!r}")


def sinusoidal_positions(count: int, width: int) -> torch.Tensor:
    """The fixed encoding of Vaswani et al. (2017): entry (p, 2i) = sin(p / 10000^(2i/d)) and
    (p, 2i+1) = cos(p / 10000^(2i/d)), shape (count, width), float64.

    Parameters
    ----------
    count : int
        The number of positions.
    width : int
        The width d, even.

    Returns
    -------
    torch.Tensor
        float64 (count, width).
    """
    position = torch.arange(count, dtype=torch.float64)[:, None]
    frequency = torch.pow(10000.0, -torch.arange(0, width, 2, dtype=torch.float64) / width)
    table = torch.zeros(count, width, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)
    return table


def _layer_norm(x: torch.Tensor) -> torch.Tensor:
    """Layer norm over the last dimension without gain or bias (eps 1e-5, as torch's default)."""
    return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)


def _parameter(*shape: int) -> nn.Parameter:
    """A float64 parameter of zeros (the engine sets every value before use)."""
    return nn.Parameter(torch.zeros(shape, dtype=torch.float64))


class SelfAttention(nn.Module):
    """Multi-head softmax self-attention: ``query``, ``key``, ``value`` (d, heads, d/heads) and
    ``output`` (heads, d/heads, d), each divided by the square root of its fan-in.

    Parameters
    ----------
    width : int
        The width d.
    heads : int
        The number of heads, dividing ``width``.
    """

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_width = heads, width // heads
        self.query = _parameter(width, heads, self.head_width)
        self.key = _parameter(width, heads, self.head_width)
        self.value = _parameter(width, heads, self.head_width)
        self.output = _parameter(heads, self.head_width, width)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """Map ``x`` (batch, length, d) to (batch, length, d).

        Parameters
        ----------
        x : torch.Tensor
            (batch, length, d).
        keep : torch.Tensor
            bool (batch, length), True at real tokens.

        Returns
        -------
        torch.Tensor
            (batch, length, d).
        """
        scale = 1 / math.sqrt(x.shape[-1])  # the fan-in of every projection is d; scaling the weights is cheaper
        query = self.query / math.sqrt(self.head_width)  # scores q.k / sqrt(d / heads)
        projections = torch.cat([query, self.key, self.value], dim=-1) * scale
        q, k, v = torch.einsum("bld,dhe->bhle", x, projections).split(self.head_width, dim=-1)
        scores = torch.einsum("bhle,bhme->bhlm", q, k)
        scores = scores.masked_fill(~keep[:, None, None, :], -math.inf)
        weights = torch.softmax(scores, dim=-1)
        mixed = torch.einsum("bhlm,bhme->bhle", weights, v)
        return torch.einsum("bhle,hed->bld", mixed, self.output * scale)


class MLP(nn.Module):
    """``x -> GELU(x W_in / sqrt(d) + b_in) W_out / sqrt(m) + b_out``.

    Parameters
    ----------
    width : int
        The width d.
    hidden : int
        The hidden width m.
    """

    def __init__(self, width: int, hidden: int) -> None:
        super().__init__()
        self.w_in, self.b_in = _parameter(width, hidden), _parameter(hidden)
        self.w_out, self.b_out = _parameter(hidden, width), _parameter(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Map ``x`` (..., d) to (..., d).

        Parameters
        ----------
        x : torch.Tensor
            (..., d).

        Returns
        -------
        torch.Tensor
            (..., d).
        """
        hidden = torch.nn.functional.gelu(x @ (self.w_in / math.sqrt(self.w_in.shape[0])) + self.b_in)
        return hidden @ (self.w_out / math.sqrt(self.w_out.shape[0])) + self.b_out


class Block(nn.Module):
    """One pre-layer-norm block: ``x + attention(LN x)``, then ``+ mlp(LN x)``.

    Parameters
    ----------
    shape : TransformerShape
        The architecture.
    """

    def __init__(self, shape: TransformerShape) -> None:
        super().__init__()
        self.attention = SelfAttention(shape.width, shape.heads)
        self.mlp = MLP(shape.width, shape.mlp_width)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """Map ``x`` (batch, length, d) to (batch, length, d).

        Parameters
        ----------
        x : torch.Tensor
            (batch, length, d).
        keep : torch.Tensor
            bool (batch, length), True at real tokens.

        Returns
        -------
        torch.Tensor
            (batch, length, d).
        """
        x = x + self.attention(_layer_norm(x), keep)
        return x + self.mlp(_layer_norm(x))


class SmallTransformer(nn.Module):
    """The classifier of the module docstring. ``forward(tokens, keep)`` takes token ids (batch,
    length) with the classification token at position 0 and padding anywhere ``keep`` is False,
    and returns the output f of every word, shape (batch,).

    Parameters
    ----------
    shape : TransformerShape
        The architecture.

    Raises
    ------
    TypeError
        If ``shape`` is not a :class:`TransformerShape`.
    """

    def __init__(self, shape: TransformerShape) -> None:
        super().__init__()
        if not isinstance(shape, TransformerShape):
            raise TypeError(f"shape must be a TransformerShape, got {type(shape).__name__}")
        self.shape = shape
        self.tokens = _parameter(shape.alphabet_size + 1, shape.width)
        if shape.positions == "learned":
            self.positions = _parameter(shape.max_positions, shape.width)
        else:
            self.register_buffer("sinusoid", sinusoidal_positions(shape.max_positions, shape.width))
        self.blocks = nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.readout_weight = _parameter(shape.width)
        self.readout_bias = _parameter()

    def forward(self, tokens: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The output f of every word.

        Parameters
        ----------
        tokens : torch.Tensor
            int64 (batch, length), the classification token first, at most ``max_positions`` positions.
        keep : torch.Tensor
            bool (batch, length), True at real tokens.

        Returns
        -------
        torch.Tensor
            (batch,).

        Raises
        ------
        ValueError
            If ``tokens`` has more than ``max_positions`` positions.
        """
        length = tokens.shape[-1]
        if length > self.shape.max_positions:
            raise ValueError(f"tokens must have at most max_positions = {self.shape.max_positions} positions")
        table = self.positions if self.shape.positions == "learned" else self.sinusoid
        x = self.tokens[tokens] + table[:length]
        for block in self.blocks:
            x = block(x, keep)
        cls = _layer_norm(x[..., 0, :])
        return cls @ (self.readout_weight / math.sqrt(self.shape.width)) + self.readout_bias


def parameter_groups(shape: TransformerShape) -> dict[str, tuple[tuple[int, ...], str]]:
    """Parameter name (as in ``SmallTransformer(shape).named_parameters()``) -> (shape, group), in
    the model's order; the groups as in the module docstring.

    Parameters
    ----------
    shape : TransformerShape
        The architecture.

    Returns
    -------
    dict of str to tuple
        Name -> (shape, "attention" or "output").
    """
    model = SmallTransformer(shape)
    groups = {}
    for name, value in model.named_parameters():
        if ".attention." in name:
            group = "attention"
        elif ".mlp." in name:
            group = shape.mlp_group
        elif name in ("tokens", "positions"):
            group = shape.embedding_group
        elif name.startswith("readout"):
            group = "output"
        else:  # pragma: no cover - a parameter added without a group
            raise AssertionError(f"parameter {name} has no group")
        groups[name] = (tuple(value.shape), group)
    return groups


def batched_outputs(
    model: SmallTransformer, params: Mapping[str, torch.Tensor], tokens: torch.Tensor, keep: torch.Tensor
) -> torch.Tensor:
    """The output of every (row, seed) model on its words, shape (rows, seeds, batch).

    ``params`` name -> (rows, seeds, ...); ``tokens`` and ``keep`` (seeds, batch, length), each
    seed's own words, or (batch, length), the same words for every model. One call of
    ``vmap(vmap(functional_call))``: the inner map runs over seeds, the outer over rows.

    Parameters
    ----------
    model : SmallTransformer
        The architecture (its own parameters are not used).
    params : mapping of str to torch.Tensor
        Name -> (rows, seeds, ...).
    tokens : torch.Tensor
        int64 (seeds, batch, length), each seed's own words, or (batch, length), the same for every model.
    keep : torch.Tensor
        bool, the shape of ``tokens``, True at real tokens.

    Returns
    -------
    torch.Tensor
        (rows, seeds, batch).
    """

    def one(p: Mapping[str, torch.Tensor], t: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return functional_call(model, dict(p), (t, k))

    data_dim = 0 if tokens.ndim == 3 else None
    over_seeds = vmap(one, in_dims=(0, data_dim, data_dim))
    return vmap(over_seeds, in_dims=(0, None, None))(dict(params), tokens, keep)


def forward_flops(shape: TransformerShape, length: int) -> int:
    """Floating-point operations (2 per multiply-add) of the matrix products of one forward pass
    on one word of ``length`` tokens (the classification token included): embeddings, the
    elementwise work, softmax and layer norms are not counted.

    Parameters
    ----------
    shape : TransformerShape
        The architecture.
    length : int
        The number of tokens.

    Returns
    -------
    int
        The operations.
    """
    d, m, n = shape.width, shape.mlp_width, length
    per_layer = 4 * 2 * n * d * d + 2 * 2 * n * n * d + 2 * 2 * n * d * m
    return shape.layers * per_layer + 2 * d
