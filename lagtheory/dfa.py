"""Deterministic finite automata, the machines behind the book's languages (:prf:ref:`def-language`).

A DFA is A = (Q, Sigma, delta, q0, F) with a *total* transition function
delta: Q x Sigma -> Q. Its extended transition function is
delta*(q, epsilon) = q and delta*(q, w c) = delta(delta*(q, w), c), and it
recognises the language L(A) = {w in Sigma* : delta*(q0, w) in F}.

This module holds the DFA type, membership, language equivalence (a product
search) and minimisation (Moore partition refinement after removing
unreachable states). Star-freeness lives in :mod:`lagtheory.star_free`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

State = Hashable
Symbol = Hashable
Word = str | Sequence[Symbol]


def _distinct_tuple(values: Iterable[Hashable], name: str) -> tuple[Hashable, ...]:
    """Return ``values`` as a tuple, requiring it to be non-empty, hashable and without repeats."""
    if isinstance(values, Mapping) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be an iterable of hashable items, got {type(values).__name__}")
    items = tuple(values)
    if not items:
        raise ValueError(f"{name} must be non-empty, got an empty collection")
    try:
        repeated = [item for index, item in enumerate(items) if item in items[:index]]
        set(items)
    except TypeError as error:
        raise TypeError(f"{name} must contain hashable items: {error}") from None
    if repeated:
        raise ValueError(f"{name} must not repeat items, got {repeated[0]!r} more than once")
    return items


@dataclass(frozen=True, kw_only=True, repr=False)
class DFA:
    """A complete deterministic finite automaton (Q, Sigma, delta, q0, F).

    Parameters
    ----------
    states : iterable of hashable
        The finite, non-empty state set Q, in the order used for display and
        for numbering states in transformations. Keyword only, as are the others.
    alphabet : iterable of hashable or str
        The finite, non-empty alphabet Sigma, in the order used for
        breadth-first searches (so shortest words are found in
        length-lexicographic order). A str such as ``"ab"`` is read one
        character per symbol.
    transitions : mapping
        ``(state, symbol) -> state``, defining delta on every pair of
        ``states x alphabet``.
    start : hashable
        The start state q0 (an element of ``states``).
    accepting : iterable of hashable
        The accepting set F (a subset of ``states``, may be empty).

    Raises
    ------
    ValueError
        Invalid data, naming the argument.
    TypeError
        Wrong types, naming the argument.

    Notes
    -----
    Invalid data raise ValueError naming the argument (TypeError for wrong
    types). The object is immutable: ``transitions`` is stored as a
    read-only mapping and ``accepting`` as a frozenset. Equality is
    structural (same tables); language equality is :meth:`equivalent`.
    """

    states: tuple[State, ...]
    alphabet: tuple[Symbol, ...]
    transitions: Mapping[tuple[State, Symbol], State]
    start: State
    accepting: frozenset[State]

    def __post_init__(self) -> None:
        states = _distinct_tuple(self.states, "states")
        alphabet = _distinct_tuple(self.alphabet, "alphabet")
        if not isinstance(self.transitions, Mapping):
            raise TypeError(
                f"transitions must be a mapping (state, symbol) -> state, got {type(self.transitions).__name__}"
            )
        state_set, symbol_set = set(states), set(alphabet)
        for key in self.transitions:
            if not (isinstance(key, tuple) and len(key) == 2 and key[0] in state_set and key[1] in symbol_set):
                raise ValueError(
                    f"transitions has key {key!r}, which is not a (state, symbol) pair of "
                    f"states {states!r} x alphabet {alphabet!r}"
                )
        table: dict[tuple[State, Symbol], State] = {}
        for state in states:
            for symbol in alphabet:
                if (state, symbol) not in self.transitions:
                    raise ValueError(
                        f"transitions is missing the pair {(state, symbol)!r}; it must define a target "
                        f"for every pair of states x alphabet"
                    )
                target = self.transitions[(state, symbol)]
                if target not in state_set:
                    raise ValueError(
                        f"transitions maps {(state, symbol)!r} to {target!r}, which is not in states {states!r}"
                    )
                table[(state, symbol)] = target
        try:
            start_known = self.start in state_set
        except TypeError:
            raise TypeError(f"start must be hashable, got {type(self.start).__name__}") from None
        if not start_known:
            raise ValueError(f"start {self.start!r} is not in states {states!r}")
        if isinstance(self.accepting, Mapping) or not isinstance(self.accepting, Iterable):
            raise TypeError(f"accepting must be an iterable of states, got {type(self.accepting).__name__}")
        accepting = frozenset(self.accepting)
        outside = [state for state in accepting if state not in state_set]
        if outside:
            raise ValueError(f"accepting must be a subset of states {states!r}; {outside[0]!r} is not a state")
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "alphabet", alphabet)
        object.__setattr__(self, "transitions", MappingProxyType(table))
        object.__setattr__(self, "accepting", accepting)

    def __hash__(self) -> int:
        return hash((self.states, self.alphabet, tuple(self.transitions.items()), self.start, self.accepting))

    def __repr__(self) -> str:
        # accepting is listed in state order, so the text does not depend on set iteration order.
        accepting = ", ".join(repr(state) for state in self.states if state in self.accepting)
        table = ", ".join(f"{key!r}: {target!r}" for key, target in self.transitions.items())
        return (
            f"DFA(states={self.states!r}, alphabet={self.alphabet!r}, transitions={{{table}}}, "
            f"start={self.start!r}, accepting=frozenset({{{accepting}}}))"
        )

    def _symbols(self, word: Word) -> tuple[Symbol, ...]:
        """Validate ``word`` and return its symbols (a str is read one character per symbol)."""
        if not isinstance(word, str | Sequence):
            raise TypeError(f"word must be a str or a sequence of symbols, got {type(word).__name__}")
        symbols = tuple(word)
        symbol_set = set(self.alphabet)
        for position, symbol in enumerate(symbols):
            try:
                known = symbol in symbol_set
            except TypeError:
                known = False
            if not known:
                raise ValueError(
                    f"word has symbol {symbol!r} at position {position}, which is not in the alphabet {self.alphabet!r}"
                )
        return symbols

    def run(self, word: Word) -> State:
        """Return delta*(q0, word), the state reached after reading ``word``.

        Parameters
        ----------
        word : str or sequence of symbols
            Symbols of the alphabet (a str is read one character per symbol); the
            empty word gives q0.

        Returns
        -------
        state
            The state reached.
        """
        state = self.start
        for symbol in self._symbols(word):
            state = self.transitions[(state, symbol)]
        return state

    def accepts(self, word: Word) -> bool:
        """Return whether ``word`` is in L(A), i.e. delta*(q0, word) is accepting.

        Parameters
        ----------
        word : str or sequence of symbols
            Symbols of the alphabet (a str is read one character per symbol).

        Returns
        -------
        bool
            Whether the DFA accepts ``word``.

        Examples
        --------
        >>> from lagtheory.languages import CONTAINS_B
        >>> CONTAINS_B.accepts("aab"), CONTAINS_B.accepts("aaa"), CONTAINS_B.accepts("")
        (True, False, False)
        """
        return self.run(word) in self.accepting

    def reachable_states(self) -> tuple[State, ...]:
        """Return the states delta*(q0, w) over all words w, in breadth-first order from q0."""
        order = [self.start]
        seen = {self.start}
        queue = deque(order)
        while queue:
            state = queue.popleft()
            for symbol in self.alphabet:
                target = self.transitions[(state, symbol)]
                if target not in seen:
                    seen.add(target)
                    order.append(target)
                    queue.append(target)
        return tuple(order)

    def minimise(self) -> DFA:
        r"""Return the minimal DFA recognising L(A) (the Myhill-Nerode quotient of the reachable part).

        Unreachable states are dropped, then Moore's refinement splits the
        partition {F, Q \ F} by the blocks of each state's successors until it
        is stable; the stable blocks are the Myhill-Nerode classes. Each block
        is named by its first state in breadth-first order, and the states of
        the result are listed in breadth-first order from the start state, so
        a minimal DFA whose states are already in that order is returned
        unchanged (equal as a value).
        """
        reachable = self.reachable_states()
        block = {state: int(state not in self.accepting) for state in reachable}
        block_count = len(set(block.values()))
        while True:
            signatures = {
                state: (block[state], tuple(block[self.transitions[(state, symbol)]] for symbol in self.alphabet))
                for state in reachable
            }
            numbering: dict[tuple[int, tuple[int, ...]], int] = {}
            for state in reachable:
                numbering.setdefault(signatures[state], len(numbering))
            block = {state: numbering[signatures[state]] for state in reachable}
            if len(numbering) == block_count:
                break
            block_count = len(numbering)
        representative: dict[int, State] = {}
        for state in reachable:
            representative.setdefault(block[state], state)
        names = {state: representative[block[state]] for state in reachable}
        transitions = {
            (names[state], symbol): names[self.transitions[(state, symbol)]]
            for state in representative.values()
            for symbol in self.alphabet
        }
        quotient = DFA(
            states=tuple(representative.values()),
            alphabet=self.alphabet,
            transitions=transitions,
            start=names[self.start],
            accepting={names[state] for state in reachable if state in self.accepting},
        )
        return DFA(
            states=quotient.reachable_states(),
            alphabet=quotient.alphabet,
            transitions=quotient.transitions,
            start=quotient.start,
            accepting=quotient.accepting,
        )

    def equivalent(self, other: DFA) -> bool:
        """Return whether L(self) = L(other), by a breadth-first search of the product automaton.

        The languages differ iff some reachable pair of states
        ``(delta*(q0, w), delta'*(q0', w))`` disagrees on acceptance.

        Parameters
        ----------
        other : DFA
            An automaton over the same set of symbols (ValueError naming ``other`` otherwise).

        Returns
        -------
        bool
            Whether the two automata recognise the same language.

        Examples
        --------
        >>> from lagtheory.languages import CONTAINS_B, PARITY
        >>> CONTAINS_B.equivalent(CONTAINS_B.minimise()), CONTAINS_B.equivalent(PARITY)
        (True, False)
        """
        if not isinstance(other, DFA):
            raise TypeError(f"other must be a DFA, got {type(other).__name__}")
        if set(other.alphabet) != set(self.alphabet):
            raise ValueError(f"other has alphabet {other.alphabet!r}; expected the symbols of {self.alphabet!r}")
        first = (self.start, other.start)
        seen = {first}
        queue = deque([first])
        while queue:
            mine, theirs = queue.popleft()
            if (mine in self.accepting) != (theirs in other.accepting):
                return False
            for symbol in self.alphabet:
                pair = (self.transitions[(mine, symbol)], other.transitions[(theirs, symbol)])
                if pair not in seen:
                    seen.add(pair)
                    queue.append(pair)
        return True
