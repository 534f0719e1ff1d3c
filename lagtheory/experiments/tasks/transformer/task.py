"""The standard small transformer (:mod:`lagtheory.experiments.tasks.transformer.model`) on a language
(:mod:`lagtheory.experiments.tasks.transformer.languages`) as an engine task
(:class:`lagtheory.experiments.engine.cells.Task`), trained by :func:`lagtheory.experiments.engine.cells.run_cell`
through the one loop :func:`lagtheory.training.descend` under every schedule of
:mod:`lagtheory.schedules`.

Data: as in the language study (:mod:`lagtheory.experiments.tasks.languages.task`), the label +-1 with
probability 1/2, the length uniform on the lengths 1..N0 (``max_train_length``) at which the
label's class is non-empty, the word uniform in that class
(:func:`lagtheory.experiments.tasks.languages.sampling.labelled_words`), from each seed's own training stream
``seed_rng(seed, 1)``; the loss is the logistic loss of the output :eq:`eq-population-loss`.

Evaluation at each test length n (by default N0, 4 N0 and 16 N0, every word of one length, drawn
from ``seed_rng(test_seed, n)``): ``test_per_class`` uniform words of each class, and the hard
words (minimal pairs across the decision boundary, long runs;
:func:`lagtheory.experiments.tasks.transformer.languages.hard_words`). A run *recognises the language at
length n* when it classifies every test word of length n, random and hard, correctly (margin
y f > 0), and *recognises the language* when it does so at every test length above N0. This is a
sampled stand-in for the exact recognition of the one-layer model's study (which decides every word
of a length exactly, :mod:`lagtheory.experiments.tasks.languages.worst_case`): for this model no exact verifier
exists, so a run that recognises here may still misclassify a word that was not tested. A run
whose parameters are not finite recognises nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray

from lagtheory._validation import check_integer
from lagtheory.losses import logistic_loss

from ...engine.cells import StoredStream, TrainingConfig, seed_rng
from ...parameters import fill_doc
from ..languages.sampling import labelled_words, sample_strings
from .languages import TRANSFORMER_LANGUAGES, dfa_labels, hard_words
from .model import COMPUTE_DTYPES, SmallTransformer, TransformerShape, batched_outputs, parameter_groups


@dataclass(frozen=True)
class TransformerSetting:
    """The data, tests and architecture of the transformer task: training lengths
    1 to ``max_train_length`` (N0); at each of ``test_lengths`` (None: N0, 4 N0, 16 N0),
    ``test_per_class`` random words of each class and ``pairs_per_class`` minimal pairs started from
    each class, drawn from ``test_seed``; the test words are evaluated ``eval_chunk`` words at a time
    (memory). The architecture fields (``width`` ... ``embedding_group``, ``scaling``,
    ``previous_token``, ``initialisation``) are those of
    :class:`~lagtheory.experiments.tasks.transformer.model.TransformerShape`, whose alphabet comes from the
    language and whose position table covers the longest test word (:meth:`shape`);
    ``compute_dtype`` is the arithmetic of the forward and backward passes, "float64" or "float32"
    (the parameters and the optimiser stay float64; :func:`~lagtheory.experiments.tasks.transformer.model.batched_outputs`).

    Attributes
    ----------
    max_train_length : int, optional
        N0, >= 2.
    test_lengths : tuple of int or None, optional
        Strictly increasing lengths >= 2, the largest above N0 (None: N0, 4 N0, 16 N0).
    test_per_class : int, optional
        Random test words per class, >= 1.
    pairs_per_class : int, optional
        Minimal pairs started from each class, >= 1.
    test_seed : int, optional
        Seeds the test words, >= 0.
    eval_chunk : int, optional
        Words evaluated at a time, >= 1.
    width, heads, layers, mlp_width, positions, mlp_group, embedding_group : optional
        As in :class:`~lagtheory.experiments.tasks.transformer.model.TransformerShape`.
    scaling, previous_token, initialisation : optional
        As in :class:`~lagtheory.experiments.tasks.transformer.model.TransformerShape`.
    compute_dtype : {"float64", "float32"}, optional
        The arithmetic of the model's passes.

    Raises
    ------
    ValueError
        If a field is out of range.
    TypeError
        If a count is not an integer.
    """

    max_train_length: int = 16
    test_lengths: tuple[int, ...] | None = None
    test_per_class: int = 32
    pairs_per_class: int = 16
    test_seed: int = 2027
    eval_chunk: int = 4
    width: int = 16
    heads: int = 2
    layers: int = 1
    mlp_width: int = 32
    positions: str = "learned"
    mlp_group: str = "output"
    embedding_group: str = "attention"
    scaling: str = "none"
    previous_token: bool = False
    initialisation: str = "scaled"
    compute_dtype: str = "float64"

    LATER_OPTIONS = ("scaling", "previous_token", "initialisation", "compute_dtype")
    """The options added after the first transformer records (for the registered transformer study), at defaults that give the first model:
    a cell's record form leaves them out where they are at their defaults
    (:func:`lagtheory.experiments.exploratory.entries.cell_configuration`), so the first records still describe
    their cells exactly. Not a field."""

    def __post_init__(self) -> None:
        check_integer(self.max_train_length, "max_train_length", 2)
        if self.compute_dtype not in COMPUTE_DTYPES:
            raise ValueError(f"compute_dtype must be one of {tuple(COMPUTE_DTYPES)}, got {self.compute_dtype!r}")
        check_integer(self.test_per_class, "test_per_class", 1)
        check_integer(self.pairs_per_class, "pairs_per_class", 1)
        check_integer(self.test_seed, "test_seed", 0)
        check_integer(self.eval_chunk, "eval_chunk", 1)
        lengths = self.lengths
        if list(lengths) != sorted(set(lengths)) or min(lengths) < 2:
            raise ValueError(f"test_lengths must be a strictly increasing tuple of lengths >= 2, got {lengths!r}")
        if max(lengths) <= self.max_train_length:
            raise ValueError(f"test_lengths must reach beyond max_train_length = {self.max_train_length}")
        self.shape(2)  # checks the architecture fields

    def shape(self, alphabet_size: int) -> TransformerShape:
        """The model's architecture for an alphabet of ``alphabet_size`` letters, with a position for
        every token of the longest test word (and the classification token).

        Parameters
        ----------
        alphabet_size : int
            The number of letters, >= 2.

        Returns
        -------
        TransformerShape
            The architecture.
        """
        return TransformerShape(
            alphabet_size=alphabet_size,
            width=self.width,
            heads=self.heads,
            layers=self.layers,
            mlp_width=self.mlp_width,
            positions=self.positions,
            max_positions=max(self.lengths) + 1,
            mlp_group=self.mlp_group,
            embedding_group=self.embedding_group,
            scaling=self.scaling,
            previous_token=self.previous_token,
            initialisation=self.initialisation,
        )

    @property
    def lengths(self) -> tuple[int, ...]:
        """The test lengths (the default N0, 4 N0, 16 N0 when ``test_lengths`` is None)."""
        n0 = self.max_train_length
        return (n0, 4 * n0, 16 * n0) if self.test_lengths is None else tuple(self.test_lengths)


TRANSFORMER_TRAINING = TrainingConfig(
    steps=300,
    attention_lr=0.01,
    output_lr=0.01,
    warm_steps=75,
    big_step=0.1,
    batch_size=32,
    optimiser="adam",
    output_scale=0.5,
    attention_init="random",
    attention_scale=0.5,
)
"""An exploratory regime (not calibrated); Adam, one step size 0.01, every parameter drawn
N(0, 0.5^2) (weight matrices then enter divided by the square root of their fan-in); the attention
must start random (at 0, the value and output projections would both be 0, a saddle that no
gradient leaves)."""


@dataclass(frozen=True)
class TokenStream(StoredStream):
    """Training batches of several seeds: ``tokens`` (seeds, steps, batch, N0 + 1) with the
    classification token first, ``keep`` (same shape) True at real tokens, ``labels`` (seeds,
    steps, batch) +-1.

    Attributes
    ----------
    tokens : torch.Tensor
        int64 (seeds, steps, batch, N0 + 1).
    keep : torch.Tensor
        bool, the same shape.
    labels : torch.Tensor
        float64 (seeds, steps, batch), +-1.
    """

    tokens: torch.Tensor
    keep: torch.Tensor
    labels: torch.Tensor


def with_classification_token(words: NDArray[np.int64], lengths: NDArray[np.int64], alphabet_size: int) -> tuple:
    """Padded words (rows, width) -> (token ids (rows, width + 1) with id ``alphabet_size`` first and
    0 as padding, keep mask (rows, width + 1)) as torch tensors.

    Parameters
    ----------
    words : ndarray
        int64 (rows, width), padded words.
    lengths : ndarray
        int64 (rows,), their lengths.
    alphabet_size : int
        The number k of letters (the classification token's id).

    Returns
    -------
    tuple of torch.Tensor
        (tokens, keep).
    """
    rows, width = words.shape
    keep = np.arange(width + 1)[None, :] <= np.asarray(lengths)[:, None]
    tokens = np.concatenate([np.full((rows, 1), alphabet_size), words], axis=1)
    return torch.from_numpy(np.where(keep, tokens, 0).astype(np.int64)), torch.from_numpy(keep)


TRANSFORMER_METRICS = ("accuracy", "hard_accuracy", "recognised_at", "recognised", "test_loss", "zero_loss")
"""Every metric :meth:`TransformerLanguageRuns.evaluate` returns, the list the records store from
(:func:`lagtheory.experiments.exploratory.entries.cell_values`; the registered transformer study's
:func:`row_outcomes` stores each too): a metric added to ``evaluate`` and not here fails
``tests/test_stored_metrics.py``, naming it."""


class TransformerLanguageRuns:
    """The transformer of ``setting.shape`` on the language ``language`` (a name of
    :data:`~lagtheory.experiments.tasks.transformer.languages.TRANSFORMER_LANGUAGES`) under ``setting``,
    as an engine task (module docstring). Parameters and groups:
    :func:`~lagtheory.experiments.tasks.transformer.model.parameter_groups`.

    Parameters
    ----------
    language : str
        A name of :data:`~lagtheory.experiments.tasks.transformer.languages.TRANSFORMER_LANGUAGES`.
    setting : TransformerSetting
        The data, tests and architecture.

    Raises
    ------
    ValueError
        If ``language`` is unknown.
    TypeError
        If ``setting`` is not a :class:`TransformerSetting`.
    """

    def __init__(self, language: str, setting: TransformerSetting) -> None:
        if language not in TRANSFORMER_LANGUAGES:
            raise ValueError(f"language must be one of {tuple(TRANSFORMER_LANGUAGES)}, got {language!r}")
        if not isinstance(setting, TransformerSetting):
            raise TypeError(f"setting must be a TransformerSetting, got {type(setting).__name__}")
        self.name, self.dfa, self.setting = language, TRANSFORMER_LANGUAGES[language], setting
        self.shape = setting.shape(len(self.dfa.alphabet))
        self.model = SmallTransformer(self.shape)
        self.dtype = COMPUTE_DTYPES[setting.compute_dtype]
        self._tests: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]] | None = None

    def parameter_shapes(self) -> Mapping[str, tuple[tuple[int, ...], str]]:
        return parameter_groups(self.shape)

    def zero_at_start(self) -> tuple[str, ...]:
        """The parameters that start at 0 (:meth:`~lagtheory.experiments.tasks.transformer.model.SmallTransformer.zero_at_start`)."""
        return self.model.zero_at_start()

    def to(self, device: torch.device) -> None:
        """Move the model's own tensors (the sinusoidal position table) to ``device`` (the engine's).

        Parameters
        ----------
        device : torch.device
            The device.
        """
        self.model.to(device)

    def preset_attention(self) -> Mapping[str, torch.Tensor]:
        """No attention value is known to solve these languages for this model."""
        raise ValueError(f"the transformer task has no preset attention; use attention_init='random' ({self.name})")

    @fill_doc
    def training_stream(self, seeds: Sequence[int], steps: int, batch_size: int) -> TokenStream:
        """Each seed's uniforms from ``seed_rng(seed, 1)``, turned into labelled words (as the language study).

        Parameters
        ----------
        %(seeds)s
        steps : int
            The number of steps.
        batch_size : int
            Words per step and seed.

        Returns
        -------
        TokenStream
            The batches.
        """
        n0 = self.setting.max_train_length
        uniforms = np.concatenate([seed_rng(seed, 1).random((steps * batch_size, n0 + 2)) for seed in seeds])
        labels, lengths, words = labelled_words(self.dfa, n0, uniforms)
        tokens, keep = with_classification_token(words, lengths, len(self.dfa.alphabet))
        shape = (len(seeds), steps, batch_size)
        return TokenStream(
            tokens=tokens.reshape(*shape, n0 + 1),
            keep=keep.reshape(*shape, n0 + 1),
            labels=torch.from_numpy(labels.reshape(shape).astype(np.float64)),
        )

    @fill_doc
    def losses(self, params: Mapping[str, torch.Tensor], batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The mean logistic loss over the batch of each (row, seed) model.

        Parameters
        ----------
        %(params)s
        batch : tuple of torch.Tensor
            (tokens, keep, labels) of :meth:`~lagtheory.experiments.engine.cells.StoredStream.batch`.

        Returns
        -------
        torch.Tensor
            (rows, seeds).
        """
        tokens, keep, labels = batch
        return logistic_loss(labels * batched_outputs(self.model, params, tokens, keep, self.dtype)).mean(dim=-1)

    def observe(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, torch.Tensor]:
        """Nothing beyond the engine's displacements.

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            Name -> (rows, seeds, ...); not used.

        Returns
        -------
        dict
            Empty.
        """
        return {}

    def test_words(self) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]]:
        """Per test length: (tokens, keep, labels, number of random words; the hard words follow them)."""
        if self._tests is None:
            k = len(self.dfa.alphabet)
            self._tests = []
            for n in self.setting.lengths:
                rng = seed_rng(self.setting.test_seed, n)
                per_class = self.setting.test_per_class
                random = [sample_strings(self.dfa, n, label, per_class, rng) for label in (1, -1)]
                words = np.concatenate([*random, hard_words(self.dfa, n, self.setting.pairs_per_class, rng)])
                tokens, keep = with_classification_token(words, np.full(len(words), n), k)
                labels = torch.from_numpy(dfa_labels(self.dfa, words).astype(np.float64))
                self._tests.append((tokens, keep, labels, 2 * per_class))
        return self._tests

    @fill_doc
    def margins(self, params: Mapping[str, torch.Tensor]) -> list[torch.Tensor]:
        """Per test length, the margins y f of every (row, seed) model on every test word, (rows, seeds, words);
        one row and ``eval_chunk`` words at a time.

        Parameters
        ----------
        %(params)s

        Returns
        -------
        list of torch.Tensor
            One (rows, seeds, words) per test length.
        """
        rows = next(iter(params.values())).shape[0]
        chunk = self.setting.eval_chunk
        result = []
        for tokens, keep, labels, _ in self.test_words():
            per_row = []
            for row in range(rows):
                one = {name: value[row : row + 1] for name, value in params.items()}
                parts = [
                    batched_outputs(self.model, one, tokens[i : i + chunk], keep[i : i + chunk], self.dtype)[0]
                    for i in range(0, len(tokens), chunk)
                ]
                per_row.append(torch.cat(parts, dim=-1).to(torch.float64))
            result.append(torch.stack(per_row) * labels)
        return result

    def evaluate(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, NDArray]:
        """Per (row, seed): ``accuracy`` and ``hard_accuracy`` (..., test lengths) on the random and the hard
        words, ``recognised_at`` (..., test lengths) every test word of that length right, ``recognised`` at
        every test length above N0, ``test_loss`` the mean logistic loss on the random words above N0 and
        ``zero_loss`` that of the prediction 0 (log 2).

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            The trained parameters, name -> (rows, seeds, ...).

        Returns
        -------
        dict of str to ndarray
            The metrics above.
        """
        finite = torch.stack(
            [torch.isfinite(value.reshape(*value.shape[:2], -1)).all(dim=-1) for value in params.values()]
        ).all(dim=0)
        accuracy, hard, recognised, losses = [], [], [], []
        for margins, (_, _, _, random) in zip(self.margins(params), self.test_words(), strict=True):
            right = (margins > 0) & finite[..., None]
            accuracy.append(right[..., :random].to(torch.float64).mean(dim=-1))
            hard.append(right[..., random:].to(torch.float64).mean(dim=-1))
            recognised.append(right.all(dim=-1))
            losses.append(logistic_loss(margins[..., :random]).mean(dim=-1))
        above = np.array(self.setting.lengths) > self.setting.max_train_length
        recognised_at = torch.stack(recognised, dim=-1).numpy()
        lead = recognised_at.shape[:-1]
        return {
            "accuracy": torch.stack(accuracy, dim=-1).numpy(),
            "hard_accuracy": torch.stack(hard, dim=-1).numpy(),
            "recognised_at": recognised_at,
            "recognised": recognised_at[..., above].all(axis=-1),
            "test_loss": torch.stack(losses, dim=-1).numpy()[..., above].mean(axis=-1),
            "zero_loss": np.full(lead, float(np.log(2.0))),
        }


def row_outcomes(metrics: Mapping[str, NDArray], losses: NDArray[np.float64]) -> dict[str, NDArray]:
    """The per-seed outcomes of every row of a transformer cell, name -> (rows, seeds, ...), from the task's
    metrics (:meth:`TransformerLanguageRuns.evaluate`) and the engine's training losses (rows, seeds, steps):

    * ``failed``: the held-out loss (mean over the test lengths above N0, random words) is not finite or at
      or above that of the prediction 0, log 2 (the registered study's H1, as the confirmatory study's);
    * ``recognised``: every random and hard test word of every test length above N0 right (H2);
    * ``recognised_at``, ``accuracy``, ``hard_accuracy`` (rows, seeds, test lengths) and ``test_loss``, as
      the task gives them;
    * ``fit_loss``: the mean training loss of the last 10 steps (NaN for a run whose loss was ever not
      finite; every row must take the whole budget, equal total steps).

    Parameters
    ----------
    metrics : mapping of str to ndarray
        :meth:`TransformerLanguageRuns.evaluate`'s metrics.
    losses : ndarray
        float64 (rows, seeds, steps), the training loss before every step (NaN after a divergence).

    Returns
    -------
    dict of str to ndarray
        The outcomes above.
    """
    test = np.asarray(metrics["test_loss"], dtype=np.float64)
    finite = np.isfinite(test)
    losses = np.asarray(losses, dtype=np.float64)
    last = np.where(np.isfinite(losses).all(axis=-1), losses[..., -10:].mean(axis=-1), np.nan)
    return {
        "failed": ~finite | (np.where(finite, test, np.inf) >= np.asarray(metrics["zero_loss"])),
        "recognised": np.asarray(metrics["recognised"]),
        "recognised_at": np.asarray(metrics["recognised_at"]),
        "accuracy": np.asarray(metrics["accuracy"]),
        "hard_accuracy": np.asarray(metrics["hard_accuracy"]),
        "test_loss": test,
        "fit_loss": last,
    }
