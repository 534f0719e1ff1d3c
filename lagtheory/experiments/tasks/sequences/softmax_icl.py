"""In-context linear regression read by one *softmax* attention layer, the
task of the chapter ``empirical_icl`` besides the linear layer of
:mod:`lagtheory.experiments.tasks.sequences.icl`.

Data: the prompts of :func:`lagtheory.experiments.tasks.sequences.icl.sample_prompts` (a task
vector beta ~ N(0, I/D), inputs x_i, x_q ~ N(0, I_D), labels y_i = <beta,
x_i>, the target y_q = <beta, x_q>).

Model. The tokens are z_i = (x_i, y_i) and the query token (x_q, 0). The
attention scores the pair i by s_i = <z_i, K x_q> (``K`` (D+1, D), the columns
of the key-query matrix that meet the query token: the attention group),
normalises them by a softmax over the m pairs of the prompt, and the output
reads the weighted pairs with ``w`` (D+1,) (the label row of the
value-projection matrix: the output group):

    alpha_i = exp(s_i) / sum_j exp(s_j),      y_hat = sum_i alpha_i <w, z_i>.

Unlike the linear layer, whose prediction vanishes identically at K = 0 so
that an output-only phase cannot move it, here K = 0 gives uniform attention
and y_hat = <w, z_bar> (the mean pair), which the output layer can move
alone. The preset attention K = (I_D; 0) with w = e_(D+1) predicts
sum_i alpha_i y_i with alpha_i proportional to exp(<x_i, x_q>), which tends
to E[y e^(<x, x_q>)] / E[e^(<x, x_q>)] = <beta, x_q> = y_q as m grows (for
x ~ N(0, I), ``E[x e^(<x, a>)] = a e^(|a|^2 / 2)``): a solution that gets better
with the context size, as length generalisation asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from .driver import seed_einsum
from .icl import ICLSetting, PromptAttentionLayer, PromptBatch, PromptRegressionTask


def attention_weights(key_query: torch.Tensor, batch: PromptBatch) -> torch.Tensor:
    """``alpha_i = softmax_i(<z_i, K x_q>)`` over the real pairs of each prompt (0 on padding), shape
    (..., B, M): ``key_query`` K (..., D+1, D) with any leading (schedule, seed) dimensions, the batch
    with or without a seed dimension.

    Parameters
    ----------
    key_query : torch.Tensor
        K (..., D+1, D), any leading (schedule, seed) dimensions.
    batch : PromptBatch
        The prompts, with or without a seed dimension.

    Returns
    -------
    torch.Tensor
        (..., B, M).
    """
    keyed = seed_einsum("ad,bd->ba", key_query, batch.query, 2)  # K x_q, (..., B, D+1)
    scores = seed_einsum("bd,bmd->bm", keyed[..., :-1], batch.inputs, 2) + keyed[..., -1:] * batch.labels
    if not bool(batch.mask.all()):
        scores = scores.masked_fill(~batch.mask, -torch.inf)
    return torch.softmax(scores, dim=-1)


def predict(key_query: torch.Tensor, value: torch.Tensor, batch: PromptBatch) -> torch.Tensor:
    """``y_hat = sum_i alpha_i <w, z_i>`` of each prompt, shape (..., B) (shapes as in
    :func:`attention_weights`; ``value`` w (..., D+1)).

    Parameters
    ----------
    key_query : torch.Tensor
        K (..., D+1, D), any leading (schedule, seed) dimensions.
    value : torch.Tensor
        w (..., D+1), the same leading dimensions.
    batch : PromptBatch
        The prompts, with or without a seed dimension.

    Returns
    -------
    torch.Tensor
        (..., B).
    """
    read = seed_einsum("d,bmd->bm", value[..., :-1], batch.inputs, 1) + value[..., -1:, None] * batch.labels
    return (attention_weights(key_query, batch) * read).sum(dim=-1)


class SoftmaxSelfAttention(PromptAttentionLayer):
    """The model of the module docstring (:func:`predict`) for one set of parameters."""

    prediction = staticmethod(predict)


@dataclass(frozen=True)
class SoftmaxICLSetting(ICLSetting):
    """The data of the task: input dimension ``dim`` D (3 unless said); the sizes are context sizes m.

    Attributes
    ----------
    train_min, train_max, test_sizes, test_size, test_seed
        As in :class:`~lagtheory.experiments.tasks.sequences.driver.SequenceSetting` (context sizes).
    dim : int, optional
        The input dimension D, >= 1.

    Raises
    ------
    ValueError
        If a field is out of range.
    """

    dim: int = 3


class SoftmaxICLTask(PromptRegressionTask):
    """In-context linear regression read by softmax attention as an engine task; the preset K is
    (I_D; 0) (module docstring). Its prompts carry no moments (the softmax reads the pairs).

    Parameters
    ----------
    setting : SoftmaxICLSetting
        The data.

    Raises
    ------
    TypeError
        If ``setting`` is not a :class:`SoftmaxICLSetting`.
    """

    name = "in-context linear regression, softmax attention"
    prediction = staticmethod(predict)
    moments = False

    def __init__(self, setting: SoftmaxICLSetting) -> None:
        if not isinstance(setting, SoftmaxICLSetting):
            raise TypeError(f"setting must be a SoftmaxICLSetting, got {type(setting).__name__}")
        self.setting = setting

    def preset_attention(self) -> Mapping[str, torch.Tensor]:
        d = self.setting.dim
        return {"key_query": torch.cat([torch.eye(d, dtype=torch.float64), torch.zeros(1, d, dtype=torch.float64)])}
