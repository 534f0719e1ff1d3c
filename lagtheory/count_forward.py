"""The count path of the shallow transformer (:prf:ref:`def-model`) as functions of its parameters:
the score factor ``s(n)`` (:eq:`eq-attention`, :eq:`eq-unscaled`), the pooled vector from token
counts in log space (``logit_v = log(count_v) + theta_v s(n)``, finite for lengths up to 1e18), the
same with a marked first token, and the linear readout ``f = u . h`` (:eq:`eq-readout`).
:class:`lagtheory.model.ShallowTransformer` computes its count forward with them, and the language
tasks call them on batched parameters.
"""

from __future__ import annotations

import torch


def score_scale(lengths: torch.Tensor, scaling: str) -> torch.Tensor:
    """The factor multiplying the attention scores: ``log n`` :eq:`eq-attention` or 1 :eq:`eq-unscaled`.

    Parameters
    ----------
    lengths : torch.Tensor
        float64 lengths n >= 1, any shape.
    scaling : {"log", "none"}
        ``"log"`` gives ``log n``; any other value gives 1 (not validated here).

    Returns
    -------
    torch.Tensor
        float64, the shape of ``lengths``.
    """
    return torch.log(lengths) if scaling == "log" else torch.ones_like(lengths)


def pooled_from_counts(
    theta: torch.Tensor,
    s: torch.Tensor | None,
    counts: torch.Tensor,
    first_token: torch.Tensor | None,
    scaling: str,
) -> torch.Tensor:
    """The pooled vector ``h`` of :meth:`lagtheory.model.ShallowTransformer.pooled_counts`, shape (..., batch, d),
    for parameters with optional leading dimensions.

    A leading dimension (one entry per seed, say) broadcasts, so several independent models
    run in one call; without one this is exactly the computation of ``pooled_counts``. The
    marker is the case P = 1 of :func:`pooled_with_prefix`. Nothing is validated here
    (``pooled_counts`` validates its input).

    Parameters
    ----------
    theta : torch.Tensor
        float64 (..., d), the attention scores.
    s : torch.Tensor or None
        float64 (...), the position-1 score, or None for no marker.
    counts : torch.Tensor
        float64 (..., batch, d) token counts, as in ``pooled_counts``.
    first_token : torch.Tensor or None
        LongTensor (..., batch), the token at position 1; used only when ``s`` is given.
    scaling : {"log", "none"}
        Length-scaled (:eq:`eq-attention`) or unscaled (:eq:`eq-unscaled`) scores.

    Returns
    -------
    torch.Tensor
        float64 (..., batch, d).
    """
    if s is None:
        lengths = counts.sum(dim=-1)
        scores = theta.unsqueeze(-2) * score_scale(lengths, scaling).unsqueeze(-1)
        return torch.softmax(torch.log(counts) + scores, dim=-1)
    return pooled_with_prefix(theta, s.unsqueeze(-1), counts, first_token.unsqueeze(-1), scaling)


def pooled_with_prefix(
    theta: torch.Tensor,
    position_scores: torch.Tensor,
    counts: torch.Tensor,
    prefix: torch.Tensor,
    scaling: str,
) -> torch.Tensor:
    """The pooled vector ``h`` when each of the first P positions carries its own score, shape
    (..., batch, d): position i <= P with token v gets the score ``theta_v + position_scores[i]``
    (times log n), every later position ``theta_v`` (:eq:`eq-attention`; the marker is P = 1).

    The later positions enter through their counts (the prefix tokens removed), in log space
    as in ``pooled_counts``; leading dimensions broadcast. Nothing is validated here.

    Parameters
    ----------
    theta : torch.Tensor
        float64 (..., d), the attention scores.
    position_scores : torch.Tensor
        float64 (..., P), the extra scores of positions 1..P.
    counts : torch.Tensor
        float64 (..., batch, d), the token counts of the whole words.
    prefix : torch.Tensor
        LongTensor (..., batch, P), the tokens of positions 1..P, -1 past a word's end (n < P).
    scaling : {"log", "none"}
        Length-scaled (:eq:`eq-attention`) or unscaled (:eq:`eq-unscaled`) scores.

    Returns
    -------
    torch.Tensor
        float64 (..., batch, d).
    """
    d = theta.shape[-1]
    lengths = counts.sum(dim=-1)
    scale = score_scale(lengths, scaling).unsqueeze(-1)
    scores = theta.unsqueeze(-2) * scale
    valid = prefix >= 0
    ids = prefix.clamp(min=0)
    one_hot = torch.nn.functional.one_hot(ids, d).to(torch.float64) * valid.unsqueeze(-1).to(torch.float64)
    rest_logits = torch.log(counts - one_hot.sum(dim=-2)) + scores
    shape = torch.broadcast_shapes((*theta.unsqueeze(-2).shape[:-1], ids.shape[-1]), ids.shape)
    theta_prefix = theta.unsqueeze(-2).expand(*shape[:-1], d).gather(-1, ids.expand(shape))
    prefix_logits = (theta_prefix + position_scores.unsqueeze(-2)) * scale
    prefix_logits = torch.where(valid, prefix_logits, -torch.inf)
    weights = torch.softmax(torch.cat([rest_logits, prefix_logits], dim=-1), dim=-1)
    return weights[..., :d] + (weights[..., d:].unsqueeze(-1) * one_hot).sum(dim=-2)


def linear_readout(u: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """``f = u . h`` :eq:`eq-readout` evaluated as ``u_0 + sum_(v>=1) (u_v - u_0) h_v`` (exactly 0 gradient
    to ``h`` when all ``u_v`` are equal, see :class:`lagtheory.model.ShallowTransformer`).

    Parameters
    ----------
    u : torch.Tensor
        float64 (d,), or (..., d) for several models at once.
    h : torch.Tensor
        float64 pooled vectors, (batch, d) with ``u`` (d,), or (..., batch, d).

    Returns
    -------
    torch.Tensor
        float64 (batch,) or (..., batch).
    """
    if u.ndim == 1:
        return u[0] + h[:, 1:] @ (u[1:] - u[0])
    return u[..., :1] + (h[..., 1:] @ (u[..., 1:] - u[..., :1]).unsqueeze(-1)).squeeze(-1)
