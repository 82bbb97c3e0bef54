import math

import pytest

from fsbench.core.units import format_value, parse_count, parse_duration, parse_size


@pytest.mark.parametrize("text, expected", [
    ("4k", 4096), ("4K", 4096), ("1m", 2**20), ("1MiB", 2**20), ("10g", 10 * 2**30), ("512", 512),
    ("1.5k", 1536), ("2t", 2 * 2**40), (64, 64),
])
def test_sizes_are_binary_like_fio(text, expected):
    assert parse_size(text) == expected


def test_decimal_sizes_when_asked():
    assert parse_size("1MB", decimal_suffix=True) == 1e6
    assert parse_size("1MiB", decimal_suffix=True) == 2**20


@pytest.mark.parametrize("text, expected", [
    ("30s", 30), ("2m", 120), ("500ms", 0.5), ("1h", 3600), (5, 5), ("250us", 250e-6), ("10", 10),
])
def test_durations(text, expected):
    assert math.isclose(parse_duration(text), expected)


@pytest.mark.parametrize("bad", ["", "fast", "4q", "1..2k", "-3s"])
def test_bad_values_raise_value_error_with_examples(bad):
    with pytest.raises(ValueError, match="expected"):
        parse_size(bad) if not bad.endswith("s") else parse_duration(bad)


def test_fio_suffixed_counts():
    assert parse_count("101k") == 101000
    assert parse_count("1632.2k") == pytest.approx(1632200)
    assert parse_count("8") == 8


@pytest.mark.parametrize("value, unit, text", [
    (5592405333.0, "B/s", "5.21 GiB/s"), (1536, "B", "1.5 KiB"), (0.000146, "s", "146 µs"),
    (2.5, "s", "2.5 s"), (19200, "op/s", "19.2k op/s"), (103.5, "%", "103.5%"), (float("nan"), "s", "–"),
])
def test_formatting_for_people(value, unit, text):
    assert format_value(value, unit) == text


@pytest.mark.parametrize("value, time_unit, text", [
    (0.000986, "µs", "986 µs"), (0.015449, "us", "15449 µs"), (1.2e-7, "µs", "0.12 µs"), (0.0021, "ms", "2.1 ms"),
    (3.5e-5, "ns", "35000 ns"), (float("nan"), "µs", "–"),
])
def test_times_in_one_unit_as_seed_000_s_table(value, time_unit, text):
    assert format_value(value, "s", time_unit) == text
    assert format_value(1536, "B", time_unit) == "1.5 KiB"  # only times change
