"""Report templates are untrusted input (safety, round three): a template may show the report's data and no
more. Hostile templates in a --templates folder are refused with the file and the way out, and never run a
command (a marker file they try to create stays absent) or read a file outside their folder; a run directory
received from someone else cannot bring its own templates into a plain `fsbench report RUN`; summary.md shows
a title's HTML and links as text.

The run directories are built from genuine fio outputs (tests/e2e/test_example_scenarios.build_run); one test
runs a tiny real fio scenario to show that `fsbench run` uses its own report.templates, found beside the
scenario file whatever folder it runs in.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from fsbench.core.errors import FsbenchError
from fsbench.report import write_report
from tests.conftest import run_cli, write_scenario
from tests.e2e.test_example_scenarios import build_run
from tests.paths import REPO

QUICKSTART = REPO / "scenarios" / "quickstart.yaml"
SECRET = "ROOT-ONLY-SECRET-6f1d"

#: name -> (a hostile template, what its error says): each tries to create MARKER; the context's objects are
#: plain data, so a method of one is not there at all
ESCAPES = {
    "subclasses": ("{% for c in ''.__class__.__mro__[1].__subclasses__() %}{% if c.__name__ == 'Popen' %}"
                   "{{ c(['touch', MARKER]).wait() }}{% endif %}{% endfor %}", "may not"),
    "cycler globals": ("{{ cycler.__init__.__globals__.os.popen('touch ' ~ MARKER).read() }}", "may not"),
    "template reference": ("{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system("
                           "'touch ' ~ MARKER) }}", "may not"),
    "a context object's method": ("{{ floors.of.__func__.__globals__['__builtins__']['__import__']('os')"
                                  ".system('touch ' ~ MARKER) }}", "has no attribute 'of'"),
    "a list's append (data is read only)": ("{% set x = targets.append(MARKER) %}", "may not"),
}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return build_run(tmp_path_factory.mktemp("runs"), QUICKSTART, ["scale=smoke"])


@pytest.fixture
def secret(tmp_path) -> Path:
    """A root-only file outside every templates folder."""
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "secret.txt"
    path.write_text(f"{SECRET}\n")
    path.chmod(0o600)
    return path


def _folder(root: Path, main: str, **files: str) -> Path:
    root.mkdir(parents=True)
    (root / "report.html.j2").write_text('{% extends "fsbench/report.html.j2" %}{% block appendix %}' + main +
                                         "{% endblock %}")
    for name, text in files.items():
        if text.startswith("->"):
            (root / name).symlink_to(text[2:])
        else:
            (root / name).write_text(text)
    return root


@pytest.mark.parametrize("name", list(ESCAPES))
def test_a_template_cannot_reach_python_or_the_shell(tmp_path, run, name):
    marker = tmp_path / "pwned"
    template, says = ESCAPES[name]
    team = _folder(tmp_path / "team", template.replace("MARKER", repr(str(marker))))
    try:
        write_report(run, output=tmp_path / "out" / "report.html", templates=team)
        text = ""
    except FsbenchError as exc:
        text = str(exc)
    assert not marker.exists()
    assert "team/report.html.j2:1: " in text and says in text and "docs/report.md" in text, text
    assert not (tmp_path / "out" / "report.html").exists()


def test_a_template_folder_cannot_link_or_include_files_outside_it(tmp_path, run, secret):
    cases = {  # what the folder holds -> the file named in the error
        "link": ({"leak.txt": f"->{secret}"}, '{% include "leak.txt" %}', "leak.txt"),
        "linked folder": ({"sub": f"->{secret.parent}"}, '{% include "sub/secret.txt" %}', "sub"),
        "parent": ({}, '{% include "../outside/secret.txt" %}', "../outside/secret.txt"),
        "absolute": ({}, f'{{% include "{secret}" %}}', str(secret)),
        "through fsbench/": ({}, '{% include "fsbench/../../../../../../etc/hostname" %}', "fsbench/../"),
    }
    for name, (files, main, named) in cases.items():
        team = _folder(tmp_path / name.replace(" ", "-"), main, **files)
        out = tmp_path / "out" / name.replace(" ", "-") / "report.html"
        with pytest.raises(FsbenchError) as err:
            write_report(run, output=out, templates=team)
        assert named in str(err.value) and SECRET not in str(err.value), (name, str(err.value))
        assert not out.exists(), name
    # the folder's main template itself a link to the secret
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "report.html.j2").symlink_to(secret)
    bad = run_cli("report", str(run), "-o", str(tmp_path / "l" / "report.html"), "--templates", str(linked))
    assert bad.returncode == 2, bad.stderr
    assert "report.html.j2" in bad.stderr and "symbolic link" in bad.stderr and "copy" in bad.stderr
    assert SECRET not in bad.stderr + bad.stdout and not (tmp_path / "l" / "report.html").exists()


def test_a_fifo_in_a_template_folder_is_refused_at_once(tmp_path, run):
    team = _folder(tmp_path / "team", '{% include "pipe" %}')
    os.mkfifo(team / "pipe")  # no writer: an open that waited for one would hang the report for ever
    with pytest.raises(FsbenchError, match=r"team/pipe: not a template file \(.*a named pipe"):
        write_report(run, output=tmp_path / "o" / "report.html", templates=team)


def test_a_received_run_directory_cannot_bring_its_own_templates(tmp_path, run):
    """Its scenario.yaml names a hostile folder, relative (which once resolved against the current folder)."""
    marker = tmp_path / "pwned"
    data = yaml.safe_load((run / "scenario.yaml").read_text())
    data.setdefault("report", {})["templates"] = "house"
    received = tmp_path / "received"
    shutil.copytree(run, received, symlinks=True)  # as it arrives
    (received / "scenario.yaml").write_text(yaml.safe_dump(data))
    where = tmp_path / "cwd"
    _folder(where / "house", ESCAPES["cycler globals"][0].replace("MARKER", repr(str(marker))))
    proc = run_cli("report", str(received), cwd=where, check=True)
    assert not marker.exists()
    html = (received / "report.html").read_text()
    assert 'id="summary"' in html  # fsbench's own templates
    assert "report.templates" in proc.stderr and "--templates" in proc.stderr and "house" in proc.stderr


def test_fsbench_run_uses_its_scenarios_templates_beside_the_file_from_any_folder(tmp_path, fio):
    src = tmp_path / "src"
    _folder(src / "house", '<p id="ours">Decided by the storage team.</p>')
    scenario = write_scenario(src, f"""\
        name: tiny
        targets:
          t: {{path: {tmp_path}/t}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        report:
          templates: house
        """)
    (tmp_path / "t").mkdir()
    elsewhere = tmp_path / "elsewhere"
    _folder(elsewhere / "house", '<p id="cwd">from the working directory</p>')
    proc = run_cli("run", os.path.relpath(scenario, elsewhere), "-o", str(tmp_path / "out"), "--progress", "none",
                   cwd=elsewhere, check=True)
    html = Path(proc.stdout.splitlines()[-1]).read_text()
    assert 'id="ours"' in html and 'id="cwd"' not in html
    # a folder that is not there is refused before anything runs, not by a run ending without its report
    scenario.write_text(scenario.read_text().replace("templates: house", "templates: gone"))
    bad = run_cli("validate", str(scenario))
    assert bad.returncode == 3 and "report.templates" in bad.stderr and f"{src / 'gone'} is not a folder" in bad.stderr


def test_summary_md_shows_html_and_links_of_titles_as_text(tmp_path):
    hostile = QUICKSTART.read_text().replace(
        "application: a scratch area for build and test jobs on one machine",
        'application: "<script>alert(1)</script> [x](javascript:alert(1)) | a pipe"')
    scenario = tmp_path / "quickstart.yaml"
    scenario.write_text(hostile + "\nreport:\n  views:\n    - {view: table, workload: seq-write-1m, "
                        "title: '<img src=x onerror=alert(2)> [y](javascript:alert(3))'}\n"
                        "  conclusions: 'Ceph was substituted by <b>[z](javascript:alert(4))</b>.'\n")
    run = build_run(tmp_path / "runs", scenario, ["scale=smoke"])
    run_cli("report", str(run), "--markdown", check=True)
    for name in ("summary.md", "report.md"):
        md = (run / name).read_text()
        assert "alert(1)" in md and "alert(3)" in md and "alert(4)" in md, name  # the text is there, as text
        for raw in ("<script", "<img", "<b>", "](javascript:"):
            assert raw not in md, (name, raw)
        assert "&lt;script&gt;alert(1)&lt;/script&gt; &#91;x&#93;(javascript:alert(1))" in md, name
