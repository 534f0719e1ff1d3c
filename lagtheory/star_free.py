"""Star-freeness certificates by Schutzenberger's theorem (:prf:ref:`def-language`).

Schutzenberger (1965): a regular language L is star-free (built from finite
sets by Boolean operations and concatenation, without Kleene star) iff its
syntactic monoid M(L) is aperiodic, i.e. there is k >= 0 with x^k = x^(k+1)
for every x in M(L). The syntactic monoid is the transition monoid of the
minimal DFA: the set of maps q -> delta*(q, w) over all words w, under
composition, with the empty word giving the identity.

An element x generates the sequence x^0 = 1, x^1, x^2, ..., which is
eventually periodic: there are a least m >= 0 and a least p >= 1 with
x^(m+p) = x^m. Then x^k = x^(k+1) for some k iff p = 1 (and the least such
k is m). So M(L) is aperiodic iff every element has period 1, and its
aperiodicity index is the largest m; an element with p >= 2 is a witness
that L is not star-free (it contains the cyclic group of order p).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from lagtheory.dfa import DFA, State, Symbol

Transformation = tuple[int, ...]
DEFAULT_MAX_MONOID_SIZE = 100_000


@dataclass(frozen=True)
class TransitionMonoid:
    """The transition monoid of a DFA: maps q -> delta*(q, w) on the DFA's states.

    Attributes
    ----------
    states : tuple
        The DFA's states; a transformation x maps ``states[i]`` to ``states[x[i]]``.
    elements : tuple of tuple of int
        The distinct transformations, in breadth-first order of their shortest
        words; ``elements[0]`` is the identity.
    words : tuple of tuple
        For each element, its shortest word (length-lexicographic in alphabet order).
    """

    states: tuple[State, ...]
    elements: tuple[Transformation, ...]
    words: tuple[tuple[Symbol, ...], ...]


def _checked_limit(max_monoid_size: int) -> int:
    if isinstance(max_monoid_size, bool) or not isinstance(max_monoid_size, int):
        raise TypeError(f"max_monoid_size must be an int, got {type(max_monoid_size).__name__}")
    if max_monoid_size < 1:
        raise ValueError(f"max_monoid_size must be >= 1, got {max_monoid_size}")
    return max_monoid_size


def transition_monoid(dfa: DFA, *, max_monoid_size: int = DEFAULT_MAX_MONOID_SIZE) -> TransitionMonoid:
    """Return the transition monoid of ``dfa`` by breadth-first search over transformations.

    Starting from the identity (the empty word), each element x (the map of
    a word w) is extended by every letter c to the map of w c, namely
    ``q -> delta(x(q), c)``.

    Parameters
    ----------
    dfa : DFA
        The automaton.
    max_monoid_size : int, optional
        The most elements the search may find (a transition monoid on n states
        can have up to n^n elements). Keyword only.

    Returns
    -------
    TransitionMonoid
        The elements, each with its shortest word.

    Raises
    ------
    ValueError
        Naming ``max_monoid_size``, if the monoid has more elements than that limit.
    """
    if not isinstance(dfa, DFA):
        raise TypeError(f"dfa must be a DFA, got {type(dfa).__name__}")
    limit = _checked_limit(max_monoid_size)
    index = {state: position for position, state in enumerate(dfa.states)}
    letters = {
        symbol: tuple(index[dfa.transitions[(state, symbol)]] for state in dfa.states) for symbol in dfa.alphabet
    }
    identity = tuple(range(len(dfa.states)))
    words: dict[Transformation, tuple[Symbol, ...]] = {identity: ()}
    queue = deque([identity])
    while queue:
        element = queue.popleft()
        for symbol, letter in letters.items():
            extended = tuple(letter[image] for image in element)
            if extended not in words:
                if len(words) == limit:
                    raise ValueError(
                        f"the transition monoid has more than max_monoid_size={limit} elements; "
                        f"raise max_monoid_size to compute it"
                    )
                words[extended] = words[element] + (symbol,)
                queue.append(extended)
    return TransitionMonoid(states=dfa.states, elements=tuple(words), words=tuple(words.values()))


def _index_and_period(element: Transformation) -> tuple[int, int]:
    """Return the least m >= 0 and least p >= 1 with x^(m+p) = x^m for the transformation x."""
    power = tuple(range(len(element)))
    exponent_of = {power: 0}
    exponent = 0
    while True:
        power = tuple(element[image] for image in power)
        exponent += 1
        if power in exponent_of:
            return exponent_of[power], exponent - exponent_of[power]
        exponent_of[power] = exponent


def _format_word(word: tuple[Symbol, ...]) -> str:
    if all(isinstance(symbol, str) and len(symbol) == 1 for symbol in word):
        return repr("".join(word))
    return repr(word)


@dataclass(frozen=True)
class StarFreeCertificate:
    """The verdict of Schutzenberger's test on a regular language, with its evidence.

    Attributes
    ----------
    star_free : bool
        Whether the syntactic monoid is aperiodic (``bool(cert)`` is this value).
    monoid_size : int
        The number of elements of the syntactic monoid (identity included).
    aperiodicity_index : int or None
        When star-free, the least k >= 0 with ``x^k = x^(k+1)`` for every
        element x (0 only for the trivial monoid, i.e. for the empty language
        and Sigma*); otherwise None.
    witness : tuple or None
        When not star-free, the shortest word (length-lexicographic) whose map
        x satisfies ``x^k != x^(k+1)`` for every k; otherwise None.
    period : int or None
        When not star-free, the period p >= 2 of the witness, the least p >= 1
        with ``x^(m+p) = x^m`` for some m; otherwise None.
    """

    star_free: bool
    monoid_size: int
    aperiodicity_index: int | None = None
    witness: tuple[Symbol, ...] | None = None
    period: int | None = None

    def __post_init__(self) -> None:
        if self.monoid_size < 1:
            raise ValueError(f"monoid_size must be >= 1, got {self.monoid_size}")
        if self.star_free:
            if self.aperiodicity_index is None or self.witness is not None or self.period is not None:
                raise ValueError("a star-free certificate needs aperiodicity_index and no witness or period")
        elif self.aperiodicity_index is not None or self.witness is None or self.period is None or self.period < 2:
            raise ValueError("a certificate of non-star-freeness needs a witness and a period >= 2")

    def __bool__(self) -> bool:
        return self.star_free

    def __str__(self) -> str:
        if self.star_free:
            k = self.aperiodicity_index
            return (
                f"star-free: the syntactic monoid has {self.monoid_size} elements and is aperiodic, "
                f"x^{k} = x^{k + 1} for every element x (Schutzenberger)"
            )
        return (
            f"not star-free: the syntactic monoid has {self.monoid_size} elements; the word "
            f"{_format_word(self.witness)} acts with period {self.period}, so x^k != x^(k+1) "
            f"for every k (Schutzenberger)"
        )


def is_star_free(dfa: DFA, *, max_monoid_size: int = DEFAULT_MAX_MONOID_SIZE) -> StarFreeCertificate:
    """Decide whether L(dfa) is star-free, by Schutzenberger's theorem, and return the certificate.

    The DFA is minimised first, so the monoid examined is the syntactic
    monoid of the language (a non-minimal DFA of a star-free language may
    contain a counter, e.g. two equivalent states swapped by a letter).

    Parameters
    ----------
    dfa : DFA
        The automaton of the language.
    max_monoid_size : int, optional
        The most elements the syntactic monoid may have. Keyword only.

    Returns
    -------
    StarFreeCertificate
        The verdict, true when the syntactic monoid is aperiodic, with its evidence.

    Raises
    ------
    ValueError
        Naming ``max_monoid_size``, if the syntactic monoid is larger than that limit.

    Examples
    --------
    Sigma* b Sigma* is star-free (its syntactic monoid is {1, 0}); parity is not, and the
    letter b witnesses the group Z2:

    >>> from lagtheory.languages import CONTAINS_B, PARITY
    >>> is_star_free(CONTAINS_B)
    StarFreeCertificate(star_free=True, monoid_size=2, aperiodicity_index=1, witness=None, period=None)
    >>> certificate = is_star_free(PARITY)
    >>> bool(certificate), certificate.witness, certificate.period
    (False, ('b',), 2)
    """
    if not isinstance(dfa, DFA):
        raise TypeError(f"dfa must be a DFA, got {type(dfa).__name__}")
    monoid = transition_monoid(dfa.minimise(), max_monoid_size=max_monoid_size)
    index = 0
    for element, word in zip(monoid.elements, monoid.words, strict=False):
        start, period = _index_and_period(element)
        if period > 1:
            return StarFreeCertificate(star_free=False, monoid_size=len(monoid.elements), witness=word, period=period)
        index = max(index, start)
    return StarFreeCertificate(star_free=True, monoid_size=len(monoid.elements), aperiodicity_index=index)
