"""The registered transformer section's text (``book/registration.md``, between its markers), written from the
frozen design by :func:`registered_text`, so that the page states exactly what the design file holds
(``tests/test_transformer_study.py`` compares the two). The text is registered: a change here that changes the
written section fails that test, and the registered section is never edited.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..parameters import fill_doc
from .transformer_design import GATE_SHARE, MAX_SEEDS, SEARCH_LIMIT


def _rate(rate: float) -> str:
    return f"{rate:g}"


@fill_doc
def registered_text(design: Mapping[str, Any], design_sha256: str) -> str:
    """The registered transformer section's text (between its markers on ``book/registration.md``), written
    from the design, so that the page states exactly what the frozen file holds (a test compares the two).

    Parameters
    ----------
    %(design)s
    design_sha256 : str
        The design file's SHA-256.

    Returns
    -------
    str
        Markdown, ending in a newline.
    """
    setting = design["setting"]
    pilot = design["pilot"]["seeds"]
    compared, control = design["compared"], design["control"]
    failing = [language for language in design["languages"] if language not in compared and language != control]
    seeds = design["seeds"]
    plan = design["plan"]
    m = len(compared)
    gate_rows = "\n".join(
        f"| {language} | {design['gate'][language]['share']:.4g} | "
        + ("compared" if language in compared else "control" if language == control else "fails the gate")
        + " |"
        for language in design["languages"]
    )
    choice_rows = "\n".join(
        f"| {language} | {_rate(c['shared_rate'])} | {_rate(c['joint']['rate'])} | {_rate(c['lag']['rate'])}, "
        f"{c['lag']['warm_fraction']:g} |"
        for language, c in ((language, design["choices"][language]) for language in compared)
    )
    power_rows = "\n".join(
        f"| {variant} | {outcome} | {plan['effects'][variant][outcome]['p10']:.4g} | "
        f"{plan['effects'][variant][outcome]['p01']:.4g} | {plan['effects'][variant][outcome]['needed'] or f'> {SEARCH_LIMIT}'} | "
        f"{plan['power'][variant][outcome]:.4g} | {plan['equivalence_power'][variant][outcome]:.4g} |"
        for variant in design["variants"]
        for outcome in design["outcomes"]
    )
    return f"""
## Registered section: the standard transformer study

### Scope and status

Registered before any of its runs; no run has used its seeds. It was written from the exploratory pilot of
issue 32 (`lagtheory.experiments.exploratory.transformer_pilot`, seeds {pilot[0]}..{pilot[-1]}, records in
`book/data/transformer_pilot/`). Its design is the file `book/data/transformer_design.json`, derived from the
pilot's tuning record by `lagtheory.experiments.confirmatory.transformer.derive_design` with the rules below;
design file SHA-256: `{design_sha256}`. The runs and the analysis read the design from that file only, and
refuse a file with another hash.

### Model and data

The standard small transformer of `lagtheory.experiments.tasks.transformer`: {setting["layers"]} pre-norm
block, width {setting["width"]}, {setting["heads"]} heads, MLP width {setting["mlp_width"]}; attention scores
multiplied by the log of the number of tokens (the book's length scaling); positions defined at every length
(the classification token and the first letter each a learned vector, every later position one shared
learned vector); the standard initialisation (weight matrices LeCun-normal, embeddings N(0, 1), biases 0);
{setting["compute_dtype"]} arithmetic. Training words have lengths 1..{setting["max_train_length"]} (label +1
or -1 with probability 1/2, the word uniform in its class); Adam, T = {design["training"]["steps"]} steps,
batches of {design["training"]["batch_size"]}, equal total steps. Test words at lengths
{setting["max_train_length"]}, {4 * setting["max_train_length"]} and {16 * setting["max_train_length"]}:
{setting["test_per_class"]} random words of each class and the hard words ({setting["pairs_per_class"]} minimal
pairs started from each class, and the long runs), drawn from test seed {setting["test_seed"]}, which no
earlier run used.

### Hypotheses

Each compares lag (the output group alone for the warm-up, then both groups) with joint training, paired by
seed, two-sided.

- **H1, failure.** A run *fails* when its held-out loss (the mean of the logistic loss on the random test
  words at {4 * setting["max_train_length"]} and {16 * setting["max_train_length"]}) is not finite or is at or
  above log 2, the loss of the prediction 0.
- **H2, recognition at 4 and 16 times the training length.** A run *recognises* the language when it
  classifies every random and hard test word at {4 * setting["max_train_length"]} and at
  {16 * setting["max_train_length"]} right (a sampled check: no exact verifier exists for this model).
- **H4, step-size window.** A rate of the grid is in a schedule's window when at least
  {design["window_share"]:.0%} of the seeds do not fail there; lag's window is wider than joint's.

The outcomes are reported apart, each with its own verdicts, never combined.

### Languages and the fit gate

A language enters the comparison when some configuration of the pilot's tuning grid (a schedule at a rate
and warm-up) recognises it at the training length {setting["max_train_length"]} (every random and hard test
word of that length right) in at least {GATE_SHARE:.0%} of the pilot's seeds. PARITY is the control: run at
every rate, never compared. The pilot gave (share of seeds at the best row):

| language | share recognising at {setting["max_train_length"]} | status |
|---|---|---|
{gate_rows}

So {m} languages are compared ({", ".join(compared)}); {", ".join(failing)} fail the gate and are reported
with what the pilot's diagnostics found, not compared.

### Runs, tuning, seeds

- **Grid**: Adam at the base rates {", ".join(_rate(r) for r in design["rates"])} (half a decade apart, the
  same step size for both groups), joint and lag (warm-up T/4), for every compared language and the control.
- **Shared rate**: both schedules at the rate whose mean criterion over joint and lag (T/4) was lowest in the
  pilot; **best-vs-best**: joint at its best rate, lag at its best rate and warm-up fraction (1/8, 1/4, 1/2).
  The criterion is the mean over the pilot's seeds of the capped log10 held-out loss on the validation set
  (test seed plus 500); ties go to the smaller rate, then the shorter warm-up. Lag at its best configuration
  is run besides the grid where the grid does not hold it.

| language | shared rate | joint's best rate | lag's best rate, warm-up |
|---|---|---|---|
{choice_rows}

- **Seeds**: {len(seeds)} paired seeds per language, **{seeds[0]}..{seeds[-1]}**, never used by any run.

### Tests, families, verdicts

- **H1 and H2**, per language and variant (shared rate; best-vs-best): exact McNemar test on the paired
  indicators (two-sided); equivalence: exact one-sided binomial test that the discordance rate is below
  {design["margin"]:g}. Family-wise error {design["alpha"]:g} within each family, Holm's step-down
  adjustment; a family is one outcome and one variant over the {m} compared languages (4 families).
- **H4**, per language: the widths of the two windows (half a decade per rate), the ratio lag / joint, and
  its percentile bootstrap intervals (100,000 resamples of the seeds, each keeping all its rates and both
  schedules, `numpy.random.default_rng(0)`) at 95% and at Bonferroni's level 1 - {design["alpha"]:g}/{m}; the
  functions of the confirmatory study (`lagtheory.experiments.confirmatory.analysis`).
- **Verdicts** as the confirmatory study's: *helps* (adjusted p < {design["alpha"]:g} in lag's favour; for H4
  the Bonferroni interval above 1), *hurts* (in joint's favour), *equivalent* (H1 and H2 only: no difference
  shown and the adjusted equivalence p < {design["alpha"]:g}), *undetermined* otherwise, printed with the
  power the design had. Per language and outcome the two variants are reported side by side.

### Power and seeds

Planning effects: the discordant shares in the pilot at each variant's configurations, pooled over the
compared languages (p10: pairs in lag's favour, p01: in joint's); McNemar's exact power at Bonferroni's level
{design["alpha"]:g}/{m} (`lagtheory.experiments.statistics.power.mcnemar_power`); target 80%; at most
{MAX_SEEDS} seeds per language (the study's compute). The last column is the power of the equivalence test
(discordance below {design["margin"]:g}) at the same level when the true discordance is p10 + p01.

| variant | outcome | p10 | p01 | seeds for 80% | power at {len(seeds)} seeds | equivalence power |
|---|---|---|---|---|---|---|
{power_rows}

For H4, at {len(seeds)} seeds a rate whose true success probability is 0.97 is counted inside the window with
probability {plan["window"]["0.97"]:.4g}, one at 0.95 with {plan["window"]["0.95"]:.4g}, and one at 0.8 is left
out with probability {plan["window"]["0.8"]:.4g}. The pilot's seeds were few and its configurations were
chosen on them, so these effects are uncertain; the achieved power is stated with every verdict.

### What is reported

Per language, outcome and variant: both rates, the discordant pairs, the adjusted p-values and the verdict,
with the design's power; the windows and their ratio; recognition at each test length; the control's
recognising runs. The chapter on the transformer states its answer first, per language and outcome. Runs
that crash are rerun with the same seed; anything else that departs from this section is logged under
Deviations, dated, before the affected analysis is run.
"""
