"""Values fsbench passes on are read by the tools as written, or refused when they would not be.

A target path with '#' or ';' (fio cuts a job-file line there), a run-time placeholder in a tool's
options (fsbench fills them only in commands), a name longer than a folder name may be, a path
like //etc (Linux reads it as /etc), and a value already refused by its shape reported only once.
"""

from __future__ import annotations

import textwrap

import pytest

from fsbench.core.errors import ScenarioError
from fsbench.core.path_safety import unsafe_path_reason
from fsbench.scenario.load import load_scenario_text
from fsbench.tools.fio.jobfile import value_change


def issues_of(text: str) -> list:
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(textwrap.dedent(text), "s.yaml")
    return err.value.issues


def scenario(path: str, options: str = "{rw: write, size: 1m}", tool: str = "fio", name: str = "v") -> str:
    return f"""\
        name: {name}
        targets:
          t: {{path: '{path}'}}
        workloads:
          w: {{tool: {tool}, options: {options}}}
        """


@pytest.mark.parametrize("char", ["#", ";"])
def test_a_target_path_fio_would_cut_is_refused(char):
    issues = issues_of(scenario(f"/srv/bench/victim{char}t"))
    assert len(issues) == 1
    msg = issues[0].message
    assert f"holds {char!r}" in msg and "would read '/srv/bench/victim'" in msg and "target t's path" in msg
    assert "without '#', ';'" in issues[0].hint


def test_a_target_path_with_a_word_fio_replaces_is_refused():
    msg = issues_of(scenario("/srv/$ncpus/t"))[0].message  # ${NAME} there is a scenario variable
    assert "holds '$ncpus'" in msg


def test_value_change_names_what_fio_does():
    assert value_change("/srv/bench/t") is None
    assert "would read '/a'" in value_change("/a;b")
    assert "$ncpus" in value_change("/a/$ncpus")
    assert "environment" in value_change("/a/${HOME}")


def test_the_default_image_name_of_an_rbd_image_target_is_fsbenchs_own_placeholders():
    text = """\
        name: img
        targets:
          img: {kind: rbd-image, path: "rbd:p", rbd-image: {pool: p}}
        workloads:
          w: {tool: fio, options: {ioengine: rbd, rw: write, size: 1m}}
        """
    load_scenario_text(textwrap.dedent(text), "s.yaml")  # ${run.id}-${target.name}: filled before fio reads it
    bad = text.replace("{pool: p}", "{pool: 'p;x'}")
    assert any("image's pool" in i.message or "pool 'p;x'" in i.message for i in issues_of(bad))


@pytest.mark.parametrize("tool,options,key", [
    ("fio", "{rw: write, size: 1m, description: '${secrets.db}'}", "description"),
    ("fio", "{rw: write, size: 1m, buffer_pattern: \"'${target.path}'\"}", "buffer_pattern"),
    ("mdtest", "{n: 5, x: '${run.id}'}", "x"),
])
def test_run_time_placeholders_in_tool_options_are_refused(tool, options, key):
    text = scenario("/srv/bench/t", options, tool).rstrip(" ") + "        secrets:\n          db: {env: FSB_DB}\n"
    issues = issues_of(text)
    mine = [i for i in issues if i.path == f"workloads.w.options.{key}"]
    assert len(mine) == 1, issues
    assert "is not filled in a tool's options" in mine[0].message and "commands" in mine[0].hint
    assert mine[0].line == 5


def test_objbench_keys_stay_secret_references():
    text = """\
        name: ob
        secrets:
          ak: {env: FSB_AK}
          sk: {env: FSB_SK}
        targets:
          t: {path: /srv/bench/t}
        workloads:
          w: {tool: juicefs-objbench, options: {storage: s3, bucket: "https://s3.example.com/b",
                                                access_key: "${secrets.ak}", secret_key: "${secrets.sk}"}}
        """
    sc = load_scenario_text(textwrap.dedent(text), "s.yaml")
    assert sc.workloads["w"].options["access_key"] == "${secrets.ak}"


def test_a_name_longer_than_a_folder_name_may_be_is_refused_at_validation():
    issues = issues_of(scenario("/srv/bench/t", name="a" * 300))
    assert [i.path for i in issues] == ["name"] and "300 characters; at most 100" in issues[0].message
    long_target = scenario("/srv/bench/t").replace("  t: {", f"  {'t' * 101}: {{")
    assert any("name of 101 characters" in i.message for i in issues_of(long_target))
    load_scenario_text(textwrap.dedent(scenario("/srv/bench/t", name="a" * 100)), "s.yaml")


@pytest.mark.parametrize("path", ["//etc", "//etc/x", "//", "///usr/lib"])
def test_a_leading_double_slash_is_the_root_it_names(path):
    assert unsafe_path_reason(path) is not None
    issues = issues_of(scenario(path))
    assert len(issues) == 1 and "fsbench will not write there" in issues[0].message


def test_a_path_refused_for_its_shape_is_not_reported_again_as_empty():
    issues = issues_of(scenario("/srv/x/t\\nexec_prerun=mkdir -p /tmp/pwned").replace("'", '"'))
    assert len(issues) == 1 and "line break" in issues[0].message
