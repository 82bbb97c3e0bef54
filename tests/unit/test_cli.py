"""The command line reads tools' flags and names from the registry; --case selects exactly; --show shows targets."""

from __future__ import annotations

import textwrap

from click.testing import CliRunner

from fsbench.cli import main
from fsbench.tools import tool_names

SCENARIO = """\
name: cli
variables: {sub: data}
targets:
  t:
    path: /srv/bench/t
    setup: ["mkdir -p ${target.path}/${sub}"]
    teardown: ["rm -rf ${target.path}/${sub}"]
workloads:
  w:
    tool: fio
    options: {rw: write, size: 1m}
    sweep: {product: {numjobs: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}}
"""


def _scenario(tmp_path, text: str = SCENARIO):
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_deploy_flags_are_the_tools_own_and_become_their_overrides(tmp_path, monkeypatch):
    import fsbench.campaign

    seen = {}

    def deploy_tools(path, sets, inventory, overrides):
        seen.update(overrides)
        return []

    monkeypatch.setattr(fsbench.campaign, "deploy_tools", deploy_tools)
    zipfile = tmp_path / "vdbench.zip"
    zipfile.write_text("zip")
    result = CliRunner().invoke(main, ["deploy", _scenario(tmp_path), "--install", "--mdtest-method", "build",
                                       "--ior-source", "https://example/ior.tar.gz", "--vdbench-zip", str(zipfile)])
    assert result.exit_code == 0, result.output
    assert seen == {"install": True, "mdtest.method": "build", "mdtest.source": "https://example/ior.tar.gz",
                    "vdbench.zip": str(zipfile)}
    help_text = CliRunner().invoke(main, ["deploy", "--help"]).output
    assert "--mdtest-method [auto|upload|build]" in help_text and "--ior-source PATH|URL" in help_text
    bad = CliRunner().invoke(main, ["deploy", _scenario(tmp_path), "--vdbench-zip", str(tmp_path / "no.zip")])
    assert bad.exit_code == 2 and "does not exist" in bad.output


def test_ingest_help_names_every_registered_tool():
    text = " ".join(CliRunner().invoke(main, ["ingest", "--help"]).output.split())
    assert f"TOOL is one of {', '.join(tool_names())} " in text and "nnbench" in text


def test_a_case_number_selects_exactly_that_case(tmp_path):
    result = CliRunner().invoke(main, ["plan", _scenario(tmp_path), "--show", "--case", "1"])
    assert result.exit_code == 0, result.output
    shown = [line for line in result.output.splitlines() if line.startswith("== case")]
    assert shown == ["== case 1: t__w__numjobs=1__r1"]
    result = CliRunner().invoke(main, ["plan", _scenario(tmp_path), "--show", "--case", "t__w__numjobs=11__r1",
                                       "--case", "2"])
    assert [line for line in result.output.splitlines() if line.startswith("== case")] == [
        "== case 2: t__w__numjobs=2__r1", "== case 11: t__w__numjobs=11__r1"]


def test_a_case_that_is_not_there_is_an_error_with_near_ids(tmp_path):
    result = CliRunner().invoke(main, ["plan", _scenario(tmp_path), "--show", "--case", "numjobs=1__r1"])
    assert result.exit_code == 2
    assert "no case has the id 'numjobs=1__r1'" in result.output and "did you mean t__w__numjobs=1__r1?" in result.output
    result = CliRunner().invoke(main, ["plan", _scenario(tmp_path), "--show", "--case", "13"])
    assert result.exit_code == 2 and "there is no case 13: the plan's cases are numbered 1 to 12" in result.output


def test_plan_show_lists_the_targets_commands_as_they_will_run(tmp_path):
    result = CliRunner().invoke(main, ["plan", _scenario(tmp_path), "--show", "--case", "1",
                                       "--set", "sub=x; touch /tmp/PWN $(id)"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("== target t (directory) on local")
    assert lines[1:5] == ["-- setup:", "   $ mkdir -p /srv/bench/t/'x; touch /tmp/PWN $(id)'",
                          "-- teardown:", "   $ rm -rf /srv/bench/t/'x; touch /tmp/PWN $(id)'"]


def test_validate_warns_about_a_secret_written_in_the_file(tmp_path):
    text = SCENARIO.replace("  t:\n", "  t:\n    kind: juicefs\n    juicefs: {meta: 'redis://127.0.0.1/1', "
                                      "storage: s3, bucket: 'http://b', access_key: ak1, secret_key: sk1234}\n")
    result = CliRunner().invoke(main, ["validate", _scenario(tmp_path, text)])
    assert result.exit_code == 0, result.output
    assert "warning: " in result.output and "targets.t.juicefs.secret_key: a secret is written" in result.output
    assert "targets.t.juicefs.access_key" in result.output and "ok (1 targets, 1 workloads)" in result.output
