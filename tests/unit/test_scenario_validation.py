"""Validation errors name file:line, the key path and what is allowed; nothing partial gets through."""

import textwrap

import pytest

from fsbench.core.errors import ScenarioError
from fsbench.scenario.load import load_scenario, load_scenario_text

GOOD = """\
name: demo
variables:
  scale: quick
  size:
    by: scale
    quick: 16m
    full: 4g
targets:
  a:
    path: /srv/bench/a
    baseline: true
  b:
    path: /srv/bench/b
workloads:
  big-write:
    tool: fio
    options:
      rw: write
      bs: 1m
      size: ${size}
"""


def issues_of(text: str, sets=None):
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(textwrap.dedent(text), "s.yaml", overrides=sets)
    return err.value.issues


def test_good_scenario_loads_with_defaults():
    sc = load_scenario_text(GOOD, "s.yaml")
    assert sc.baseline == "a"
    assert sc.workloads["big-write"].options["size"] == "16m"
    assert sc.settings.repetitions == 1
    assert list(sc.hosts) == ["local"]


def test_set_overrides_a_variable_and_by_selects():
    sc = load_scenario_text(GOOD, "s.yaml", overrides=["scale=full"])
    assert sc.workloads["big-write"].options["size"] == "4g"
    assert sc.resolved["variables"] == {"scale": "full", "size": "4g"}


def test_a_cooldown_may_be_none_and_a_timeout_may_not():
    """The pause between cases is a duration that may be 0s (the default, and the seeds' smoke scale);
    a case timeout of zero would fail every case, so it is refused where it is written."""
    assert load_scenario_text(GOOD + "settings:\n  cooldown: 0s\n", "s.yaml").settings.cooldown_s == 0
    assert load_scenario_text(GOOD + "settings:\n  cooldown: 2s\n", "s.yaml").settings.cooldown_s == 2
    (issue,) = issues_of(GOOD + "settings:\n  case_timeout: 0s\n")
    assert issue.path == "settings.case_timeout" and "longer than zero" in issue.message and issue.line == 22


def test_unknown_option_names_line_path_and_suggestion():
    (issue,) = issues_of(GOOD.replace("      bs: 1m", "      bss: 1m"))
    assert issue.file == "s.yaml" and issue.line == 19
    assert issue.path == "workloads.big-write.options.bss"
    assert "unknown fio option 'bss'" in issue.message
    assert "did you mean" in issue.hint and "'bs'" in issue.hint


def test_unknown_key_lists_what_is_allowed():
    (issue,) = issues_of(GOOD.replace("    baseline: true", "    baseline: true\n    pathh: /x"))
    assert issue.line == 12 and issue.path == "targets.a.pathh"
    assert "did you mean 'path'" in issue.hint and "destructive" in issue.hint


def test_bad_values_are_all_reported_at_once():
    text = GOOD.replace("      bs: 1m", "      bs: huge").replace("    baseline: true", "    baseline: yes please")
    issues = issues_of(text)
    paths = {i.path: i for i in issues}
    assert "workloads.big-write.options.bs" in paths and paths["workloads.big-write.options.bs"].line == 19
    assert "targets.a.baseline" in paths and "true or false" in paths["targets.a.baseline"].message


def test_str_of_an_issue_reads_file_line_path():
    (issue,) = issues_of(GOOD.replace("tool: fio", "tool: fioo"))
    assert str(issue).startswith("s.yaml:16: workloads.big-write.tool: unknown tool 'fioo'")
    assert "did you mean 'fio'" in str(issue)


def test_missing_required_and_wrong_type():
    issues = issues_of("name: x\ntargets: [a, b]\n")
    msgs = {(i.path, i.message.split(",")[0]) for i in issues}
    assert ("targets", "expected a mapping of target names to settings") in msgs
    assert any(i.path == "" and "missing required key 'workloads'" in i.message for i in issues)


def test_unknown_variable_reference_and_set():
    (issue,) = issues_of(GOOD.replace("${size}", "${sise}"))
    assert issue.line == 20 and "unknown variable ${sise}" in issue.message
    (issue,) = issues_of(GOOD, sets=["scael=full"])
    assert issue.file == "--set" and "scael" in issue.message and "scale" in issue.hint


def test_by_selection_without_a_value_for_the_choice():
    (issue,) = issues_of(GOOD, sets=["scale=huge"])
    assert issue.path == "variables.size" and "scale='huge'" in issue.message


@pytest.mark.parametrize("path, reason", [
    ("/", "top-level system folder"), ("/etc", "system folder"), ("/usr/local/x", "system folder"),
    ("/root", "top-level"), ("/home/alice", "home directory"), ("relative/dir", "absolute"),
])
def test_dangerous_target_paths_are_refused(path, reason):
    (issue,) = issues_of(GOOD.replace("/srv/bench/b", path))
    assert issue.path == "targets.b.path" and reason in issue.message
    assert "destructive: true" in issue.hint


def test_destructive_allows_a_system_path():
    sc = load_scenario_text(GOOD.replace("    path: /srv/bench/b", "    path: /mnt\n    destructive: true"), "s.yaml")
    assert sc.targets["b"].destructive


def test_fio_options_fsbench_owns_are_refused():
    (issue,) = issues_of(GOOD.replace("      bs: 1m", "      directory: /tmp"))
    assert "fsbench sets directory" in issue.message
    (issue,) = issues_of(GOOD.replace("      bs: 1m", "      filename: /dev/sdb"))
    assert "destructive: true" in issue.hint


def test_two_baselines_and_unknown_references():
    text = GOOD.replace("    path: /srv/bench/b", "    path: /srv/bench/b\n    baseline: true")
    text = text.replace("    tool: fio", "    tool: fio\n    targets: [a, c]")
    issues = issues_of(text)
    msgs = {i.path: i.message for i in issues}
    assert "second baseline" in msgs["targets.b.baseline"]
    assert "unknown target 'c'" in msgs["workloads.big-write.targets"]


def test_yaml_syntax_error_has_a_line():
    (issue,) = issues_of("name: x\ntargets:\n  a: {path: /srv/x\nworkloads: {}\n")
    assert issue.line is not None and "YAML syntax error" in issue.message


def test_duplicate_keys_are_errors():
    (issue,) = issues_of(GOOD.replace("      bs: 1m", "      bs: 1m\n      bs: 4k"))
    assert issue.line == 20 and "duplicate key 'bs'" in issue.message


def test_zip_lengths_must_match():
    text = GOOD + "    sweep:\n      zip: {bs: [4k, 1m], iodepth: [1, 2, 4]}\n"
    text = text.replace("      bs: 1m\n", "")
    (issue,) = issues_of(text)
    assert issue.path == "workloads.big-write.sweep.zip" and "differ in length" in issue.message


def test_missing_file_is_a_scenario_error(tmp_path):
    with pytest.raises(ScenarioError, match="cannot read the scenario"):
        load_scenario(tmp_path / "nope.yaml")


def test_job_file_relative_to_the_scenario(tmp_path):
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "w.fio").write_text("[global]\nrw=write\n[w]\nbs=4k\n")
    f = tmp_path / "s.yaml"
    f.write_text(GOOD.replace("    options:\n      rw: write\n      bs: 1m\n      size: ${size}\n",
                              "    job_file: jobs/w.fio\n    options: {size: 8m}\n"))
    sc = load_scenario(f)
    assert "bs=4k" in sc.workloads["big-write"].job_file_text
    f.write_text(f.read_text().replace("jobs/w.fio", "jobs/missing.fio"))
    with pytest.raises(ScenarioError, match="cannot read job file"):
        load_scenario(f)


# -- limits: a plan, a sweep or an input file too big to be meant -----------------------------------------

def test_repetitions_sweep_points_and_cases_are_bounded():
    (issue,) = issues_of(GOOD + "settings: {repetitions: 100000000}\n")
    assert issue.path == "settings.repetitions" and "at most 1,000" in issue.message
    axes = "\n".join(f"        {k}: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]" for k in
                     ("iodepth", "numjobs", "nrfiles", "rwmixread", "thinktime", "rate_iops"))
    (issue,) = issues_of(GOOD.replace("      bs: 1m\n", "") + "    sweep:\n      product:\n" + axes + "\n")
    assert issue.path == "workloads.big-write.sweep" and "1,000,000 points" in issue.message
    assert "at most 10,000" in issue.message and issue.line == 20
    many = GOOD + "    repetitions: 1000\n    sweep: {product: {iodepth: [1, 2, 4, 8, 16, 32]}}\n"
    (issue,) = issues_of(many)
    assert issue.path == "workloads" and "12,000 cases" in issue.message and "at most 10,000" in issue.message


def test_a_device_or_a_huge_job_file_is_refused(tmp_path):
    f = tmp_path / "s.yaml"
    body = GOOD.replace("    options:\n      rw: write\n      bs: 1m\n      size: ${size}\n", "    job_file: {jf}\n")
    f.write_text(body.format(jf="/dev/zero"))
    with pytest.raises(ScenarioError, match="cannot read job file /dev/zero: not a regular file"):
        load_scenario(f)
    big = tmp_path / "big.fio"
    big.write_text("[w]\nrw=write\n" + "; padding\n" * 500_000)
    f.write_text(body.format(jf="big.fio"))
    with pytest.raises(ScenarioError, match="larger than 4 MiB"):
        load_scenario(f)


@pytest.mark.parametrize("name, why", [
    ("host", "whole host's figures"), ("a/b", "not a process name"), ("a\\nb", "not a process name"),
    ("abcdefghijklmnop", "not a process name"), ("", "not a process name"),
])
def test_a_client_process_is_a_process_name(name, why):
    (issue,) = issues_of(GOOD.replace("    baseline: true", f'    baseline: true\n    client_process: "{name}"'))
    assert issue.path == "targets.a.client_process" and why in issue.message


def test_a_fifteen_character_client_process_is_fine():
    sc = load_scenario_text(GOOD.replace("    baseline: true", "    baseline: true\n    client_process: abcdefghijklmno"),
                            "s.yaml")
    assert sc.targets["a"].client_process == "abcdefghijklmno"


def test_existing_mount_is_refused_at_validation_on_a_target_whose_path_is_no_folder():
    (issue,) = issues_of(GOOD.replace("    path: /srv/bench/b",
                                      "    path: /dev/vdz\n    kind: device\n    destructive: true\n"
                                      "    existing_mount: true"))
    assert issue.path == "targets.b.existing_mount" and "device" in issue.message
    assert "remove existing_mount" in issue.hint
    sc = load_scenario_text(GOOD.replace("    path: /srv/bench/b", "    path: /srv/bench/b\n    existing_mount: true"),
                            "s.yaml")
    assert sc.targets["b"].existing_mount
