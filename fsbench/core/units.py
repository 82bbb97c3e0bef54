"""Human sizes and durations to base units, and back (formatting is for reports only)."""

from __future__ import annotations

import re

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kmgtpe]?)(i?)(b?)\s*$", re.IGNORECASE)
_POW = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ns|us|ms|s|m|h|d|sec|min)?\s*$", re.IGNORECASE)
_TIME_FACTOR = {
    None: 1.0, "s": 1.0, "sec": 1.0, "ns": 1e-9, "us": 1e-6, "ms": 1e-3,
    "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0,
}


def is_whole_number(text: str) -> bool:
    """Whether text is ASCII digits only, so int(text) reads it as written: str.isdigit() also holds for
    superscripts ('²', which int() refuses) and other scripts' digits ('٣', which int() reads as 3)."""
    return text.isascii() and text.isdigit()


def parse_size(text: object, *, decimal_suffix: bool = False) -> float:
    """'4k' -> 4096, '1MiB' -> 1048576, '1MB' -> 1e6 when decimal_suffix else 1048576.

    fio treats k/m/g and KiB/MiB as powers of 1024 (kb_base=1024 by default); so do we
    unless decimal_suffix asks for SI 'kB'/'MB' semantics (used for fio's parenthesised figures).
    """
    if isinstance(text, (int, float)):
        return float(text)
    if not isinstance(text, str):
        raise TypeError(f"not a size: {text!r}")
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"not a size: {text!r} (expected e.g. 4k, 1MiB, 512m, 10g)")
    number, prefix, binary, _b = m.groups()
    base = 1000 if decimal_suffix and not binary else 1024
    return float(number) * base ** _POW[prefix.lower()]


def parse_duration(text: object) -> float:
    """'30s' -> 30.0, '2m' -> 120.0, '500ms' -> 0.5; a bare number is seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    if not isinstance(text, str):
        raise TypeError(f"not a duration: {text!r}")
    m = _TIME.match(text)
    if not m:
        raise ValueError(f"not a duration: {text!r} (expected e.g. 30s, 2m, 500ms, 1h)")
    number, unit = m.groups()
    return float(number) * _TIME_FACTOR[unit.lower() if unit else None]


def parse_fraction(value: object) -> float:
    """'50%' -> 0.5, 0.5 -> 0.5 (ValueError or TypeError when it is neither)."""
    if isinstance(value, str) and value.endswith("%"):
        return float(value.rstrip("%")) / 100
    if not isinstance(value, (int, float, str)):
        raise TypeError(f"not a fraction: {value!r}")
    return float(value)


def parse_count(text: str) -> float:
    """fio's suffixed counts: '101k' -> 101000, '1632.2k' -> 1632200, '1.2M' -> 1.2e6."""
    t = text.strip()
    mult = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}.get(t[-1:].lower())
    return float(t[:-1]) * mult if mult else float(t)


def format_value(value: float, unit: str, time_unit: str = "") -> str:
    """Format a canonical value for people: 1.5 GiB/s, 12.3k op/s, 250 µs (a time in `time_unit` when given)."""
    if value != value:  # NaN
        return "–"
    if unit == "s" and time_unit:
        shown = "µs" if time_unit == "us" else time_unit
        scaled = value / _TIME_UNITS[shown]
        return f"{scaled:.3g} {shown}" if abs(scaled) < 100 else f"{scaled:.0f} {shown}"
    if unit == "B/s":
        return _binary(value) + "/s"
    if unit == "B":
        return _binary(value)
    if unit == "s":
        return _seconds(value)
    if unit in ("op/s", "file/s", "count"):
        suffix = f" {unit}" if unit != "count" else ""
        return _decimal(value) + suffix
    if unit == "%":
        return f"{value:.1f}%"
    if unit == "result":  # an outcome: the mean of repetitions that disagree is no outcome
        return {1.0: "pass", 0.0: "not supported", -1.0: "failed"}.get(value, "varies")
    return f"{value:.4g} {unit}".strip()


def _binary(value: float) -> str:
    for prefix in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or prefix == "PiB":
            if prefix == "B":
                return f"{value:.0f} B"
            return f"{value:.3g} {prefix}" if abs(value) < 100 else f"{value:.0f} {prefix}"
        value /= 1024
    raise AssertionError("unreachable")


def _decimal(value: float) -> str:
    for prefix in ("", "k", "M", "G", "T"):
        if abs(value) < 1000 or prefix == "T":
            return f"{value:.3g}{prefix}" if abs(value) < 100 or prefix else f"{value:.0f}"
        value /= 1000
    raise AssertionError("unreachable")


_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}


def _seconds(value: float) -> str:
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(value) >= factor or unit == "ns":
            scaled = value / factor
            return f"{scaled:.3g} {unit}" if scaled < 100 else f"{scaled:.0f} {unit}"
    raise AssertionError("unreachable")
