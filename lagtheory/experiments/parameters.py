"""Parameter documentation shared by the experiments' functions, written once (SciPy's docfiller pattern).

A numpydoc entry that three or more modules share (the same parameter, type and meaning) is written here once,
in :data:`PARAMETERS`, keyed by the parameter's name, and a docstring names it by a line ``%(key)s`` in its
``Parameters`` or ``Attributes`` section; :func:`fill_doc`, applied to the function or class, puts the entry in
place when the module is imported, so the API page, ``help()`` and the docstring tests read it whole. An entry
that fewer modules use is written out where it is used. One key is not its parameter's name: ``design`` means
the registered transformer design in seven modules and a :class:`~lagtheory.experiments.exploratory.design.TaskDesign`
in three, one word with two meanings, so the second is ``task_design`` (``tests/test_docstrings.py`` holds
these rules).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

Documented = TypeVar("Documented", bound=Callable[..., Any])

PARAMETERS: Mapping[str, tuple[str, str]] = {
    "cell": (
        "cell : str",
        "A cell of the record.",
    ),
    "design": (
        "design : mapping",
        "The registered transformer design (:func:`~lagtheory.experiments.confirmatory.transformer_design.load_design`).",
    ),
    "grid": (
        "grid : mapping",
        "The grid stage's record.",
    ),
    "language": (
        "language : str",
        "A compared language.",
    ),
    "optimiser": (
        'optimiser : {"sgd", "adam"}',
        "The optimiser.",
    ),
    "page": (
        "page : pathlib.Path, optional",
        "The registration page (default :data:`~lagtheory.experiments.paths.REGISTRATION_PAGE`).",
    ),
    "params": (
        "params : mapping of str to torch.Tensor",
        "Name -> (rows, seeds, ...).",
    ),
    "progress": (
        "progress : callable, optional",
        "Called with 1 after every step.",
    ),
    "record": (
        "record : mapping",
        "A study record (:mod:`lagtheory.experiments.exploratory.records`).",
    ),
    "records": (
        "records : mapping of str to mapping",
        "Study name -> exploratory record (:func:`~lagtheory.experiments.exploratory.records.load_exploratory`).",
    ),
    "seeds": (
        "seeds : sequence of int",
        "The seeds.",
    ),
    "task_design": (
        "design : TaskDesign",
        "The task.",
    ),
}
"""Key -> (the entry's first line, ``name : type``; its description), in the book's numpydoc form.

:meta hide-value:
"""

PLACEHOLDER = re.compile(r"^(?P<indent>[ ]*)%\((?P<key>\w+)\)s[ ]*$", re.MULTILINE)
"""A line that is only ``%(key)s`` (its indentation kept).

:meta hide-value:
"""


def entry(key: str, indent: str = "") -> str:
    """The numpydoc entry ``key`` of :data:`PARAMETERS`: its first line at ``indent``, its description four
    spaces deeper.

    Parameters
    ----------
    key : str
        A key of :data:`PARAMETERS`.
    indent : str, optional
        The indentation of the entry's first line (default none).

    Returns
    -------
    str
        The entry, two lines.

    Raises
    ------
    KeyError
        If ``key`` is not a key of :data:`PARAMETERS`.

    Examples
    --------
    >>> print(entry("seeds", "    "))
        seeds : sequence of int
            The seeds.
    """
    header, description = PARAMETERS[key]
    return f"{indent}{header}\n{indent}    {description}"


def fill_doc(documented: Documented) -> Documented:
    """Put the shared entries of :data:`PARAMETERS` in place of the ``%(key)s`` lines of a function's or
    class's docstring.

    Parameters
    ----------
    documented : callable
        A function or class whose docstring names shared entries.

    Returns
    -------
    callable
        ``documented`` itself, its ``__doc__`` filled.

    Raises
    ------
    KeyError
        If a ``%(key)s`` line names no entry of :data:`PARAMETERS` (at import: a misspelt key fails at once).
    ValueError
        If the docstring names no shared entry (the decorator would do nothing).
    """
    text = documented.__doc__ or ""
    if not PLACEHOLDER.search(text):
        raise ValueError(f"{documented.__qualname__}'s docstring names no shared entry: drop @fill_doc")
    documented.__doc__ = PLACEHOLDER.sub(lambda match: entry(match["key"], match["indent"]), text)
    return documented
