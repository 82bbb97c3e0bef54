"""vdbench's parameter file from a scenario: nothing a key or value holds can start another parameter or
definition, commands and other hosts need `allow_commands`, paths stay in the case folder, durations
with units are whole seconds, and a formatting first run definition gets its format pass apart."""

from __future__ import annotations

import pytest

from fsbench.api.tools import BuildContext, HostInfo
from fsbench.core.errors import ScenarioError
from fsbench.run.plan_show import describe_case
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.plan import plan_cases
from fsbench.tools.vdbench.adapter import PARMFILE, PLUGIN

HEAD = "name: s\ntargets:\n  t: {path: /srv/bench/t}\nworkloads:\n  v:\n    tool: vdbench\n"
JOBS = ("    jobs:\n"
        "      fsd1: {depth: 1, width: 2, files: 4, size: 4k}\n"
        "      fwd1: {fsd: fsd1, operation: read, xfersize: 4k, threads: 1}\n")  # lines 8-9; rd1 on 10


def _issues(text: str) -> str:
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(text, "s.yaml")
    return str(err.value)


def _cases(text: str):
    return plan_cases(load_scenario_text(text, "s.yaml"))


def _show(text: str) -> str:
    sc = load_scenario_text(text, "s.yaml")
    return describe_case(sc, plan_cases(sc)[0])


@pytest.mark.parametrize("rd, where, what", [
    ('{fwd: fwd1, elapsed: 1, "x\\nrd": y}', "rd1.x", r"parameter name 'x\nrd' is not a plain word"),
    ('{fwd: fwd1, elapsed: 1, "fwd=fwd1,start_cmd": x}', "rd1.fwd=fwd1,start_cmd",
     "vdbench would read ',' '=' as parameter-file syntax"),
    ('{fwd: fwd1, elapsed: 1, "fwd start_cmd": x}', "rd1.fwd start_cmd", "vdbench would read ' '"),
    ('{fwd: "fwd1,start_cmd=touch /tmp/x", elapsed: 1}', "rd1.fwd", "' ' ',' '=' would change the parameter"),
    ('{fwd: fwd1, elapsed: 1, interval: "1 rd=rd2"}', "rd1.interval", "not a whole number of seconds"),
    ('{fwd: fwd1, elapsed: 1, openflags: "o_sync)"}', "rd1.openflags", "')' would change"),
    ('{fwd: fwd1, elapsed: 1, openflags: "$lun"}', "rd1.openflags", "'$' would change"),
    ('{fwd: fwd1, elapsed: 1, include: /etc/passwd}', "rd1.include", "include= reads another parameter file"),
])
def test_keys_and_values_cannot_start_another_parameter(rd, where, what):
    text = _issues(HEAD + JOBS + f"      rd1: {rd}\n")
    assert f"s.yaml:10: workloads.v.jobs.{where}" in text and what in text, text


def test_definition_names_and_count_copies_are_refused():
    text = _issues(HEAD + JOBS + "      rd1: {fwd: fwd1, elapsed: 1}\n      fsd-2: {depth: 1}\n"
                                 "      fsd3: {count: 4, depth: 1}\n")
    assert "s.yaml:11: workloads.v.jobs.fsd-2: definition name 'fsd-2' has characters vdbench reads as syntax" in text
    assert "s.yaml:12: workloads.v.jobs.fsd3.count: count= makes numbered copies" in text


@pytest.mark.parametrize("where, line, body, written", [
    ("rd1.start_cmd", 10, "      rd1: {fwd: fwd1, elapsed: 1, start_cmd: touch /tmp/x}\n", 'start_cmd="touch /tmp/x"'),
    ("rd1.endcmd", 10, "      rd1: {fwd: fwd1, elapsed: 1, endcmd: touch /tmp/x}\n", 'endcmd="touch /tmp/x"'),
    ("hd1.mount", 11, "      rd1: {fwd: fwd1, elapsed: 1}\n      hd1: {system: local, mount: mount x /y}\n",
     'hd=hd1,system=local,mount="mount x /y"'),
    ("hd1.shell", 11, "      rd1: {fwd: fwd1, elapsed: 1}\n      hd1: {system: local, shell: vdbench}\n",
     "hd=hd1,system=local,shell=vdbench"),
    ("hd1.vdbench", 11, "      rd1: {fwd: fwd1, elapsed: 1}\n      hd1: {vdbench: /tmp/evil}\n",
     "hd=hd1,vdbench=/tmp/evil"),
    ("hd1.user", 11, "      rd1: {fwd: fwd1, elapsed: 1}\n      hd1: {user: root}\n", "hd=hd1,user=root"),
    ("hd1.system", 11, "      rd1: {fwd: fwd1, elapsed: 1}\n      hd1: {system: otherhost.example}\n",
     "hd=hd1,system=otherhost.example"),
])
def test_parameters_that_run_commands_or_reach_other_hosts_need_the_opt_in(where, line, body, written):
    text = _issues(HEAD + JOBS + body)
    assert f"s.yaml:{line}: workloads.v.jobs.{where}:" in text and "allow_commands: true" in text, text
    # opted in: the parameter file (which plan --show prints) carries them
    shown = _show(HEAD + "    allow_commands: true\n" + JOBS + body)
    assert f"{written}\n" in shown


def test_an_opted_in_command_is_quoted_in_the_parameter_file():
    shown = _show(HEAD + "    allow_commands: true\n    options: {start_cmd: uname -a, data_errors: collect.sh}\n"
                  + JOBS + "      rd1: {fwd: fwd1, elapsed: 1, end_cmd: echo done}\n")
    assert "| * runs commands (allow_commands): start_cmd, data_errors, rd1.end_cmd" in shown
    assert '| start_cmd="uname -a"\n' in shown and '| data_errors="collect.sh"\n' in shown
    assert 'rd=rd1,fwd=fwd1,elapsed=1,end_cmd="echo done"' in shown
    text = _issues(HEAD + "    options: {data_errors: collect.sh}\n" + JOBS + "      rd1: {fwd: fwd1}\n")
    assert "s.yaml:7: workloads.v.options.data_errors: data_errors=collect.sh runs a command" in text
    load_scenario_text(HEAD + "    options: {data_errors: 5}\n" + JOBS + "      rd1: {fwd: fwd1}\n", "s.yaml")


def test_an_hd_on_the_target_s_own_host_needs_no_opt_in():
    text = HEAD + JOBS + "      rd1: {fwd: fwd1, elapsed: 1}\n      hd1: {system: localhost, jvms: 2}\n"
    assert "hd=hd1,system=localhost,jvms=2" in _show(text)


def test_a_target_path_with_parameter_file_syntax_is_refused_for_vdbench():
    text = _issues("name: s\ntargets:\n  t: {path: '/srv/v,anchor=/etc'}\nworkloads:\n  v:\n    tool: vdbench\n"
                   + JOBS + "      rd1: {fwd: fwd1}\n")
    assert "s.yaml:5: workloads.v.options: target t's path /srv/v,anchor=/etc contains ',' '='" in text
    assert "the anchor would end there" in text


def test_journal_folders_stay_in_the_case_folder():
    text = _issues(HEAD + "    options: {journal: /tmp/j}\n" + JOBS.replace("files: 4, size: 4k", "files: 4, size: 4k, journal: /tmp/j")
                   + "      rd1: {fwd: fwd1}\n")
    assert "s.yaml:7: workloads.v.options.journal: journal=/tmp/j: the general journal= takes" in text
    assert "s.yaml:9: workloads.v.jobs.fsd1.journal: journal=/tmp/j is a folder outside the case folder: " \
           "it is absolute" in text
    shown = _show(HEAD + "    options: {journal: yes}\n" + JOBS.replace("files: 4, size: 4k", "files: 4, size: 4k, journal: jnl")
                  + "      rd1: {fwd: fwd1}\n")
    assert "journal=/srv/bench/t/fsbench-<run-id>-<random>/t__v__r1/jnl," in shown and "| journal=yes" in shown


def test_durations_with_units_plan_and_are_written_in_seconds():
    text = HEAD + JOBS + "      rd1: {fwd: fwd1, format: no, elapsed: 1m, warmup: 30s, interval: 1}\n"
    case = _cases(text)[0]
    assert case.estimate_s == 95.0  # 60 + 30 + 5 of start-up
    assert "rd=rd1,fwd=fwd1,format=no,elapsed=60,warmup=30,interval=1" in _show(text)
    bad = _issues(HEAD + JOBS + "      rd1: {fwd: fwd1, elapsed: 1.5s}\n")
    assert "s.yaml:10: workloads.v.jobs.rd1.elapsed: elapsed='1.5s' is not a whole number of seconds" in bad


def test_a_formatting_first_run_definition_gets_its_format_pass_apart():
    text = HEAD + "    options: {data_errors: 1}\n" + JOBS + \
        "      rd1: {fwd: fwd1, fwdrate: max, format: restart, elapsed: 60, interval: 1}\n" \
        "      rd2: {fwd: fwd1, fwdrate: max, format: restart, elapsed: 60, interval: 1}\n"
    case = _cases(text)[0]
    assert case.prepare and case.drop_caches
    ctx = BuildContext({"local": HostInfo("local", "127.0.0.1")})
    prep = PLUGIN.prepare(case, "/d", ctx)
    assert prep is not None and prep.argv == ["vdbench", "-f", "parmfile", "-o", "output"]
    assert prep.files[PARMFILE].splitlines()[1:] == [
        "data_errors=1",
        "fsd=fsd1,depth=1,width=2,files=4,size=4k,anchor=/d",
        "fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k,threads=1",
        "rd=rd1,fwd=fwd1,interval=1,fwdrate=max,format=(restart,only)",
    ]
    run = PLUGIN.build(case, "/d", ctx).files[PARMFILE].splitlines()
    # the measured run uses the files as they are; a later run definition keeps its own format
    assert run[-2:] == ["rd=rd1,fwd=fwd1,fwdrate=max,format=no,elapsed=60,interval=1",
                        "rd=rd2,fwd=fwd1,fwdrate=max,format=restart,elapsed=60,interval=1"]
    shown = _show(text)
    assert shown.index("-- prepare") < shown.index("-- drop the page cache") < shown.index("-- run (timed")
    yes = _cases(text.replace("format: restart", "format: true"))[0]
    assert "format=only" in PLUGIN.prepare(yes, "/d", ctx).files[PARMFILE]


@pytest.mark.parametrize("change", [
    ("format: restart, elapsed: 60, interval: 1}\n      rd2", "format: only, elapsed: 60, interval: 1}\n      rd2"),
    ("format: restart, elapsed: 60, interval: 1}\n      rd2", "format: no, elapsed: 60, interval: 1}\n      rd2"),
    ("format: restart, elapsed: 60, interval: 1}\n      rd2", "format: restart, forfiles: 8}\n      rd2"),
    ("    jobs:", "    options: {validate: yes}\n    jobs:"),
    ("    jobs:", "    prepare: none\n    jobs:"),
])
def test_no_format_pass_where_it_would_not_be_the_same_run(change):
    text = (HEAD + JOBS + "      rd1: {fwd: fwd1, fwdrate: max, format: restart, elapsed: 60, interval: 1}\n"
            "      rd2: {fwd: fwd1, format: yes}\n").replace(*change)
    case = _cases(text)[0]
    ctx = BuildContext({"local": HostInfo("local", "127.0.0.1")})
    assert not case.prepare and "-- prepare" not in _show(text)
    # the run keeps every format inside itself, as the user's definitions say
    assert PLUGIN.build(case, "/d", ctx).files[PARMFILE] == PLUGIN.parameter_file(case, "/d")


def test_no_format_pass_on_a_device():
    case = _cases(HEAD + JOBS + "      rd1: {fwd: fwd1, format: yes}\n")[0]
    ctx = BuildContext({"local": HostInfo("local", "127.0.0.1")}, address="device")
    assert PLUGIN.prepare(case, "/dev/x", ctx) is None
    assert "format=yes" in PLUGIN.build(case, "/dev/x", ctx).files[PARMFILE]


def test_across_hosts_fsbench_s_hd_lines_follow_the_general_parameters():
    case = _cases(HEAD + "    options: {data_errors: 1}\n" + JOBS + "      rd1: {fwd: fwd1, format: yes}\n")[0]
    hosts = {h: HostInfo(h, a) for h, a in (("a", "10.0.0.1"), ("b", "10.0.0.2"))}
    for inv in (PLUGIN.prepare(case, "/d", BuildContext(hosts)), PLUGIN.build(case, "/d", BuildContext(hosts))):
        lines = inv.files[PARMFILE].splitlines()
        assert lines[1:5] == ["data_errors=1", "hd=default,vdbench=/opt/vdbench,shell=ssh", "hd=a,system=10.0.0.1",
                              "hd=b,system=10.0.0.2"] and inv.controller
