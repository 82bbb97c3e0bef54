"""Variables: references between variables, cycles, shell quoting in commands, --set values, size bounds."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from fsbench.config.yamllines import load_yaml
from fsbench.core.errors import ScenarioError
from fsbench.core.shell import render
from fsbench.scenario.load import load_scenario, load_scenario_text
from fsbench.scenario.substitute import shell_words
from fsbench.scenario.variables import parse_set
from tests.paths import REPO

BASE = """\
name: v
variables:
{variables}
targets:
  t:
    path: {path}
    setup: {setup}
workloads:
  w: {{tool: fio, options: {{rw: write, size: 1m}}}}
"""


def load(variables: str, path: str = "/srv/bench/t", setup: str = "[]", sets=None):
    text = BASE.format(variables=textwrap.indent(textwrap.dedent(variables), "  "), path=path, setup=setup)
    return load_scenario_text(text, "s.yaml", overrides=sets)


def issues_of(variables: str, **kw):
    with pytest.raises(ScenarioError) as err:
        load(variables, **kw)
    return err.value.issues


# -- variables that use other variables ------------------------------------------------------------------

def test_a_variable_may_use_variables_declared_after_it_and_by_selections():
    sc = load("""\
        where: {by: scale, quick: "${base}/q", full: "${base}/f"}
        base: ${root}/bench
        root: /srv
        scale: quick
        """, path="${where}")
    assert sc.targets["t"].path == "/srv/bench/q"
    assert sc.variables == {"where": "/srv/bench/q", "base": "/srv/bench", "root": "/srv", "scale": "quick"}
    sc = load("""\
        where: {by: scale, quick: "${base}/q", full: "${base}/f"}
        base: /srv/bench
        scale: quick
        """, path="${where}", sets=["scale=full", "base=/srv/other"])
    assert sc.targets["t"].path == "/srv/other/f"


def test_by_may_name_a_selection_and_a_whole_reference_keeps_its_type():
    sc = load("""\
        scale: lab
        cluster: {by: scale, lab: here, full: there}
        conf: {by: cluster, here: /etc/lab.conf, there: /etc/ceph/ceph.conf}
        levels: {by: scale, lab: [1, 2], full: "${many}"}
        many: [1, 10, 100]
        """, setup='["echo ${conf}"]', sets=["scale=full"])
    assert sc.variables["conf"] == "/etc/ceph/ceph.conf" and sc.variables["levels"] == [1, 10, 100]
    assert sc.targets["t"].setup == ("echo /etc/ceph/ceph.conf",)


def test_a_cycle_is_an_error_naming_it_with_file_and_line():
    issues = issues_of("""\
        a: "x${b}"
        b: {by: c, one: "${a}"}
        c: one
        """)
    (issue,) = issues
    assert issue.file == "s.yaml" and issue.line == 3 and issue.path == "variables.a"
    assert "cycle: a -> b -> a" in issue.message
    (issue,) = issues_of("self: ${self}")
    assert "cycle: self -> self" in issue.message and issue.line == 3


def test_an_unknown_reference_inside_a_variable_is_an_error():
    (issue,) = issues_of("a: ${nope}/x")
    assert issue.path == "variables.a" and "unknown variable ${nope}" in issue.message and issue.line == 3


def test_a_list_cannot_be_part_of_a_text_outside_shell_commands():
    (issue,) = issues_of("words: [a, b]", path="/srv/${words}")
    assert issue.path == "targets.t.path" and "is a list and cannot be part of a text" in issue.message


def test_variables_that_multiply_are_refused_quickly():
    lines = ["v0: " + "x" * 1000] + [f"v{i}: \"${{v{i - 1}}}${{v{i - 1}}}\"" for i in range(1, 40)]
    start = time.monotonic()
    issues = issues_of("\n".join(lines))
    assert time.monotonic() - start < 1
    assert "more than 8 MiB of text" in issues[0].message


# -- every scenario at every level it declares --------------------------------------------------------------

def _scenario_levels() -> list[tuple[Path, str]]:
    out = []
    for path in sorted((REPO / "scenarios").glob("*.yaml")):
        raw, _ = load_yaml(path.read_text(), str(path))
        levels = {str(k) for v in (raw.get("variables") or {}).values()
                  if isinstance(v, dict) and v.get("by") == "scale" for k in v if k != "by"}
        out += [(path, level) for level in sorted(levels)]
    return out


def _texts(value: object):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _texts(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _texts(v)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if f.name not in ("job_file_text", "spec"):  # fio's own ${ENV}; inventory data
                yield from _texts(getattr(value, f.name))


@pytest.mark.parametrize("path, level", _scenario_levels(), ids=lambda v: getattr(v, "stem", v))
def test_no_scenario_variable_survives_loading(path, level):
    sc = load_scenario(path, [f"scale={level}"])
    names = set(sc.variables)
    assert len(names) > 1 and "scale" in names
    left = {m for text in _texts([sc.resolved, sc.targets, sc.services, sc.workloads, sc.settings, sc.collectors,
                                  sc.hosts, sc.report, sc.monitor])
            for m in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", text)}
    assert not left & names, f"{path.name} at scale={level}: ${{{', '.join(sorted(left & names))}}} left"


def test_hdfs_s3_juicefs_at_full_scale_gets_the_clusters_it_joins():
    sc = load_scenario(REPO / "scenarios" / "hdfs-s3-juicefs.yaml",
                       ["scale=full", "s3_bucket=mybucket", "s3_endpoint=https://s3.example:9000",
                        "juicefs_bucket=https://b2.example"])
    assert sc.targets["s3a"].settings.bucket == "mybucket"
    assert sc.targets["s3a"].settings.endpoint == "https://s3.example:9000"
    assert sc.targets["juicefs"].settings.bucket == "https://b2.example"


# -- shell commands -------------------------------------------------------------------------------------------

def test_a_set_value_in_a_shell_command_is_one_quoted_word(tmp_path):
    marker = tmp_path / "PWN"
    sc = load("sub: data", setup='["mkdir -p ${target.path}/${sub}"]', sets=[f"sub=x; touch {marker} $(id)"])
    (command,) = sc.targets["t"].setup
    assert command == f"mkdir -p ${{target.path}}/'x; touch {marker} $(id)'"
    script = render(command, {"target.path": str(tmp_path / "t t")})
    subprocess.run(["/bin/sh", "-e", "-c", script], check=True)
    assert not marker.exists() and (tmp_path / "t t" / f"x; touch {marker} $(id)").is_dir()


def test_ordinary_values_render_unchanged_and_a_list_gives_several_words():
    sc = load("""\
        sub: data-1.2_x
        opts: [-o, allow_other, "a b"]
        url: https://oss.example:443/b,c=d
        empty: ""
        """, setup='["mount ${opts} ${url} ${target.path}/${sub} ${empty}"]')
    assert sc.targets["t"].setup == ("mount -o allow_other 'a b' https://oss.example:443/b,c=d "
                                     "${target.path}/data-1.2_x ''",)


def test_run_time_placeholders_in_a_value_stay_for_the_run_to_quote():
    sc = load('dir: "${run.scratch}/my dir"', setup='["mkdir -p ${dir}"]')
    (command,) = sc.targets["t"].setup
    assert command == "mkdir -p ${run.scratch}'/my dir'"
    assert render(command, {"run.scratch": "/var/tmp/a b"}) == "mkdir -p '/var/tmp/a b''/my dir'"


def test_a_whole_command_from_a_variable_is_data_too():
    sc = load("cmd: touch /tmp/x; rm -rf /", setup="${cmd}")
    assert sc.targets["t"].setup == ("'touch /tmp/x; rm -rf /'",)


def test_shell_keys_of_services_collectors_and_fuse_mounts_are_quoted_too():
    text = """\
        name: v
        variables: {x: "a&b"}
        services:
          s: {start: ["run ${x}"], ready: "probe ${x}", stop: "halt ${x}"}
        collectors:
          c: {command: "watch ${x}"}
        targets:
          t:
            path: /srv/bench/t
            kind: fuse
            client_process: goofys
            services: [s]
            fuse: {mount: "goofys ${x} ${target.path}", unmount: "umount ${x}"}
        workloads:
          w: {tool: fio, options: {rw: write, size: 1m, description: "${x}"}}
        """
    sc = load_scenario_text(textwrap.dedent(text), "s.yaml")
    assert sc.workloads["w"].options["description"] == "a&b"  # not shell: the value as it is (fio refuses ; and #)
    svc = sc.services["s"]
    assert (svc.start, svc.ready, svc.stop) == (("run 'a&b'",), "probe 'a&b'", ("halt 'a&b'",))
    assert sc.collectors["c"].command == "watch 'a&b'"
    fuse = sc.targets["t"].settings
    assert (fuse.mount, fuse.unmount) == ("goofys 'a&b' ${target.path}", "umount 'a&b'")


def test_shell_words():
    assert shell_words("plain-1.0") == "plain-1.0"
    assert shell_words("it's") == "'it'\"'\"'s'"
    assert shell_words(["a b", 3, True]) == "'a b' 3 True"
    assert shell_words("${secrets.pw}x y") == "${secrets.pw}'x y'"


# -- --set values -----------------------------------------------------------------------------------------------

def test_set_values_are_scalars_read_with_the_bounded_reader():
    assert parse_set(["n=30", "s=full", "e=", "l=[1, 2]", "bad=a: b: c"]) == {
        "n": 30, "s": "full", "e": "", "l": "[1, 2]", "bad": "a: b: c"}
    with pytest.raises(ScenarioError, match="nested more than 64 levels"):
        parse_set(["deep=" + "[" * 60_000 + "]" * 60_000])
    with pytest.raises(ScenarioError, match="expected KEY=VALUE"):
        parse_set(["novalue"])
