"""The spreadsheet guard of CSV cells: formulas quoted, numbers untouched, reading gives back what was written."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from fsbench.core.csv_cells import guard, guard_frame, unguard, unguard_frame


@pytest.mark.parametrize("text", ["=2+5", "+A1", "-2+3", "@SUM(1)", "=HYPERLINK(\"http://x\")", "\tx", "\rx",
                                  "'quoted", "-", "--rw"])
def test_text_a_spreadsheet_would_evaluate_gets_a_quote_and_comes_back(text):
    assert guard(text) == "'" + text
    assert unguard(guard(text)) == text


@pytest.mark.parametrize("value", ["-1", "+2.5", "-3e6", ".5", "write", "", "a=b", 5, -5, -2.5, None])
def test_numbers_and_plain_text_stay_as_they_are(value):
    assert guard(value) == value and unguard(value) == value


def test_a_table_round_trips_through_csv_with_its_number_columns_untouched():
    df = pd.DataFrame({"job": ["=2+5", "w"], "param": ["@SUM(1)", "-1"], "value": [-5.0, 1.5]})
    text = guard_frame(df).to_csv(index=False)
    assert "'=2+5" in text and "'@SUM(1)" in text and ",-5.0" in text and "'-1" not in text
    back = unguard_frame(pd.read_csv(io.StringIO(text), keep_default_na=False))
    assert back["job"].tolist() == ["=2+5", "w"] and back["param"].tolist() == ["@SUM(1)", "-1"]
    assert back["value"].tolist() == [-5.0, 1.5]
    assert df["job"].tolist() == ["=2+5", "w"]  # guard_frame copies: the caller's table (parquet) stays raw
