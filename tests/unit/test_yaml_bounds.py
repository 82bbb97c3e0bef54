"""The bounded YAML reader: alias bombs, big repeated values and planted run files are refused fast."""

from __future__ import annotations

import time

import pytest

from fsbench.config.files import read_text_bounded
from fsbench.config.yamllines import load_data, load_yaml
from fsbench.core.errors import ScenarioError


def test_a_big_value_repeated_by_aliases_is_refused_in_under_a_second():
    text = 'name: x\ndescription: &b "' + "y" * 1_500_000 + '"\nsetup: [' + ", ".join(["*b"] * 100_000) + "]\n"
    start = time.process_time()  # this process's CPU, which other processes' load does not inflate as wall time
    with pytest.raises(ScenarioError, match="expands to more than 8 MiB of text"):
        load_yaml(text, "bomb.yaml")
    assert time.process_time() - start < 1


def test_a_planted_run_file_is_read_with_the_same_bounds(tmp_path):
    bomb = tmp_path / "scenario.yaml"
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 10) + "]" for i in range(1, 9)]
    bomb.write_text("\n".join(lines) + "\n")
    with pytest.raises(ScenarioError, match="more than 200,000 values"):
        load_data(bomb)
    bomb.write_text("name: fine\nvariables: {a: 1}\n")
    assert load_data(bomb) == {"name": "fine", "variables": {"a": 1}}
    with pytest.raises(ScenarioError, match="not a regular file"):
        load_data("/dev/zero")


def test_input_files_are_read_bounded(tmp_path):
    f = tmp_path / "job.fio"
    f.write_bytes(b"[w]\nrw=write\n\xff\n")
    assert read_text_bounded(f) == "[w]\nrw=write\n\ufffd\n"
    with pytest.raises(OSError, match="larger than 1,000 bytes"):
        f.write_text("x" * 1001)
        read_text_bounded(f, 1000)
    with pytest.raises(OSError, match="not a regular file"):
        read_text_bounded("/dev/zero")
    with pytest.raises(IsADirectoryError):
        read_text_bounded(tmp_path)
