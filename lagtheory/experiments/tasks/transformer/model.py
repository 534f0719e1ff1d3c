"""A standard small transformer classifier in torch, with the two parameter groups of the schedules,
and its forward pass batched over (row, seed) models with ``torch.func``.

The model (:class:`SmallTransformer`) reads a word x_1 .. x_n over an alphabet of k letters with a
classification token prepended (id k, at position 0), as an encoder (every position attends to
every non-padding position). Its options are the fields of :class:`TransformerShape`:

* embeddings: ``tokens`` (k + 1, d), a learned vector per letter and one for the classification
  token, plus a position vector chosen by ``positions``:

  - ``"learned"``: a table ``positions`` (max_positions, d), one row per position (rows beyond the
    training lengths are never trained);
  - ``"sinusoidal"``: the fixed encoding of Vaswani et al. (2017);
  - ``"first"``: a learned table ``positions`` (3, d) defined at every length: row 0 for the
    classification token's position, row 1 for the first letter, row 2 shared by every later
    position (the first position marked, the others shared; the book's first-position marker);
  - ``"none"``: no position vector (the model is then invariant to permutations of the letters);

  and, with ``previous_token``, a learned table ``previous`` (k + 1, d) adding to position i >= 2 the
  vector of the letter x_(i-1), and to positions 0 and 1 its row k ("no previous letter"): a
  previous-token input, the bigram feature of the one-layer model's study;
* ``layers`` (1 or 2) pre-layer-norm blocks ``x <- x + Attention(LN(x))``, ``x <- x + MLP(LN(x))``:
  multi-head softmax self-attention with ``heads`` (1-4) heads of width e = d / heads (query, key,
  value and output projections, padding masked) whose scores are

      score(i, j) = q_i . k_j / sqrt(e)                          (``scaling="none"``)
      score(i, j) = log(m) q_i . k_j / sqrt(e)                   (``scaling="log"``)

  with m the number of tokens of the sequence (the word's letters and the classification token),
  so that the attention weights are alpha_ij = m^(q_i . k_j / sqrt e) / sum_l m^(q_i . k_l / sqrt e),
  the length scaling of the book's model, :eq:`eq-attention`; and an MLP d -> ``mlp_width`` -> d
  with biases and the GELU;
* a final layer norm and a linear readout of the classification token's vector: the output f,
  a real number whose sign is the predicted label.

Only the classification token's vector is read, so the last block is computed at position 0 alone
(its query is the classification token's; keys and values come from every position): the output
is the same as the full block's, at a fraction of the cost at long lengths.

The layer norms have no learned gain or bias (so every trained parameter is in one of the two
groups below). Every weight matrix enters the forward pass divided by the square root of its
fan-in (the input width it contracts), so that the engine's i.i.d. N(0, scale^2) initialisation
(:class:`lagtheory.experiments.engine.config.TrainingConfig`) gives a weight of standard deviation
scale / sqrt(fan-in). Two initialisations (``initialisation``):

* ``"scaled"``: every parameter is the engine's draw at its group's scale (the first configuration's model,
  drawn at scale 0.5 by its study, ``book/data/summary_transformer.json``);
* ``"standard"``: the biases (the MLP's and the readout's) start at 0 (:meth:`SmallTransformer.zero_at_start`)
  and every other parameter is the engine's draw; at scale 1 (as
  :data:`lagtheory.experiments.tasks.transformer.units.PILOT_TRAINING` sets it) the weight matrices are
  then LeCun-normal, N(0, 1/fan-in), and the embeddings N(0, 1), as torch's ``nn.Embedding``.

Parameter groups (:func:`parameter_groups`), the split that the schedules of
:mod:`lagtheory.schedules` move at different times:

* ``"attention"``: the query, key, value and output projections of every layer, and the token,
  position and previous-token embeddings (the input side that the attention reads, as the book's
  position scores s belong to the attention group);
* ``"output"``: the readout (weight and bias) and, by default, the MLP of every layer.

Where the MLP goes is a stated factor (``mlp_group``, "output" or "attention"), and so is where the
embeddings go (``embedding_group``, "attention" or "output").

Seeds and schedules are batched by :func:`batched_outputs`: the parameters carry leading (row,
seed) dimensions, and ``torch.func.vmap`` of ``torch.func.functional_call`` evaluates every model
in one call, so one training step is one batched forward and one backward pass. The arithmetic is
that of the parameters' dtype; :func:`batched_outputs` can cast them to float32 first (the trained
parameters and the optimiser stay float64).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import functional_call, vmap

from lagtheory._validation import check_integer

from ...parameters import fill_doc

POSITIONS = ("learned", "sinusoidal", "first", "none")
SCALINGS = ("none", "log")
INITIALISATIONS = ("scaled", "standard")
GROUP_NAMES = ("attention", "output")
COMPUTE_DTYPES = {"float64": torch.float64, "float32": torch.float32}
"""The arithmetic of the forward and backward pass, by name."""


@dataclass(frozen=True)
class TransformerShape:
    """The architecture (module docstring): ``alphabet_size`` k letters (ids 0..k-1; the classification
    token is k), width ``width`` d, ``heads`` (1-4, dividing d), ``layers`` (1 or 2), ``mlp_width``,
    positions ``positions`` for sequences of up to ``max_positions`` tokens (the classification token
    included; only the learned and sinusoidal tables have this limit), the attention's length
    ``scaling``, the ``previous_token`` input, the ``initialisation``, and the groups of the MLP
    (``mlp_group``) and of the embeddings (``embedding_group``), each "attention" or "output".

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
    positions : {"learned", "sinusoidal", "first", "none"}, optional
        The position encoding.
    max_positions : int, optional
        The longest token sequence of the learned and sinusoidal tables, >= 2.
    mlp_group : {"output", "attention"}, optional
        The group of the MLP.
    embedding_group : {"attention", "output"}, optional
        The group of the token, position and previous-token embeddings.
    scaling : {"none", "log"}, optional
        The attention scores as they are, or times log(number of tokens) (:eq:`eq-attention`).
    previous_token : bool, optional
        Whether each position also reads the previous letter's learned vector.
    initialisation : {"scaled", "standard"}, optional
        Whether the biases start at 0 ("standard") or are drawn as the rest ("scaled").

    Raises
    ------
    ValueError
        If a field is out of range.
    TypeError
        If a count is not an integer or ``previous_token`` not a bool.
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
    scaling: str = "none"
    previous_token: bool = False
    initialisation: str = "scaled"

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
        for name, allowed in (("positions", POSITIONS), ("scaling", SCALINGS), ("initialisation", INITIALISATIONS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.positions == "sinusoidal" and self.width % 2:
            raise ValueError(f"width must be even for sinusoidal positions, got {self.width}")
        for name in ("mlp_group", "embedding_group"):
            if getattr(self, name) not in GROUP_NAMES:
                raise ValueError(f"{name} must be one of {GROUP_NAMES}, got {getattr(self, name)!r}")
        if not isinstance(self.previous_token, bool):
            raise TypeError(f"previous_token must be True or False, got {self.previous_token!r}")


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

    def weights(self, x: torch.Tensor, keep: torch.Tensor, factor: torch.Tensor, queries: int | None) -> tuple:
        """The attention weights (batch, heads, queries, length) and the values (batch, heads, length, e).

        Parameters
        ----------
        x : torch.Tensor
            (batch, length, d), the layer-normed input.
        keep : torch.Tensor
            bool (batch, length), True at real tokens.
        factor : torch.Tensor
            (batch,), the scores' factor (log m, or 1).
        queries : int or None
            Only the first ``queries`` positions ask (None: every position).

        Returns
        -------
        tuple of torch.Tensor
            (weights, values).
        """
        scale = 1 / math.sqrt(x.shape[-1])  # the fan-in of every projection is d
        query = self.query * (scale / math.sqrt(self.head_width))  # scores q.k / sqrt(d / heads)
        asking = x if queries is None else x[:, :queries]
        q = torch.einsum("bld,dhe->bhle", asking, query)
        k, v = torch.einsum("bld,dhe->bhle", x, torch.cat([self.key, self.value], dim=-1) * scale).split(
            self.head_width, dim=-1
        )
        scores = torch.einsum("bhle,bhme->bhlm", q, k) * factor[:, None, None, None]
        scores = scores.masked_fill(~keep[:, None, None, :], -math.inf)
        return torch.softmax(scores, dim=-1), v

    def forward(self, x: torch.Tensor, keep: torch.Tensor, factor: torch.Tensor, queries: int | None) -> torch.Tensor:
        """Map ``x`` (batch, length, d) to (batch, queries or length, d).

        Parameters
        ----------
        x : torch.Tensor
            (batch, length, d), the layer-normed input.
        keep : torch.Tensor
            bool (batch, length), True at real tokens.
        factor : torch.Tensor
            (batch,), the scores' factor (log m, or 1).
        queries : int or None
            Only the first ``queries`` positions ask (None: every position).

        Returns
        -------
        torch.Tensor
            (batch, queries or length, d).
        """
        weights, v = self.weights(x, keep, factor, queries)
        mixed = torch.einsum("bhlm,bhme->bhle", weights, v)
        return torch.einsum("bhle,hed->bld", mixed, self.output / math.sqrt(x.shape[-1]))


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

    def forward(self, x: torch.Tensor, keep: torch.Tensor, factor: torch.Tensor, queries: int | None) -> torch.Tensor:
        """Map ``x`` (batch, length, d) to (batch, queries or length, d).

        Parameters
        ----------
        x : torch.Tensor
            (batch, length, d).
        keep : torch.Tensor
            bool (batch, length), True at real tokens.
        factor : torch.Tensor
            (batch,), the attention scores' factor.
        queries : int or None
            Only the first ``queries`` positions are computed (None: every position).

        Returns
        -------
        torch.Tensor
            (batch, queries or length, d).
        """
        x = (x if queries is None else x[:, :queries]) + self.attention(_layer_norm(x), keep, factor, queries)
        return x + self.mlp(_layer_norm(x))


class SmallTransformer(nn.Module):
    """The classifier of the module docstring. ``forward(tokens, keep)`` takes token ids (batch,
    length) with the classification token at position 0 and padding anywhere ``keep`` is False,
    and returns the output f of every word, shape (batch,); ``forward(tokens, keep, attention=True)``
    returns instead the last layer's attention weights of the classification token, (batch, heads,
    length).

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
        elif shape.positions == "first":
            self.positions = _parameter(3, shape.width)
        elif shape.positions == "sinusoidal":
            self.register_buffer("sinusoid", sinusoidal_positions(shape.max_positions, shape.width))
        if shape.previous_token:
            self.previous = _parameter(shape.alphabet_size + 1, shape.width)
        self.blocks = nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.readout_weight = _parameter(shape.width)
        self.readout_bias = _parameter()

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """The input vectors (batch, length, d): token, position and previous-token embeddings.

        Parameters
        ----------
        tokens : torch.Tensor
            int64 (batch, length), the classification token first.

        Returns
        -------
        torch.Tensor
            (batch, length, d), in the parameters' dtype.

        Raises
        ------
        ValueError
            If ``tokens`` has more than ``max_positions`` positions and the positions are a table.
        """
        length = tokens.shape[-1]
        x = self.tokens[tokens]
        if self.shape.positions in ("learned", "sinusoidal") and length > self.shape.max_positions:
            raise ValueError(f"tokens must have at most max_positions = {self.shape.max_positions} positions")
        if self.shape.positions == "learned":
            x = x + self.positions[:length]
        elif self.shape.positions == "sinusoidal":
            x = x + self.sinusoid[:length].to(x.dtype)
        elif self.shape.positions == "first":
            x = x + self.positions[torch.arange(length, device=tokens.device).clamp(max=2)]
        if self.shape.previous_token:
            before = torch.cat([torch.full_like(tokens[..., :2], self.shape.alphabet_size), tokens[..., 1:-1]], -1)
            x = x + self.previous[before[..., :length]]
        return x

    def forward(self, tokens: torch.Tensor, keep: torch.Tensor, attention: bool = False) -> torch.Tensor:
        """The output f of every word (or, with ``attention``, the classification token's attention weights).

        Parameters
        ----------
        tokens : torch.Tensor
            int64 (batch, length), the classification token first.
        keep : torch.Tensor
            bool (batch, length), True at real tokens.
        attention : bool, optional
            Return the last layer's attention weights of the classification token, (batch, heads, length).

        Returns
        -------
        torch.Tensor
            (batch,), or (batch, heads, length) with ``attention``.

        Raises
        ------
        ValueError
            If ``tokens`` has more than ``max_positions`` positions and the positions are a table.
        """
        x = self.embed(tokens)
        if self.shape.scaling == "log":
            factor = torch.log(keep.sum(dim=-1).to(x.dtype))
        else:
            factor = torch.ones(tokens.shape[0], dtype=x.dtype, device=x.device)
        for block in self.blocks[:-1]:
            x = block(x, keep, factor, None)
        last = self.blocks[-1]
        if attention:
            return last.attention.weights(_layer_norm(x), keep, factor, 1)[0][:, :, 0]
        cls = _layer_norm(last(x, keep, factor, 1)[:, 0])
        return cls @ (self.readout_weight / math.sqrt(self.shape.width)) + self.readout_bias

    def zero_at_start(self) -> tuple[str, ...]:
        """The parameters that start at 0 whatever the engine draws: the biases under the standard
        initialisation, none under the scaled one.

        Returns
        -------
        tuple of str
            Parameter names.
        """
        if self.shape.initialisation == "scaled":
            return ()
        return tuple(name for name, _ in self.named_parameters() if name.endswith(("b_in", "b_out", "readout_bias")))


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
        elif name in ("tokens", "positions", "previous"):
            group = shape.embedding_group
        elif name.startswith("readout"):
            group = "output"
        else:  # pragma: no cover - a parameter added without a group
            raise AssertionError(f"parameter {name} has no group")
        groups[name] = (tuple(value.shape), group)
    return groups


@fill_doc
def batched_outputs(
    model: SmallTransformer,
    params: Mapping[str, torch.Tensor],
    tokens: torch.Tensor,
    keep: torch.Tensor,
    dtype: torch.dtype = torch.float64,
    attention: bool = False,
) -> torch.Tensor:
    """The output of every (row, seed) model on its words, shape (rows, seeds, batch), computed in
    ``dtype`` (the parameters are cast to it first); with ``attention``, the classification token's
    last-layer attention weights instead, (rows, seeds, batch, heads, length).

    ``params`` name -> (rows, seeds, ...); ``tokens`` and ``keep`` (seeds, batch, length), each
    seed's own words, or (batch, length), the same words for every model. One call of
    ``vmap(vmap(functional_call))``: the inner map runs over seeds, the outer over rows.

    Parameters
    ----------
    model : SmallTransformer
        The architecture (its own parameters are not used).
    %(params)s
    tokens : torch.Tensor
        int64 (seeds, batch, length), each seed's own words, or (batch, length), the same for every model.
    keep : torch.Tensor
        bool, the shape of ``tokens``, True at real tokens.
    dtype : torch.dtype, optional
        The arithmetic (torch.float64 or torch.float32).
    attention : bool, optional
        Return the attention weights of :meth:`SmallTransformer.forward`.

    Returns
    -------
    torch.Tensor
        (rows, seeds, batch), or (rows, seeds, batch, heads, length) with ``attention``.
    """

    def one(p: Mapping[str, torch.Tensor], t: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return functional_call(model, dict(p), (t, k, attention))

    data_dim = 0 if tokens.ndim == 3 else None
    over_seeds = vmap(one, in_dims=(0, data_dim, data_dim))
    cast = {name: value.to(dtype) for name, value in params.items()}
    return vmap(over_seeds, in_dims=(0, None, None))(cast, tokens, keep)


def forward_flops(shape: TransformerShape, length: int) -> int:
    """Floating-point operations (2 per multiply-add) of the matrix products of one forward pass
    on one word of ``length`` tokens (the classification token included), as the model computes it
    (the last block at the classification token alone): embeddings, the elementwise work, softmax
    and layer norms are not counted.

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

    def block(queries: int) -> int:
        projections = 2 * queries * d * d + 2 * 2 * n * d * d + 2 * queries * d * d  # query; key, value; output
        return projections + 2 * 2 * queries * n * d + 2 * 2 * queries * d * m  # scores, mixing; MLP

    return (shape.layers - 1) * block(n) + block(1) + 2 * d
