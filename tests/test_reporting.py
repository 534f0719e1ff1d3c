import pytest

from lagtheory.reporting import below, rounded, significant, statistic, supported


def test_below_states_the_bound_it_checked():
    assert below("|gap|", [3e-15, -7e-14], 1e-12) == "|gap| < 1e-12"
    assert below("gap", 0.0, 5e-10) == "gap < 5e-10"
    assert below("", 1e-13, 1e-9) == "< 1e-09"


def test_below_fails_when_the_bound_is_not_met():
    with pytest.raises(AssertionError, match=r"\|gap\|: 2\.000e-12 is not below 1e-12"):
        below("|gap|", [1e-15, -2e-12], 1e-12)
    with pytest.raises(AssertionError):
        below("gap", 1e-12, 1e-12)  # strict


@pytest.mark.parametrize("bound", [3.5e-12, 0.0, -1e-3, float("nan")])
def test_below_refuses_a_bound_it_cannot_print_exactly(bound):
    with pytest.raises(ValueError, match="bound"):
        below("gap", 0.0, bound)


def test_significant_rounds_to_the_digits_asked():
    assert significant(0.25584278811, 3) == "0.256"
    assert significant(-123456.789, 2) == "-1.2e+05"
    assert significant(0.2558427881103, 8) == "0.25584279"
    with pytest.raises(ValueError, match=r"digits must be an integer in 1\.\.8"):
        significant(1.0, 9)
    with pytest.raises(ValueError, match="digits"):
        significant(1.0, 0)


def test_supported_shows_only_digits_above_ten_times_the_error():
    # the last digit shown has place value >= 10 * error
    assert supported(0.2558427881103, 1e-13) == "0.25584279"  # capped at 8 digits
    assert supported(1.7606, 1e-3) == "1.76"  # place 1e-2 >= 1e-2
    assert supported(1.7606, 2e-3) == "1.8"  # place 1e-2 < 2e-2, so 1e-1
    assert supported(98765.4, 0.5) == "9.877e+04"  # place 10 >= 5
    assert supported(3.0, 10.0) == "3"  # at least one digit
    assert supported(0.0, 1e-12) == "0"


def test_rounded_is_a_float_whose_repr_has_the_digits_asked():
    assert repr(rounded(0.09175238744710745, 8)) == "0.091752387"
    with pytest.raises(ValueError, match="digits"):
        rounded(0.09175238744710745, 10)
    assert repr(rounded(85.19997017805095, 7)) == "85.19997"
    assert repr(rounded(85.19997017805095, 6)) == "85.2"
    assert repr(rounded(1e-30 * 1.23456, 3)) == "1.23e-30"


def test_statistic_shows_four_significant_digits():
    assert statistic(0.4037231268) == "0.4037"
    assert statistic(0.02950237246) == "0.0295"
    assert statistic(31031.9) == "3.103e+04"
    assert statistic(-2.27214) == "-2.272"
