"""EXPLORATORY: does attention learning lag output-layer learning in joint training? (parameter readings)

The title's claim, measured directly rather than through a schedule that forces it. In *joint* training
(both groups from the first step, no warm-up), the engine records before every step (the task's
``observe``, :class:`TimedTask`):

* the **output layer's progress**, read two ways from the readout w_t and its final value w_T, both
  centred (their mean subtracted: a constant added to every entry changes neither model's output, since
  the one-layer model's pooled vector and the transformer's layer-normed vector sum to a constant): its
  *direction*, the alignment cos(w_t, w_T) (the primary reading: when the readout points the way it will
  end), and its *projection*, ``<w_t, w_T> / |w_T|^2``, the component along the final value (which also counts
  the readout's growth in length, and under the logistic loss the length keeps growing while the margins
  do);
* the **attention's progress**: the attention mass on the positions that decide the word
  (:func:`deciding_positions`), averaged over a fixed set of probe words of the training length (both
  classes; words without a deciding position left out): for the one-layer model of the book
  (:prf:ref:`def-model`) its weights alpha_i of :eq:`eq-attention`, for the standard transformer the
  classification token's weights in the last layer, averaged over heads.

Each curve X(t), t = 0..T (the last point after the last step), is turned into its share of the whole
change, P(t) = (X(t) - X(0)) / (X(T) - X(0)); the **half-time** of a seed is the first step at which
P(t) >= 1/2 (undefined when X(T) <= X(0): no net progress). Attention *lags* on a seed when its half-time
is later than the output layer's (by its direction; the projection gives a second reading). Per language
(:func:`summary`): the paired differences (attention's half-time minus the output's) over the seeds where both
are defined (a two-letter one-layer model's centred readout has one direction up to sign, so a seed whose
readout starts with the right sign has no net progress of its direction and is left out), their mean with a
95% BCa interval
(:func:`lagtheory.experiments.statistics.paired.bootstrap_interval`), their median, and how many seeds lag.

Two models: the book's one-layer model on the language study's tasks, in the chapter's regime
(:data:`lagtheory.experiments.tasks.languages.task.LANGUAGE_TRAINING`: SGD, attention at 0, where the theory
predicts the lag), and the standard transformer in the registered transformer study's configuration on
the languages that pass its fit gate. Seeds :data:`TIMING_SEEDS`, used by no other run.

The command ``python -m lagtheory.experiments.run lag-timing [--output PATH] [--design PATH]`` writes the record (default
``runs/lag_timing.json``; the committed copy is ``book/data/lag_timing.json``).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from ..engine.cells import TrainingConfig, run_rows, seed_rng
from ..parameters import fill_doc
from ..paths import TRANSFORMER_DESIGN
from ..statistics.paired import bootstrap_interval
from ..tasks.languages.catalogue import TASKS
from ..tasks.languages.features import padded_feature_ids
from ..tasks.languages.sampling import sample_strings
from ..tasks.languages.task import LANGUAGE_TRAINING, LanguageRuns
from ..tasks.transformer.model import batched_outputs
from ..tasks.transformer.task import TransformerLanguageRuns, TransformerSetting, with_classification_token
from .records import config_from_dict, config_to_dict, versions
from .studies import LANGUAGE_SETTING, STAR_FREE

TIMING_SEEDS: tuple[int, ...] = tuple(range(400_000, 400_030))
"""The seeds of this measurement (30), used by no other run."""
PROBE_SEED = 2029
"""Seeds the probe words."""
PROBE_PER_CLASS = 32
"""Probe words of each class."""
RULES = {
    "FIRST": "first",
    "FIRST_LEARNED": "first",
    "LAST_B": "last",
    "EVEN_PAIRS": "first and last",
    "CONTAINS_AB": "ab",
    "A_STAR_B_STAR": "ba",
    "CONTAINS_B_NOT_C": "b or c",
    "TWO_B": "b",
    "PARITY": "b",
}
"""Language -> the positions that decide a word (letters a = 0, b = 1, c = 2)."""


def deciding_positions(language: str, words: NDArray[np.int64], features: str = "tokens") -> NDArray[np.bool_]:
    """The positions (words, n) that decide each word of ``language`` (:data:`RULES`), for a model reading
    ``features``: the letters themselves ("tokens"), or bigrams (x_(i-1), x_i) ("bigram", "cyclic-bigram",
    :mod:`lagtheory.experiments.tasks.languages.features`), where a pair is carried by its second position and,
    with cyclic bigrams, the pair (x_n, x_1) by position 1.

    Parameters
    ----------
    language : str
        A key of :data:`RULES`.
    words : ndarray
        int64 (words, n), letters 0..k-1.
    features : {"tokens", "bigram", "cyclic-bigram"}, optional
        What the model reads at each position.

    Returns
    -------
    ndarray
        bool (words, n).

    Raises
    ------
    ValueError
        If ``language`` has no rule or ``features`` is unknown.
    """
    if language not in RULES:
        raise ValueError(f"language must be one of {tuple(RULES)}, got {language!r}")
    if features not in ("tokens", "bigram", "cyclic-bigram"):
        raise ValueError(f"features must be 'tokens', 'bigram' or 'cyclic-bigram', got {features!r}")
    words = np.asarray(words, dtype=np.int64)
    mask = np.zeros(words.shape, dtype=bool)
    rule = RULES[language]
    if rule == "first" or (rule == "first and last" and features == "cyclic-bigram"):
        mask[:, 0] = True
    elif rule == "first and last":
        mask[:, [0, -1]] = True
    elif rule == "last":
        mask[:, -1] = True
    elif rule in ("ab", "ba"):
        first, second = (0, 1) if rule == "ab" else (1, 0)
        pair = (words[:, :-1] == first) & (words[:, 1:] == second)
        mask[:, 1:] |= pair
        if features == "tokens":
            mask[:, :-1] |= pair
    else:
        mask = (words == 1) | ((words == 2) if rule == "b or c" else False)
    return mask


def probe_words(task: LanguageRuns | TransformerLanguageRuns, length: int) -> tuple[NDArray[np.int64], NDArray]:
    """:data:`PROBE_PER_CLASS` uniform words of each class of ``length`` letters (from :data:`PROBE_SEED`),
    and the deciding positions of each for what the task's model reads.

    Parameters
    ----------
    task : LanguageRuns or TransformerLanguageRuns
        The task.
    length : int
        The word length.

    Returns
    -------
    tuple of ndarray
        The words (words, length) and their deciding positions, bool (words, length).
    """
    dfa = task.dfa if isinstance(task, TransformerLanguageRuns) else task.task.dfa
    features = "tokens" if isinstance(task, TransformerLanguageRuns) else task.task.features
    rng = seed_rng(PROBE_SEED, length)
    words = np.concatenate([sample_strings(dfa, length, label, PROBE_PER_CLASS, rng) for label in (1, -1)])
    return words, deciding_positions(task.name, words, features)


def one_layer_weights(task: LanguageRuns, params: Mapping[str, torch.Tensor], words: NDArray) -> torch.Tensor:
    """The one-layer model's attention weights alpha_i (rows, seeds, words, n) on words of one length n:
    softmax over positions of log(n) (theta[feature_i] + s_i), s_i the score of position i among the first P
    (:eq:`eq-attention`).

    Parameters
    ----------
    task : LanguageRuns
        The task (its features and position scores).
    params : mapping of str to torch.Tensor
        ``theta`` (rows, seeds, d) and, with position scores, ``s`` (rows, seeds) or (rows, seeds, P).
    words : ndarray
        int64 (words, n).

    Returns
    -------
    torch.Tensor
        float64 (rows, seeds, words, n).
    """
    n = words.shape[1]
    spec = task.task
    ids = torch.from_numpy(padded_feature_ids(words, np.full(len(words), n), spec.features, spec.alphabet_size))
    scores = params["theta"][..., ids]  # (rows, seeds, words, n)
    if spec.position_scores:
        extra = params["s"].reshape(*params["s"].shape[:2], -1)  # (rows, seeds, P)
        width = min(extra.shape[-1], n)
        pad = torch.zeros(*extra.shape[:2], n - width, dtype=scores.dtype)
        scores = scores + torch.cat([extra[..., :width], pad], dim=-1)[:, :, None, :]
    return torch.softmax(np.log(n) * scores, dim=-1)


@fill_doc
def transformer_weights(
    task: TransformerLanguageRuns, params: Mapping[str, torch.Tensor], words: NDArray
) -> torch.Tensor:
    """The transformer's last-layer attention weights of the classification token on the letters, averaged
    over heads, (rows, seeds, words, n) (the weight on the classification token itself left out).

    Parameters
    ----------
    task : TransformerLanguageRuns
        The task (its model and arithmetic).
    %(params)s
    words : ndarray
        int64 (words, n).

    Returns
    -------
    torch.Tensor
        float64 (rows, seeds, words, n).
    """
    tokens, keep = with_classification_token(words, np.full(len(words), words.shape[1]), len(task.dfa.alphabet))
    weights = batched_outputs(task.model, params, tokens, keep, task.dtype, attention=True)
    return weights.mean(dim=-2)[..., 1:].to(torch.float64)


class TimedTask:
    """An engine task (:class:`~lagtheory.experiments.tasks.languages.task.LanguageRuns` or
    :class:`~lagtheory.experiments.tasks.transformer.task.TransformerLanguageRuns`) whose ``observe`` records,
    before every step, the centred readout ``readout`` (rows, seeds, d) and the attention mass on the deciding
    positions of the probe words ``attention_mass`` (rows, seeds) (module docstring); everything else is the
    task's own.

    Parameters
    ----------
    task : LanguageRuns or TransformerLanguageRuns
        The task.
    length : int
        The probe words' length (the training length N0).

    Raises
    ------
    TypeError
        If ``task`` is neither.
    """

    def __init__(self, task: LanguageRuns | TransformerLanguageRuns, length: int) -> None:
        if isinstance(task, TransformerLanguageRuns):
            self.readout_name, self.weights_of = "readout_weight", transformer_weights
        elif isinstance(task, LanguageRuns):
            self.readout_name, self.weights_of = "u", one_layer_weights
        else:
            raise TypeError(f"task must be a LanguageRuns or TransformerLanguageRuns, got {type(task).__name__}")
        self.task, self.name = task, task.name
        self.words, mask = probe_words(task, length)
        self.mask = torch.from_numpy(mask)
        self.counted = self.mask.any(dim=-1)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.task, name)

    @fill_doc
    def attention_mass(self, params: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The mean attention mass on the deciding positions of the probe words that have one, (rows, seeds).

        Parameters
        ----------
        %(params)s

        Returns
        -------
        torch.Tensor
            float64 (rows, seeds).
        """
        weights = self.weights_of(self.task, params, self.words)
        mass = (weights * self.mask).sum(dim=-1)  # (rows, seeds, words)
        return mass[..., self.counted].mean(dim=-1)

    @fill_doc
    def observe(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, torch.Tensor]:
        """The centred readout and the attention mass (class docstring).

        Parameters
        ----------
        %(params)s

        Returns
        -------
        dict of str to torch.Tensor
            ``readout`` (rows, seeds, d) and ``attention_mass`` (rows, seeds).
        """
        readout = params[self.readout_name]
        return {"readout": readout - readout.mean(dim=-1, keepdim=True), "attention_mass": self.attention_mass(params)}


def half_times(curves: NDArray[np.float64]) -> NDArray[np.float64]:
    """The first index t at which each curve X (last axis, points 0..T) has made half its net change,
    (X(t) - X(0)) >= (X(T) - X(0)) / 2; NaN where X(T) <= X(0) (no net progress) or a point is not finite.

    Parameters
    ----------
    curves : ndarray
        float64 (..., points).

    Returns
    -------
    ndarray
        float64 (...), steps or NaN.
    """
    curves = np.asarray(curves, dtype=np.float64)
    change = curves[..., -1] - curves[..., 0]
    reached = (curves - curves[..., :1]) >= change[..., None] / 2
    first = np.argmax(reached, axis=-1).astype(np.float64)
    valid = (change > 0) & np.isfinite(curves).all(axis=-1)
    return np.where(valid, first, np.nan)


def shares(curves: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each curve's share of its net change, (X(t) - X(0)) / (X(T) - X(0)); NaN where X(T) <= X(0).

    Parameters
    ----------
    curves : ndarray
        float64 (..., points).

    Returns
    -------
    ndarray
        float64, the shape of ``curves``.
    """
    curves = np.asarray(curves, dtype=np.float64)
    change = curves[..., -1:] - curves[..., :1]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(change > 0, (curves - curves[..., :1]) / np.where(change > 0, change, 1.0), np.nan)


@fill_doc
def run_timing(task: TimedTask, config: TrainingConfig, seeds: Sequence[int]) -> dict[str, NDArray[np.float64]]:
    """Joint training of ``task`` on ``seeds`` (one engine call), and per seed the two progress curves and
    their half-times (module docstring).

    Parameters
    ----------
    task : TimedTask
        The task with its probe words.
    config : TrainingConfig
        The training (joint's phases: both groups, every step).
    %(seeds)s

    Returns
    -------
    dict of str to ndarray
        ``output``, ``projection`` and ``attention`` (seeds, T + 1): the readout's alignment with its final
        value, its component along it, and the attention mass, at every step and after the last;
        ``projection_half``, ``output_half``, ``attention_half`` (seeds,): the half-times; ``loss`` (seeds, T).
    """
    result = run_rows(task, [("joint", config)], seeds, evaluate=False)
    final = {name: torch.from_numpy(value) for name, value in result.final.items()}
    readout = result.traces["readout"][0]  # (seeds, d, steps)
    last = final[task.readout_name][0].numpy()
    last = last - last.mean(axis=-1, keepdims=True)
    path = np.concatenate([readout, last[..., None]], axis=-1)
    along = np.einsum("sdt,sd->st", path, last)
    with np.errstate(divide="ignore", invalid="ignore"):
        projection = along / np.einsum("sd,sd->s", last, last)[:, None]
        output = along / (np.linalg.norm(path, axis=1) * np.linalg.norm(last, axis=-1)[:, None])
    attention = np.concatenate(
        [result.traces["attention_mass"][0], task.attention_mass(final)[0].numpy()[:, None]], axis=-1
    )
    return {
        "output": output,
        "projection": projection,
        "attention": attention,
        "output_half": half_times(output),
        "projection_half": half_times(projection),
        "attention_half": half_times(attention),
        "loss": result.losses[0],
    }


def summary(output_half: NDArray[np.float64], attention_half: NDArray[np.float64]) -> dict[str, Any]:
    """Per language: the paired differences attention - output of the half-times over the seeds where both
    are defined; their number, mean, 95% BCa interval, median, and the seeds where attention lags (> 0),
    leads (< 0) or ties.

    Parameters
    ----------
    output_half, attention_half : ndarray
        float64 (seeds,), the half-times (NaN: undefined).

    Returns
    -------
    dict
        ``seeds``, ``mean``, ``interval`` (None with fewer than 2 seeds), ``median``, ``lags``, ``leads``,
        ``ties``, and ``undefined`` (seeds left out).
    """
    both = np.isfinite(output_half) & np.isfinite(attention_half)
    d = attention_half[both] - output_half[both]
    return {
        "seeds": int(both.sum()),
        "undefined": int((~both).sum()),
        "mean": float(d.mean()) if d.size else None,
        "interval": list(bootstrap_interval(d)) if d.size >= 2 else None,
        "median": float(np.median(d)) if d.size else None,
        "lags": int((d > 0).sum()),
        "leads": int((d < 0).sum()),
        "ties": int((d == 0).sum()),
    }


def _rounded(values: NDArray[np.float64], digits: int = 6) -> NDArray[np.float64]:
    """Values rounded to ``digits`` significant digits (as :func:`_stored` writes them), non-finite kept."""
    return np.vectorize(lambda v: float(f"{v:.{digits}g}") if np.isfinite(v) else v, otypes=[np.float64])(values)


def _stored(values: NDArray[np.float64], digits: int = 6) -> list:
    """Values as JSON-ready lists, rounded to ``digits`` significant digits, non-finite as None."""
    if np.ndim(values) > 0:
        return [_stored(value, digits) for value in values]
    return float(f"{values:.{digits}g}") if np.isfinite(values) else None


Model = Mapping[str, tuple[Callable[[], TimedTask], TrainingConfig]]
"""Language -> (a function building its :class:`TimedTask`, its joint training)."""


@fill_doc
def measure(model: Model, seeds: Sequence[int]) -> dict[str, dict[str, Any]]:
    """:func:`run_timing` on every language of ``model`` and :func:`summary` of each, as JSON-ready data.

    Parameters
    ----------
    model : mapping
        Language -> (a function building its :class:`TimedTask`, its training).
    %(seeds)s

    Returns
    -------
    dict of str to dict
        Language -> ``training``, the half-times and curves of :func:`run_timing` (per seed), ``summary``
        (attention against the readout's direction), ``summary_projection`` (against its projection), ``seconds``.
    """
    found = {}
    for language, (build, config) in model.items():
        start = time.perf_counter()
        timed = run_timing(build(), config, seeds)
        for curve in ("output", "projection", "attention"):  # the half-times of the curves as stored
            timed[curve] = _rounded(timed[curve])
            timed[f"{curve}_half"] = half_times(timed[curve])
        found[language] = {
            "training": config_to_dict(config),
            **{
                key: _stored(timed[key])
                for key in ("output_half", "projection_half", "attention_half", "output", "projection", "attention")
            },
            "summary": summary(timed["output_half"], timed["attention_half"]),
            "summary_projection": summary(timed["projection_half"], timed["attention_half"]),
            "seconds": time.perf_counter() - start,
        }
    return found


@fill_doc
def default_models(design: Mapping[str, Any]) -> dict[str, Model]:
    """The two models of the module docstring: ``one-layer``, the language study's tasks in the chapter's
    regime, probed at their training length 40; ``transformer``, the registered transformer study's compared
    languages in its configuration, joint at its tuned rate (the registered design), probed at N0.

    Parameters
    ----------
    %(design)s

    Returns
    -------
    dict of str to Model
        Model name -> its languages.
    """
    from .transformer_pilot import training_at

    one_layer: dict[str, Any] = {}
    for name in STAR_FREE:
        one_layer[name] = (
            lambda name=name: TimedTask(LanguageRuns(TASKS[name], LANGUAGE_SETTING), LANGUAGE_SETTING.max_train_length),
            LANGUAGE_TRAINING,
        )
    setting = config_from_dict(TransformerSetting, design["setting"])
    base = config_from_dict(TrainingConfig, design["training"])
    transformer: dict[str, Any] = {}
    for language in design["compared"]:
        rate = design["choices"][language]["joint"]["rate"]
        transformer[language] = (
            lambda language=language: TimedTask(TransformerLanguageRuns(language, setting), setting.max_train_length),
            training_at(rate, base=base),
        )
    return {"one-layer": one_layer, "transformer": transformer}


def main(output: Path, design: Path = TRANSFORMER_DESIGN, models: Mapping[str, Model] | None = None) -> Path:
    """Measure both models (module docstring) and write the record; returns its path.

    Parameters
    ----------
    output : pathlib.Path
        The record written.
    design : pathlib.Path, optional
        The registered transformer study's design file.
    models : mapping, optional
        Model name -> its languages (default :func:`default_models` of the design file, ``design``, default
        :data:`~lagtheory.experiments.paths.TRANSFORMER_DESIGN`; read as data here, its registered hash is checked
        by the registered study's loader, :func:`lagtheory.experiments.confirmatory.transformer_design.load_design`).

    Returns
    -------
    pathlib.Path
        The record written.
    """
    torch.set_num_threads(1)
    record: dict[str, Any] = {
        "format": "lagtheory-lag-timing-1",
        "exploratory": True,
        "seeds": list(TIMING_SEEDS),
        "probe": {"seed": PROBE_SEED, "per_class": PROBE_PER_CLASS, "rules": RULES},
        "versions": versions(),
        "models": {},
    }
    if models is None:
        models = default_models(json.loads(design.read_text(encoding="utf-8")))
    for name, model in models.items():
        record["models"][name] = measure(model, TIMING_SEEDS)
        print(f"{name} done", file=sys.stderr)
    output.write_text(json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n")
    return output
