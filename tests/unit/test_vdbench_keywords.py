"""vdbench's keywords as vdbench reads them: lower-cased, by their first letters, in each section's own list."""

from __future__ import annotations

import pytest

from fsbench.tools.vdbench.keywords import ALIASES, KEYWORDS, resolve


@pytest.mark.parametrize("kind", sorted(KEYWORDS))
def test_every_whole_keyword_is_read_as_itself(kind):
    # vdbench takes the first keyword in its order that begins with the key: a whole keyword must not begin
    # one tried before it, or fsbench's checks would be about another parameter than the one vdbench sets
    words, whole = KEYWORDS[kind]
    for word in words:
        first = next(w for w in words if (w == word if w in whole else w.startswith(word)))
        assert ALIASES.get(first, first) == ALIASES.get(word, word), (kind, word, first)
        assert resolve(kind, word.upper()).name == ALIASES.get(word, word)


@pytest.mark.parametrize("kind, key, name", [
    ("sd", "LUN", "lun"), ("sd", "Lu", "lun"), ("fsd", "jou", "journal"), ("fsd", "ANCH", "anchor"),
    ("fsd", "size", "sizes"), ("fwd", "xfersize", "xfersizes"), ("rd", "sta", "start_cmd"),
    ("rd", "START_CMD", "start_cmd"), ("rd", "startc", "start_cmd"), ("rd", "END", "end_cmd"),
    ("rd", "form", "format"), ("rd", "fwd", "fwd"), ("rd", "fwdr", "fwdrate"), ("hd", "SYS", "system"),
    ("hd", "sh", "shell"), ("hd", "VDB", "vdbench"), ("hd", "us", "user"), ("wd", "USER", "user"),
    ("general", "DATAE", "data_errors"), ("general", "Start_Cmd", "start_cmd"), ("general", "val", "validate"),
])
def test_a_key_is_read_in_any_case_and_by_its_first_letters(kind, key, name):
    assert resolve(kind, key).name == name


@pytest.mark.parametrize("kind, key, problem, hint", [
    ("rd", "st", "'st' is ambiguous: vdbench reads a keyword by its first letters, and stopcurve, start_cmd "
                 "all begin with 'st'", "write the whole keyword, e.g. stopcurve"),
    ("rd", "for", "'for' is ambiguous", "e.g. forxfersize"),
    ("hd", "s", "vdbench needs a keyword of at least 2 letters, 's' has 1", "write the whole keyword"),
    ("fwd", "xfersise", "vdbench has no file system workload (fwd) parameter 'xfersise'", "did you mean xfersizes?"),
    ("wd", "rd", "rd= would start a new definition in the parameter file", "named with its type"),
    ("fsd", "SD", "sd= would start a new definition", ""),
    ("general", "sta", "vdbench has no general parameter 'sta'", "did you mean startcmd or start_cmd?"),
    ("hd", "hostname", "vdbench has no host (hd) parameter 'hostname'", "vdbench's host (hd) parameters: clients, "
                                                                        "jvms, mount, shell, system, user, vdbench"),
])
def test_a_key_that_names_no_parameter_or_several_is_refused(kind, key, problem, hint):
    found = resolve(kind, key)
    assert not found.name and problem in found.problem and hint in found.hint, found
