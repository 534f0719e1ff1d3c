"""In-context linear regression read by one *softmax* attention layer, the
task of the chapter ``empirical_icl`` besides the linear layer of
:mod:`lagtheory.experiments.icl`.

Data: the prompts of :func:`lagtheory.experiments.icl.sample_prompts` (a task
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
x ~ N(0, I), E[x e^(<x, a>)] = a e^(|a|^2 / 2)): a solution that gets better
with the context size, as length generalisation asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from lagtheory._validation import check_integer

from .icl import PromptBatch, sample_prompts
from .sequence_tasks import SequenceRegression, SequenceSetting, seed_einsum


def attention_weights(key_query: torch.Tensor, batch: PromptBatch) -> torch.Tensor:
    """``alpha_i = softmax_i(<z_i, K x_q>)`` over the real pairs of each prompt (0 on padding), shape
    (..., B, M): ``key_query`` K (..., D+1, D) with any leading (schedule, seed) dimensions, the batch
    with or without a seed dimension."""
    keyed = seed_einsum("ad,bd->ba", key_query, batch.query, 2)  # K x_q, (..., B, D+1)
    scores = seed_einsum("bd,bmd->bm", keyed[..., :-1], batch.inputs, 2) + keyed[..., -1:] * batch.labels
    if not bool(batch.mask.all()):
        scores = scores.masked_fill(~batch.mask, -torch.inf)
    return torch.softmax(scores, dim=-1)


def predict(key_query: torch.Tensor, value: torch.Tensor, batch: PromptBatch) -> torch.Tensor:
    """``y_hat = sum_i alpha_i <w, z_i>`` of each prompt, shape (..., B) (shapes as in
    :func:`attention_weights`; ``value`` w (..., D+1))."""
    read = seed_einsum("d,bmd->bm", value[..., :-1], batch.inputs, 1) + value[..., -1:, None] * batch.labels
    return (attention_weights(key_query, batch) * read).sum(dim=-1)


class SoftmaxSelfAttention(torch.nn.Module):
    """The model of the module docstring for one set of parameters (the engine trains many at once
    through :func:`predict`): ``key_query`` K (D+1, D), the attention group, and ``value`` w (D+1,),
    the output group, both zero at construction."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = check_integer(dim, "dim", minimum=1)
        self.key_query = torch.nn.Parameter(torch.zeros(dim + 1, dim, dtype=torch.float64))
        self.value = torch.nn.Parameter(torch.zeros(dim + 1, dtype=torch.float64))

    def forward(self, batch: PromptBatch) -> torch.Tensor:
        """The prediction ``y_hat`` of each prompt, shape (B,)."""
        if not isinstance(batch, PromptBatch):
            raise TypeError(f"batch must be a PromptBatch, got {type(batch).__name__}")
        if batch.inputs.shape[-1] != self.dim:
            raise ValueError(f"batch inputs must have dimension {self.dim}, got {batch.inputs.shape[-1]}")
        return predict(self.key_query, self.value, batch)


@dataclass(frozen=True)
class SoftmaxICLSetting(SequenceSetting):
    """The data of the task: input dimension ``dim`` D; the sizes are context sizes m."""

    dim: int = 3

    def __post_init__(self) -> None:
        super().__post_init__()
        check_integer(self.dim, "dim", 1)


class SoftmaxICLTask(SequenceRegression):
    """In-context linear regression with softmax attention as an engine task: parameters ``value`` w
    (output group) and ``key_query`` K (attention group); the preset K is (I_D; 0) (module docstring)."""

    name = "in-context linear regression, softmax attention"

    def __init__(self, setting: SoftmaxICLSetting) -> None:
        if not isinstance(setting, SoftmaxICLSetting):
            raise TypeError(f"setting must be a SoftmaxICLSetting, got {type(setting).__name__}")
        self.setting = setting

    def parameter_shapes(self) -> Mapping[str, tuple[tuple[int, ...], str]]:
        d = self.setting.dim
        return {"value": ((d + 1,), "output"), "key_query": ((d + 1, d), "attention")}

    def preset_attention(self) -> Mapping[str, torch.Tensor]:
        d = self.setting.dim
        return {"key_query": torch.cat([torch.eye(d, dtype=torch.float64), torch.zeros(1, d, dtype=torch.float64)])}

    def sample(
        self, rng: np.random.Generator, batch_size: int | tuple[int, ...], min_size: int, max_size: int
    ) -> PromptBatch:
        return sample_prompts(rng, batch_size, min_size, max_size, self.setting.dim, moments=False)

    def predict(self, params: Mapping[str, torch.Tensor], batch: PromptBatch) -> torch.Tensor:
        return predict(params["key_query"], params["value"], batch)

    def target(self, batch: PromptBatch) -> torch.Tensor:
        return batch.query_label

    def observe(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, torch.Tensor]:
        """``label_value`` w_y and ``key_query_trace`` tr(K_x)/D."""
        key_query = params["key_query"]
        trace = torch.diagonal(key_query[..., :-1, :], dim1=-2, dim2=-1).mean(dim=-1)
        return {"label_value": params["value"][..., -1], "key_query_trace": trace}
