"""Tests of lagtheory.languages, lagtheory.dfa and lagtheory.star_free.

Expected values are derived independently of the code under test: language
membership from regular expressions or explicit predicates on all strings up
to length 8; minimal sizes, syntactic monoids and aperiodicity indices by
hand (derivations in the comments) and, where possible, by brute force from
the predicates (Myhill-Nerode and syntactic-congruence classes) or from the
raw transition tables (cycles of the maps q -> delta*(q, w)).
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagtheory.dfa import DFA
from lagtheory.languages import (
    A_STAR_B_STAR,
    AA_STAR,
    AB_STAR,
    CONTAINS_AB,
    CONTAINS_B,
    EVEN_PAIRS,
    EXPERIMENT_LANGUAGES,
    FIRST,
    LANGUAGES,
    PARITY,
    label,
)
from lagtheory.star_free import StarFreeCertificate, is_star_free, transition_monoid

MAX_LENGTH = 8
ALL_WORDS = ["".join(letters) for n in range(MAX_LENGTH + 1) for letters in itertools.product("ab", repeat=n)]


def _count_pairs(word: str) -> int:
    return sum(word[i : i + 2] in ("ab", "ba") for i in range(len(word) - 1))


# Independent definitions of the eight languages.
PREDICATES: dict[str, Callable[[str], bool]] = {
    "CONTAINS_B": lambda w: re.fullmatch(r"[ab]*b[ab]*", w) is not None,
    "FIRST": lambda w: re.fullmatch(r"b[ab]*", w) is not None,
    "EVEN_PAIRS": lambda w: _count_pairs(w) % 2 == 0,
    "AB_STAR": lambda w: re.fullmatch(r"(ab)*", w) is not None,
    "A_STAR_B_STAR": lambda w: re.fullmatch(r"a*b*", w) is not None,
    "CONTAINS_AB": lambda w: re.fullmatch(r"[ab]*ab[ab]*", w) is not None,
    "PARITY": lambda w: w.count("b") % 2 == 0,
    "AA_STAR": lambda w: re.fullmatch(r"(aa)*", w) is not None,
}

# Minimal DFA sizes, by hand (Myhill-Nerode classes of the language over {a, b}):
#   CONTAINS_B: "no b yet" / "seen b" -> 2.  PARITY: even / odd -> 2.
#   FIRST: empty, first a (reject sink), first b (accept sink) -> 3.
#   AB_STAR, AA_STAR, CONTAINS_AB, A_STAR_B_STAR: two live classes plus a sink
#   (AB_STAR: complete blocks / after a; AA_STAR: even / odd a's; CONTAINS_AB:
#   no progress / last symbol a, and the accepting sink; A_STAR_B_STAR: in a's /
#   in b's) -> 3.  EVEN_PAIRS: empty, and (first, last) in {a, b}^2 -> 5 (the
#   empty class is accepting but b sends it to an accepting class, while
#   (a, a) goes to a rejecting one on b).
MINIMAL_SIZES = {
    "CONTAINS_B": 2,
    "FIRST": 3,
    "EVEN_PAIRS": 5,
    "AB_STAR": 3,
    "A_STAR_B_STAR": 3,
    "CONTAINS_AB": 3,
    "PARITY": 2,
    "AA_STAR": 3,
}

# Syntactic monoids by hand. Write 1 for the identity (empty word) and 0 for a zero.
#   CONTAINS_B: a acts as the identity (it changes no state), b as the constant
#     map to "seen b"; so M = {1, b} with b^2 = b: size 2, x^1 = x^2 for all x, index 1.
#   PARITY: a = 1, b swaps even/odd; M = {1, b} = Z2: size 2, not aperiodic, witness b, period 2.
#   AA_STAR: a swaps even/odd and fixes the sink, b = 0 (the sink); a^2 = 1, ab = ba = 0:
#     M = {1, a, 0}: size 3, witness a of period 2.
#   FIRST: a and b are the maps "first symbol is a/b unless already decided"; aa = a,
#     ab = a, bb = b, ba = b: M = {1, a, b}, all idempotent: size 3, index 1.
#   EVEN_PAIRS: a non-empty word acts through its (first, last) symbols only, and the
#     four pairs act differently on the empty state: M = {1} + {a, b}^2, size 5; x^2 has
#     the same first and last symbols as x, so every element is idempotent: index 1.
#   AB_STAR: M = {1, a, b, ab, ba, 0} (aba = a, bab = b, aa = bb = 0): size 6 (the
#     Brandt monoid B2^1); a^2 = 0 != a and a^3 = 0: index 2.
#   A_STAR_B_STAR: M = {1, a, b, ab, 0} (aa = a, bb = b, ba = 0, aba = bab = 0): size 5;
#     (ab)^2 = abab = 0 != ab: index 2.
#   CONTAINS_AB: M = {1, a, b, ba, 0} with 0 = ab (aa = a, bb = b, aba = bab = 0,
#     baa = ba, bba = ba): size 5; (ba)^2 = baba contains ab, so (ba)^2 = 0 != ba: index 2.
MONOID_SIZES = {
    "CONTAINS_B": 2,
    "FIRST": 3,
    "EVEN_PAIRS": 5,
    "AB_STAR": 6,
    "A_STAR_B_STAR": 5,
    "CONTAINS_AB": 5,
    "PARITY": 2,
    "AA_STAR": 3,
}
APERIODICITY_INDICES = {
    "CONTAINS_B": 1,
    "FIRST": 1,
    "EVEN_PAIRS": 1,
    "AB_STAR": 2,
    "A_STAR_B_STAR": 2,
    "CONTAINS_AB": 2,
}
WITNESSES = {"PARITY": (("b",), 2), "AA_STAR": (("a",), 2)}


def test_registry_lists_the_eight_languages() -> None:
    assert set(LANGUAGES) == set(PREDICATES)
    assert LANGUAGES["CONTAINS_B"] is CONTAINS_B
    with pytest.raises(TypeError):
        LANGUAGES["NEW"] = CONTAINS_B  # type: ignore[index]


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_membership_matches_predicate_on_all_short_words(name: str) -> None:
    dfa, predicate = LANGUAGES[name], PREDICATES[name]
    for word in ALL_WORDS:
        assert dfa.accepts(word) == predicate(word), (name, word)


def test_documented_conventions_on_short_words() -> None:
    assert not FIRST.accepts("")
    assert EVEN_PAIRS.accepts("") and EVEN_PAIRS.accepts("a") and EVEN_PAIRS.accepts("b")
    # Number of ab/ba factors is even iff first symbol == last symbol.
    for word in ALL_WORDS[1:]:
        assert EVEN_PAIRS.accepts(word) == (word[0] == word[-1]), word
    assert PARITY.accepts("") and AA_STAR.accepts("") and AB_STAR.accepts("") and A_STAR_B_STAR.accepts("")
    assert not AA_STAR.accepts("aab") and AA_STAR.accepts("aaaa") and not AA_STAR.accepts("aaa")


def test_words_as_sequences_and_labels() -> None:
    assert CONTAINS_B.accepts(("a", "b")) and CONTAINS_B.accepts(["b"]) and not CONTAINS_B.accepts(())
    assert label(CONTAINS_B, "aab") == 1 and label(CONTAINS_B, "aaa") == -1 and label(CONTAINS_B, "") == -1
    assert label(PARITY, "bb") == 1 and label(PARITY, "ab") == -1
    assert CONTAINS_AB.run("ba") == "after_a"


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_minimise_preserves_language_and_has_hand_derived_size(name: str) -> None:
    dfa = LANGUAGES[name]
    minimal = dfa.minimise()
    assert len(minimal.states) == MINIMAL_SIZES[name]
    assert minimal.equivalent(dfa)
    for word in ALL_WORDS:
        assert minimal.accepts(word) == PREDICATES[name](word), (name, word)


def test_minimise_merges_redundant_and_drops_unreachable_states() -> None:
    # CONTAINS_B with "seen b" split into two states swapped by a, plus an unreachable state.
    redundant = DFA(
        states=(0, 1, 2, 3),
        alphabet="ab",
        transitions={
            (0, "a"): 0,
            (0, "b"): 1,
            (1, "a"): 2,
            (1, "b"): 1,
            (2, "a"): 1,
            (2, "b"): 2,
            (3, "a"): 0,
            (3, "b"): 3,
        },
        start=0,
        accepting={1, 2, 3},
    )
    minimal = redundant.minimise()
    assert minimal.states == (0, 1)
    assert minimal.accepting == frozenset({1})
    assert minimal.equivalent(CONTAINS_B)
    assert redundant.reachable_states() == (0, 1, 2)


def test_equivalent_detects_different_languages() -> None:
    assert not CONTAINS_B.equivalent(FIRST)
    assert not PARITY.equivalent(AA_STAR)
    assert CONTAINS_B.equivalent(CONTAINS_B.minimise())


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_star_free_certificate_matches_hand_derivation(name: str) -> None:
    certificate = is_star_free(LANGUAGES[name])
    assert certificate.monoid_size == MONOID_SIZES[name]
    if name in APERIODICITY_INDICES:
        assert certificate.star_free is True and bool(certificate)
        assert certificate.aperiodicity_index == APERIODICITY_INDICES[name]
        assert certificate.witness is None and certificate.period is None
    else:
        assert certificate.star_free is False and not bool(certificate)
        assert (certificate.witness, certificate.period) == WITNESSES[name]
        assert certificate.aperiodicity_index is None


def _syntactic_class_count(predicate: Callable[[str], bool], word_length: int, context_length: int) -> int:
    """Count syntactic-congruence classes among words up to word_length, testing contexts up to context_length."""
    contexts = [w for w in ALL_WORDS if len(w) <= context_length]
    profiles = {
        tuple(predicate(x + u + y) for x in contexts for y in contexts) for u in ALL_WORDS if len(u) <= word_length
    }
    return len(profiles)


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_monoid_size_equals_syntactic_congruence_count_from_predicate(name: str) -> None:
    # u ~ v iff x u y in L <=> x v y in L for all x, y. Every element here has a word of
    # length <= 2, and contexts of length <= 3 reach and separate every state of DFAs this small.
    assert _syntactic_class_count(PREDICATES[name], 4, 3) == MONOID_SIZES[name]


def test_counter_in_non_minimal_dfa_does_not_refute_star_freeness() -> None:
    # Sigma* by two accepting states swapped by b: the DFA has a counter, the language does not.
    swapped = DFA(
        states=("p", "q"),
        alphabet="ab",
        transitions={("p", "a"): "p", ("p", "b"): "q", ("q", "a"): "q", ("q", "b"): "p"},
        start="p",
        accepting={"p", "q"},
    )
    assert transition_monoid(swapped).elements == ((0, 1), (1, 0))
    certificate = is_star_free(swapped)
    assert certificate.star_free and certificate.monoid_size == 1 and certificate.aperiodicity_index == 0


def test_certificate_text_is_deterministic() -> None:
    assert repr(is_star_free(PARITY)) == (
        "StarFreeCertificate(star_free=False, monoid_size=2, aperiodicity_index=None, witness=('b',), period=2)"
    )
    assert str(is_star_free(PARITY)) == (
        "not star-free: the syntactic monoid has 2 elements; the word 'b' acts with period 2, "
        "so x^k != x^(k+1) for every k (Schutzenberger)"
    )
    assert str(is_star_free(CONTAINS_B)) == (
        "star-free: the syntactic monoid has 2 elements and is aperiodic, "
        "x^1 = x^2 for every element x (Schutzenberger)"
    )
    assert "0x" not in repr(CONTAINS_B)
    assert eval(repr(CONTAINS_B), {"DFA": DFA}) == CONTAINS_B


def test_objects_are_immutable_and_hashable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        CONTAINS_B.start = "seen_b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        CONTAINS_B.transitions[("no_b", "a")] = "seen_b"  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        is_star_free(PARITY).star_free = True  # type: ignore[misc]
    assert hash(CONTAINS_B) == hash(CONTAINS_B.minimise()) and CONTAINS_B.minimise() == CONTAINS_B


def _contains_b(**changes: object) -> dict[str, object]:
    arguments: dict[str, object] = {
        "states": ("no_b", "seen_b"),
        "alphabet": ("a", "b"),
        "transitions": {
            ("no_b", "a"): "no_b",
            ("no_b", "b"): "seen_b",
            ("seen_b", "a"): "seen_b",
            ("seen_b", "b"): "seen_b",
        },
        "start": "no_b",
        "accepting": {"seen_b"},
    }
    arguments.update(changes)
    return arguments


def test_bad_constructions_raise_value_error_naming_the_argument() -> None:
    assert DFA(**_contains_b()) == CONTAINS_B  # the baseline is valid
    incomplete = dict(_contains_b()["transitions"])  # type: ignore[call-overload]
    del incomplete[("seen_b", "a")]
    with pytest.raises(ValueError, match=r"transitions.*\('seen_b', 'a'\)"):
        DFA(**_contains_b(transitions=incomplete))
    with pytest.raises(ValueError, match="transitions"):
        DFA(**_contains_b(transitions={**incomplete, ("seen_b", "a"): "nowhere"}))
    with pytest.raises(ValueError, match="transitions"):
        DFA(**_contains_b(transitions={**_contains_b()["transitions"], ("no_b", "c"): "no_b"}))  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="start"):
        DFA(**_contains_b(start="elsewhere"))
    with pytest.raises(ValueError, match="accepting"):
        DFA(**_contains_b(accepting={"seen_b", "elsewhere"}))
    with pytest.raises(ValueError, match="alphabet"):
        DFA(**_contains_b(alphabet=()))
    with pytest.raises(ValueError, match="alphabet"):
        DFA(**_contains_b(alphabet=("a", "b", "a")))
    with pytest.raises(ValueError, match="states"):
        DFA(**_contains_b(states=()))
    with pytest.raises(TypeError, match="transitions"):
        DFA(**_contains_b(transitions=[(("no_b", "a"), "no_b")]))
    with pytest.raises(TypeError):
        DFA(("no_b",), ("a",), {}, "no_b", set())  # type: ignore[misc]


def test_bad_words_and_arguments_raise() -> None:
    with pytest.raises(ValueError, match=r"word.*'c'.*alphabet \('a', 'b'\)"):
        CONTAINS_B.accepts("abc")
    with pytest.raises(ValueError, match="word"):
        CONTAINS_B.accepts(["a", ["b"]])
    with pytest.raises(TypeError, match="word"):
        CONTAINS_B.accepts(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dfa"):
        label("ab", "a")  # type: ignore[arg-type]
    other_alphabet = DFA(states=(0,), alphabet="ac", transitions={(0, "a"): 0, (0, "c"): 0}, start=0, accepting=())
    with pytest.raises(ValueError, match="other"):
        CONTAINS_B.equivalent(other_alphabet)
    with pytest.raises(ValueError, match="max_monoid_size"):
        is_star_free(AB_STAR, max_monoid_size=5)  # the monoid has 6 elements
    assert is_star_free(AB_STAR, max_monoid_size=6).monoid_size == 6
    with pytest.raises(ValueError, match="max_monoid_size"):
        is_star_free(AB_STAR, max_monoid_size=0)
    with pytest.raises(TypeError, match="max_monoid_size"):
        is_star_free(AB_STAR, max_monoid_size=6.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="witness"):
        StarFreeCertificate(star_free=False, monoid_size=2)


# Property tests on random small DFAs.


@st.composite
def small_dfas(draw: st.DrawFn, max_states: int = 4) -> DFA:
    n = draw(st.integers(1, max_states))
    alphabet = "abc"[: draw(st.integers(1, 3))]
    transitions = {(q, c): draw(st.integers(0, n - 1)) for q in range(n) for c in alphabet}
    accepting = {q for q in range(n) if draw(st.booleans())}
    return DFA(
        states=tuple(range(n)),
        alphabet=alphabet,
        transitions=transitions,
        start=draw(st.integers(0, n - 1)),
        accepting=accepting,
    )


def _words(alphabet: tuple, max_length: int) -> list[tuple]:
    return [w for n in range(max_length + 1) for w in itertools.product(alphabet, repeat=n)]


def _map_of(dfa: DFA, word: tuple) -> dict:
    """q -> delta*(q, word), straight from the transition table."""
    images = {}
    for origin in dfa.states:
        state = origin
        for symbol in word:
            state = dfa.transitions[(state, symbol)]
        images[origin] = state
    return images


def _cycle_lcm(images: dict) -> int:
    """The period of a map: the lcm of the lengths of the cycles of its functional graph."""
    lengths = []
    for origin in images:
        orbit = [origin]
        while images[orbit[-1]] not in orbit:
            orbit.append(images[orbit[-1]])
        lengths.append(len(orbit) - orbit.index(images[orbit[-1]]))
    return math.lcm(*lengths)


SETTINGS = settings(max_examples=150, deadline=None, database=None, derandomize=True)


@SETTINGS
@given(dfa=small_dfas(), data=st.data())
def test_minimise_accepts_the_same_words(dfa: DFA, data: st.DataObject) -> None:
    minimal = dfa.minimise()
    words = data.draw(st.lists(st.lists(st.sampled_from(dfa.alphabet), max_size=12), max_size=30))
    for word in words:
        assert minimal.accepts(word) == dfa.accepts(word)
    # Exhaustively on short words too.
    for word in _words(dfa.alphabet, 5):
        assert minimal.accepts(word) == dfa.accepts(word)


@SETTINGS
@given(dfa=small_dfas())
def test_minimal_size_equals_brute_force_myhill_nerode_count(dfa: DFA) -> None:
    # Two states of an n-state DFA that differ on some word differ on one of length <= n - 2
    # (we use suffixes up to n - 1), and every reachable state is reached by a word of length < n.
    suffixes = _words(dfa.alphabet, max(len(dfa.states) - 1, 0))

    def residual(state: object) -> tuple:
        return tuple(_map_of(dfa, w)[state] in dfa.accepting for w in suffixes)

    reachable = {_map_of(dfa, w)[dfa.start] for w in _words(dfa.alphabet, len(dfa.states))}
    assert len(dfa.minimise().states) == len({residual(q) for q in reachable})


@SETTINGS
@given(dfa=small_dfas(max_states=3))
def test_monoid_size_equals_closure_under_composition(dfa: DFA) -> None:
    # Independent construction: close {identity} + letter maps under pairwise composition.
    letter_maps = {tuple(sorted(_map_of(dfa, (c,)).items())) for c in dfa.alphabet}
    elements = {tuple(sorted(_map_of(dfa, ()).items()))} | letter_maps
    while True:
        products = {tuple((q, dict(g)[dict(f)[q]]) for q in dfa.states) for f in elements for g in elements}
        if products <= elements:
            break
        elements |= products
    assert len(transition_monoid(dfa).elements) == len(elements)


@SETTINGS
@given(dfa=small_dfas())
def test_certificate_agrees_with_cycles_of_word_maps(dfa: DFA) -> None:
    minimal = dfa.minimise()
    certificate = is_star_free(dfa)
    periods = {word: _cycle_lcm(_map_of(minimal, word)) for word in _words(minimal.alphabet, 5)}
    counters = [word for word, period in periods.items() if period > 1]
    if counters:
        assert not certificate.star_free
    if certificate.star_free:
        # x^k = x^(k+1) for every word map x, with k the certified index.
        k = certificate.aperiodicity_index
        for word in periods:
            assert _map_of(minimal, word * k) == _map_of(minimal, word * (k + 1)), word
    else:
        witness = certificate.witness
        assert _cycle_lcm(_map_of(minimal, witness)) == certificate.period >= 2
        # Shortest witness: no shorter word has a cycle of length >= 2.
        assert all(len(word) >= len(witness) for word in counters)


# Independent definitions of the experiments' languages, and the alphabet each is checked over.
EXPERIMENT_PREDICATES: dict[str, tuple[str, Callable[[str], bool]]] = {
    "CONTAINS_B_NOT_C": ("abcdefgh", lambda w: "b" in w and "c" not in w),
    "LAST_B": ("ab", lambda w: w.endswith("b")),
    "TWO_B": ("ab", lambda w: w.count("b") >= 2),
}


@pytest.mark.parametrize("name", sorted(EXPERIMENT_PREDICATES))
def test_the_experiments_languages_are_minimal_star_free_and_match_their_definitions(name: str) -> None:
    alphabet, predicate = EXPERIMENT_PREDICATES[name]
    dfa = EXPERIMENT_LANGUAGES[name]
    assert tuple(dfa.alphabet) == tuple(alphabet) and dfa.minimise() == dfa
    for n in range(5 if len(alphabet) > 2 else MAX_LENGTH + 1):
        for letters in itertools.product(alphabet, repeat=n):
            word = "".join(letters)
            assert dfa.accepts(word) == predicate(word), (name, word)
    assert is_star_free(dfa).star_free is True


def test_every_language_of_the_experiments_has_an_independent_definition() -> None:
    undefined = sorted(set(EXPERIMENT_LANGUAGES) - set(EXPERIMENT_PREDICATES))
    assert not undefined, f"give {undefined} an independent predicate in EXPERIMENT_PREDICATES (this file)"
    assert set(EXPERIMENT_PREDICATES) <= set(EXPERIMENT_LANGUAGES) and not set(EXPERIMENT_LANGUAGES) & set(LANGUAGES)


def test_every_dfa_of_the_package_is_defined_in_lagtheory_languages() -> None:
    """The one home of the package's languages: no other module builds a DFA (lagtheory/dfa.py, the class
    itself, builds its minimisation and quotient)."""
    package = Path(__file__).resolve().parents[1] / "lagtheory"
    builders = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).as_posix() in ("languages.py", "dfa.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "DFA":
                builders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert builders == []
