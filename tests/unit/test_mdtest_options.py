"""mdtest options as mdtest 4.0.0 reads them: dashed keys, real names, files in the case folder, '@' in
target paths, and mpirun arguments beyond placing the ranks, each refused at validation with file:line."""

from __future__ import annotations

import shlex

import pytest
import yaml

from fsbench.api.tools import BuildContext, HostInfo
from fsbench.core.errors import ScenarioError
from fsbench.run.plan_show import describe_case
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.plan import plan_cases
from fsbench.tools.mdtest.adapter import PLUGIN

HEAD = "name: s\ntargets:\n  t: {path: /srv/bench/t}\nworkloads:\n  m:\n    tool: mdtest\n"


def _issues(text: str) -> str:
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(text, "s.yaml")
    return str(err.value)


def _show(text: str) -> str:
    sc = load_scenario_text(text, "s.yaml")
    return describe_case(sc, plan_cases(sc)[0])


def test_a_dashed_key_is_refused_with_how_to_write_it_also_as_a_sweep_axis():
    text = _issues(HEAD + "    options:\n      n: 10\n      --run-cmd-before-phase: touch /tmp/x\n"
                          "      --saveRankPerformanceDetails: /etc/x\n")
    assert "s.yaml:9: workloads.m.options.--run-cmd-before-phase: option '--run-cmd-before-phase' is written " \
           "with dashes" in text and "write it as `run-cmd-before-phase:`" in text
    assert "s.yaml:10: workloads.m.options.--saveRankPerformanceDetails: option '--saveRankPerformanceDetails'" in text
    swept = _issues(HEAD + "    options: {n: 10}\n    sweep:\n      product:\n"
                           "        -n: [1, 2]\n")
    assert "s.yaml:10: workloads.m.sweep.product.-n[0]: option '-n' is written with dashes" in swept


def test_option_names_follow_mdtest_4_0_s_own_list():
    load_scenario_text(HEAD + "    options: {n: 10, posix.odirect: true, verify-write: true, random-seed: 7,\n"
                              "              dataPacketType: i, B: 1, X: true}\n", "s.yaml")
    text = _issues(HEAD + "    options:\n      n: 10\n      dir: /tmp/x\n      K: true\n      savePerOpDataCSV: a.csv\n"
                          "      posix.odirect: 1\n      B: true\n")
    assert "s.yaml:9: workloads.m.options.dir: unknown mdtest option 'dir' (mdtest 4.0.0 has no --dir)" in text
    assert "unknown mdtest option 'K'" in text and "unknown mdtest option 'savePerOpDataCSV'" in text
    assert "s.yaml:12: workloads.m.options.posix.odirect: --posix.odirect is a switch: write `posix.odirect: " \
           "true`" in text
    # -B takes a value in 4.0.0: a bare -B would swallow the next argument (fsbench's -d)
    assert "s.yaml:13: workloads.m.options.B: -B takes a value" in text


def test_the_stonewall_file_stays_in_the_case_folder():
    text = _issues(HEAD + "    options:\n      n: 10\n      W: 1\n      x: /tmp/sw.status\n"
                          "      mpiio.hintsFileName: ../hints\n")
    assert "s.yaml:10: workloads.m.options.x: -x=/tmp/sw.status names a file outside the case folder on t: " \
           "it is absolute" in text
    assert "s.yaml:11: workloads.m.options.mpiio.hintsFileName: --mpiio.hintsFileName=../hints names a file " \
           "outside the case folder on t: it climbs out with '..'" in text
    shown = _show(HEAD + "    options: {n: 10, W: 1, x: sw.status, C: true}\n")
    assert "mdtest -n 10 -W 1 -x '/srv/bench/t/fsbench-<run-id>-<random>/t__m__r1/sw.status' -C " \
           "-d '/srv/bench/t/fsbench-<run-id>-<random>/t__m__r1'" in shown


def test_the_rank_csv_lands_in_raw_on_one_host_and_in_the_case_folder_across_hosts():
    sc = load_scenario_text(HEAD + "    options: {n: 10, tasks: 2, saveRankPerformanceDetails: ranks.csv}\n",
                            "s.yaml")
    case = plan_cases(sc)[0]
    one = PLUGIN.build(case, "/d", BuildContext({"a": HostInfo("a", "127.0.0.1", facts={"uid": "0"})}))
    assert one.outputs == ["ranks.csv"] and one.argv[-4:] == ["--saveRankPerformanceDetails", "ranks.csv", "-d", "/d"]
    hosts = {h: HostInfo(h, a, 2, facts={"uid": "0"}) for h, a in (("a", "10.0.0.1"), ("b", "10.0.0.2"))}
    two = PLUGIN.build(case, "/d", BuildContext(hosts, controller=HostInfo("c", "127.0.0.1", facts={"uid": "0"})))
    # Open MPI starts a remote rank in its home folder where mpirun's folder is missing: the case folder instead
    assert two.outputs == [] and "/d/ranks.csv" in two.argv


def test_an_at_sign_in_the_target_path_is_refused_for_mdtest():
    text = _issues("name: s\ntargets:\n  t: {path: '/srv/x@/etc'}\nworkloads:\n  m:\n    tool: mdtest\n"
                   "    options: {n: 2, u: true, tasks: 2}\n")
    assert "s.yaml:7: workloads.m.options: target t's path /srv/x@/etc contains '@': mdtest splits -d on '@'" in text
    # other tools keep such a target
    load_scenario_text("name: s\ntargets:\n  t: {path: '/srv/x@/etc'}\nworkloads:\n  f:\n    tool: fio\n"
                       "    options: {rw: write, size: 1m}\n", "s.yaml")


@pytest.mark.parametrize("args, why", [
    ('[--mca, plm_rsh_agent, /tmp/evil]', "sets the MCA parameter 'plm_rsh_agent'"),
    ('[--mca, mca_base_component_path, /tmp]', "sets the MCA parameter 'mca_base_component_path'"),
    ('[-x, "LD_PRELOAD=/tmp/e.so"]', "sets LD_PRELOAD"),
    ('[-x, "OMPI_MCA_plm_rsh_agent=/tmp/e"]', "sets OMPI_MCA_plm_rsh_agent"),
    ('[-x, HOME]', "exports 'HOME' from this machine's environment"),
    ('[":", -np, "1", /tmp/evil]', "starts another program (MPMD)"),
    ('[--wdir, /]', "'--wdir' is not one of the options allowed"),
    ('[--bind-to, --wdir, /]', "'--bind-to' needs 1 value(s) after it"),
    ('[--hostfile, /tmp/h]', "'--hostfile' is not one of the options allowed"),
    ('[--mca, btl_openib_device_param_files, /tmp/x]', "btl_openib_device_param_files"),
])
def test_mpirun_args_beyond_placing_the_ranks_need_the_opt_in(args, why):
    body = HEAD + f"    options:\n      n: 10\n      tasks: 2\n      mpirun_args: {args}\n"
    text = _issues(body)
    assert "s.yaml:10: workloads.m.options.mpirun_args: mpirun argument" in text and why in text
    assert "allow_commands: true" in text
    # opted in, they run as written, and the plan shows them on the mpirun line
    shown = _show(body.replace("    options:", "    allow_commands: true\n    options:"))
    assert f"{shlex.join(str(a) for a in yaml.safe_load(args))} mdtest -n 10" in shown


def test_mpirun_args_that_place_and_connect_ranks_need_no_opt_in_and_show_in_the_plan():
    shown = _show(HEAD + '    options:\n      n: 10\n      tasks: 2\n      mpirun_args: [--bind-to, core, --map-by, '
                         'node, --mca, btl, "self,tcp", --mca, btl_tcp_if_include, lo, -mca, oob_tcp_if_include, lo, '
                         '-x, "OMP_NUM_THREADS=1", --display-map, --report-bindings]\n')
    assert "--bind-to core --map-by node --mca btl self,tcp --mca btl_tcp_if_include lo -mca oob_tcp_if_include lo " \
           "-x OMP_NUM_THREADS=1 --display-map --report-bindings mdtest -n 10" in shown
    assert "mpirun_args must be a list" in _issues(HEAD + "    options: {n: 1, mpirun_args: --oversubscribe}\n")


def test_an_opted_in_command_shows_in_the_plan():
    shown = _show(HEAD + "    allow_commands: true\n    options: {n: 10, run-cmd-before-phase: sync}\n")
    assert "mdtest -n 10 --run-cmd-before-phase sync -d" in shown
