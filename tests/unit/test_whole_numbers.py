"""Text read as a whole number only when it is ASCII digits: str.isdigit() also holds for '²' (int() refuses
it: a crash where a clear message was meant) and for other scripts' digits ('٣', which int() reads as 3)."""

from __future__ import annotations

import pytest

from fsbench.core.units import is_whole_number
from fsbench.scenario.select import CaseNotFound, select_cases
from fsbench.tools.fio.estimate import option_int


@pytest.mark.parametrize(("text", "whole"), [("0", True), ("42", True), ("", False), ("4k", False), ("-1", False),
                                             ("²", False), ("٣", False), ("1²", False), (" 1", False)])
def test_only_ascii_digits_are_a_whole_number(text: str, whole: bool) -> None:
    assert is_whole_number(text) is whole
    assert "²".isdigit() and "٣".isdigit()  # what str.isdigit() alone would have let through


def test_a_case_named_by_a_superscript_is_not_found_with_the_usual_message() -> None:
    with pytest.raises(CaseNotFound, match="no case has the id '²'"):
        select_cases([], ["²"])


def test_fio_counts_that_are_not_ascii_digits_take_their_default() -> None:
    assert option_int("²", 1) == 1 and option_int("٣", 2) == 2 and option_int(" 4 ", 1) == 4
