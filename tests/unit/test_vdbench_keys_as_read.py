"""Every vdbench check holds however a key is spelt: vdbench reads `LUN`, `lu` and `lun` alike, `sta` as
start_cmd, so fsbench checks the keyword a key stands for, refuses keys that stand for none or several, and
refuses `binary` values and target paths that would change the parameter file or what vdbench makes of it."""

from __future__ import annotations

import pytest

from fsbench.api.tools import BuildContext, CheckContext, CheckTarget, HostInfo
from fsbench.core.errors import ScenarioError
from fsbench.run.plan_show import describe_case
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.plan import plan_cases
from fsbench.tools.vdbench.adapter import PARMFILE, PLUGIN
from fsbench.tools.vdbench.parmcheck import check

HEAD = "name: s\ntargets:\n  t: {path: /srv/bench/t}\nworkloads:\n  v:\n    tool: vdbench\n"
JOBS = ("    jobs:\n"
        "      fsd1: {depth: 1, width: 2, files: 4, size: 4k}\n"
        "      fwd1: {fsd: fsd1, operation: read, xfersize: 4k, threads: 1}\n")  # lines 8-9; rd1 on 10


def _issues(text: str) -> str:
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(text, "s.yaml")
    return str(err.value)


def _show(text: str) -> str:
    sc = load_scenario_text(text, "s.yaml")
    return describe_case(sc, plan_cases(sc)[0])


@pytest.mark.parametrize("line, where, what", [
    ("      sd1: {LUN: /dev/sda, size: 1m}\n", "sd1.LUN", "an sd lun (a raw device or file) at /dev/sda is outside"),
    ("      sd1: {lu: /dev/sda, size: 1m}\n", "sd1.lu", "an sd lun (a raw device or file) at /dev/sda is outside"),
    ("      fsd2: {ANCHOR: /data, files: 1}\n", "fsd2.ANCHOR", "an fsd anchor at /data is outside the case folder"),
    ("      fsd2: {jou: /etc, files: 1}\n", "fsd2.jou", "journal=/etc is a folder outside the case folder: it is "
                                                         "absolute"),
    ("      fsd2: {COUNT: 4, files: 1}\n", "fsd2.COUNT", "count= makes numbered copies"),
    ("      hd1: {SYSTEM: otherhost.example}\n", "hd1.SYSTEM", "system=otherhost.example: runs vdbench's slaves on "
                                                               "otherhost.example"),
    ("      hd1: {SHELL: rsh}\n", "hd1.SHELL", "shell=rsh: says how vdbench starts a program on that host"),
    ("      hd1: {VDBENCH: /tmp/evil}\n", "hd1.VDBENCH", "vdbench=/tmp/evil: says how vdbench starts a program"),
    ("      hd1: {us: root}\n", "hd1.us", "user=root: says how vdbench starts a program on that host"),
    ("      hd1: {Mount: mount x /y}\n", "hd1.Mount", "mount=mount x /y runs a command on the hosts"),
    ("      wd1: {sd: sd1, USER: Evil}\n", "wd1.USER", "user=Evil loads a Java class of yours into vdbench"),
])
def test_checks_hold_whatever_case_or_abbreviation(line, where, what):
    text = _issues(HEAD + JOBS + "      rd1: {fwd: fwd1, elapsed: 1}\n" + line)
    assert f"s.yaml:11: workloads.v.jobs.{where}: {what}" in text, text


@pytest.mark.parametrize("rd, where, what", [
    ("sta: /tmp/evil.sh", "rd1.sta", "start_cmd=/tmp/evil.sh runs a command on the hosts"),
    ("START_CMD: /tmp/evil.sh", "rd1.START_CMD", "start_cmd=/tmp/evil.sh runs a command on the hosts"),
    ("endc: /tmp/evil.sh", "rd1.endc", "end_cmd=/tmp/evil.sh runs a command on the hosts"),
    ("MOUNT: noatime", "rd1.MOUNT", "mount=noatime runs a command on the hosts"),
    ("st: x", "rd1.st", "'st' is ambiguous: vdbench reads a keyword by its first letters, and stopcurve, "
                        "start_cmd all begin with 'st'"),
    ("xfersise: 4k", "rd1.xfersise", "vdbench has no run (rd) parameter 'xfersise'"),
    ("rd: rd2", "rd1.rd", "rd= would start a new definition in the parameter file"),
    ("ELAPSED: 1.5s", "rd1.ELAPSED", "elapsed='1.5s' is not a whole number of seconds"),
])
def test_run_definition_keys_are_read_as_vdbench_reads_them(rd, where, what):
    text = _issues(HEAD + JOBS + f"      rd1: {{fwd: fwd1, {rd}}}\n")
    assert f"s.yaml:10: workloads.v.jobs.{where}: {what}" in text, text


def test_an_unknown_key_gets_a_did_you_mean():
    text = _issues(HEAD + JOBS.replace("xfersize: 4k", "xfersise: 4k") + "      rd1: {fwd: fwd1}\n")
    assert "s.yaml:9: workloads.v.jobs.fwd1.xfersise: vdbench has no file system workload (fwd) parameter " \
           "'xfersise'\n    -> did you mean xfersizes?" in text, text


@pytest.mark.parametrize("options, what", [
    ("{START_CMD: /tmp/evil.sh}", "options.START_CMD: start_cmd=/tmp/evil.sh runs a command on the hosts"),
    ("{Data_Errors: collect.sh}", "options.Data_Errors: data_errors=collect.sh runs a command on the hosts"),
    ("{JOURNAL: /etc}", "options.JOURNAL: journal=/etc: the general journal= takes"),
    ("{sta: x}", "options.sta: unknown vdbench option 'sta'"),
    ("{compratio: 2}", "options.compratio: unknown vdbench option 'compratio' (vdbench's compratio=)"),
])
def test_general_options_are_read_as_vdbench_reads_them(options, what):
    text = _issues(HEAD + f"    options: {options}\n" + JOBS + "      rd1: {fwd: fwd1}\n")
    assert f"s.yaml:7: workloads.v.{what}" in text, text


def test_opted_in_keys_are_written_in_lower_case_and_listed_as_vdbench_reads_them():
    text = HEAD + "    allow_commands: true\n    options: {Start_Cmd: uname -a}\n" + JOBS.replace(
        "size: 4k}", "size: 4k, JOU: jnl}") + "      rd1: {FWD: fwd1, FwdRate: max, ELAPSED: 1m, sta: echo go, " \
                                              "Interval: 1}\n      hd1: {SYS: localhost, SH: ssh}\n"
    lines = [line.strip("| ") for line in _show(text).splitlines() if line.startswith("   | ")]
    assert lines[1:] == [
        "* runs commands (allow_commands): start_cmd, rd1.sta (start_cmd), hd1.SH (shell)",
        'start_cmd="uname -a"',
        "hd=hd1,sys=localhost,sh=ssh",
        "fsd=fsd1,depth=1,width=2,files=4,size=4k,jou=/srv/bench/t/fsbench-<run-id>-<random>/t__v__r1/jnl,"
        "anchor=/srv/bench/t/fsbench-<run-id>-<random>/t__v__r1",
        "fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k,threads=1",
        'rd=rd1,fwd=fwd1,fwdrate=max,elapsed=60,sta="echo go",interval=1',
    ], lines


@pytest.mark.parametrize("spelling", ["FORMAT: restart", "form: restart", "Format: yes"])
def test_the_format_pass_finds_format_however_it_is_spelt(spelling):
    text = HEAD + JOBS + f"      rd1: {{FWD: fwd1, fwdrate: max, {spelling}, elapsed: 60, Interval: 1}}\n"
    case = plan_cases(load_scenario_text(text, "s.yaml"))[0]
    ctx = BuildContext({"local": HostInfo("local", "127.0.0.1")})
    prep = PLUGIN.prepare(case, "/d", ctx)
    assert prep is not None and case.prepare
    assert prep.files[PARMFILE].splitlines()[-1].startswith("rd=rd1,fwd=fwd1,interval=1,fwdrate=max,format=")
    run = PLUGIN.build(case, "/d", ctx).files[PARMFILE].splitlines()
    assert run[-1] == "rd=rd1,fwd=fwd1,fwdrate=max,format=no,elapsed=60,interval=1"


@pytest.mark.parametrize("change", [
    ("    jobs:", "    options: {VALIDATE: yes}\n    jobs:"),
    ("    jobs:", "    options: {val: yes}\n    jobs:"),
    ("size: 4k}", "size: 4k, JOURNAL: jnl}"),
    ("elapsed: 60", "forFILES: 8, elapsed: 60"),
])
def test_no_format_pass_with_validation_journal_or_structure_loops_however_spelt(change):
    text = (HEAD + JOBS + "      rd1: {fwd: fwd1, fwdrate: max, format: restart, elapsed: 60, interval: 1}\n"
            ).replace(*change)
    case = plan_cases(load_scenario_text(text, "s.yaml"))[0]
    assert not case.prepare
    assert PLUGIN.prepare(case, "/d", BuildContext({"local": HostInfo("local", "127.0.0.1")})) is None


@pytest.mark.parametrize("binary, what", [
    ('"/opt/vd,shell=rsh,system=evilhost.example,vdbench=/tmp/evil/vdbench"', "',' '=' cannot stand in a path"),
    ('"/opt/my vdbench/vdbench"', "' ' cannot stand in a path"),
    ('"/opt/vd{1}/vdbench"', "'{' '}' cannot stand in a path"),
    ("[a, b]", "expected the path of the vdbench script"),
])
def test_binary_is_a_plain_path(binary, what):
    text = _issues(HEAD + f"    options: {{binary: {binary}}}\n" + JOBS + "      rd1: {fwd: fwd1}\n")
    assert "s.yaml:7: workloads.v.options.binary: binary=" in text and what in text, text


def test_across_hosts_the_vdbench_folder_is_binary_s_folder_or_the_deploy_home():
    hosts = BuildContext({h: HostInfo(h, a) for h, a in (("a", "10.0.0.1"), ("b", "10.0.0.2"))})
    for binary, home in (("/opt/vd-5.04/vdbench", "/opt/vd-5.04"), ("vdbench", "/opt/vdbench")):
        text = HEAD + f"    options: {{binary: {binary}}}\n" + JOBS + "      rd1: {fwd: fwd1}\n"
        case = plan_cases(load_scenario_text(text, "s.yaml"))[0]
        inv = PLUGIN.build(case, "/d", hosts)
        assert inv.argv[0] == binary and f"hd=default,vdbench={home},shell=ssh" in inv.files[PARMFILE].splitlines()


@pytest.mark.parametrize("path, what", [
    ("/srv/a[b}c", "contains '[' '}': vdbench turns '[' '}' into ' ' '-', so vdbench would work in another folder"),
    ("/srv/a^b", "contains '^': vdbench turns '^' into ','"),
    ("/srv/a{b", "contains '{': vdbench turns '{' into '='"),
])
def test_a_target_path_vdbench_would_rewrite_is_refused(path, what):
    text = _issues(f"name: s\ntargets:\n  t: {{path: '{path}'}}\nworkloads:\n  v:\n    tool: vdbench\n"
                   + JOBS + "      rd1: {fwd: fwd1}\n")
    assert f"s.yaml:5: workloads.v.options: target t's path {path} {what}" in text, text


@pytest.mark.parametrize("rd, line, what", [
    ("{fwd: fwd1, openflags: 'o_{sync}'}", 11, "openflags=o_{sync}: '{' '}' would change the parameter file's "
                                               "meaning (vdbench turns '{' '}' into '=' '-')"),
    ("{fwd: fwd1, sta: 'echo x{1}'}", 11, "start_cmd: vdbench would run another command (vdbench turns '{' '}' "
                                             "into '=' '-')"),
    ("{fwd: fwd1, end_cmd: 'ls [ab]'}", 11, "end_cmd: vdbench would run another command (vdbench turns '[' into"),
])
def test_values_vdbench_would_rewrite_are_refused(rd, line, what):
    text = _issues(HEAD + "    allow_commands: true\n" + JOBS + f"      rd1: {rd}\n")
    assert f"s.yaml:{line}: workloads.v.jobs.rd1." in text and what in text, text
    journal = _issues(HEAD + JOBS.replace("size: 4k}", "size: 4k, journal: 'j[1]'}") + "      rd1: {fwd: fwd1}\n")
    assert "s.yaml:8: workloads.v.jobs.fsd1.journal: journal=j[1] is a folder outside the case folder: it " \
           "contains '['" in journal


def test_target_hosts_that_would_break_an_hd_line_are_refused():
    ctx = CheckContext(targets=(CheckTarget("t", "/srv/t"),), target_hosts={"t": frozenset({"h1,shell=rsh", "[fe80::1]"})})
    issues = check({}, {"fsd1": {"files": 1}, "fwd1": {"fsd": "fsd1"}, "rd1": {"fwd": "fwd1"}}, ctx)
    assert [i.message for i in issues] == [
        "target t's host [fe80::1] contains '[', which cannot stand in vdbench's hd= lines",
        "target t's host h1,shell=rsh contains ',' '=', which cannot stand in vdbench's hd= lines"]
