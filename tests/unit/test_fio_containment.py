"""Job files read as fio reads them, and no job or option doing I/O outside the case folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsbench.api.tools import CheckContext, CheckTarget
from fsbench.core.errors import ScenarioError
from fsbench.scenario.load import load_scenario, load_scenario_text
from fsbench.tools.fio.containment import TargetPlace, find_escapes, split_paths
from fsbench.tools.fio.jobfile import parse_jobfile, strip_comment

TARGET = [TargetPlace("t", "/srv/bench/t")]
DEVICE = [TargetPlace("disk", "/dev/loop7", destructive=True)]


def test_comments_are_cut_where_fio_cuts_them():
    assert strip_comment("runtime=3600  # one hour") == "runtime=3600"
    assert strip_comment("size=64k;nospace") == "size=64k"
    assert strip_comment("filename_format=a#b.$jobnum") == "filename_format=a"  # fio keeps "a" (checked)
    jf = parse_jobfile("; a comment\n# another\n[j]\nrw=read ; sequential\n\ntime_based # flag\n")
    assert jf.section("j") == {"rw": "read", "time_based": None}


def test_includes_and_environment_variables(tmp_path):
    (tmp_path / "common.fio").write_text("ioengine=libaio\ndirect=1\n")
    main = tmp_path / "main.fio"
    main.write_text("[global]\ninclude common.fio\nbs=${BS}\n[j]\nrw=read\nsize=${SIZE}\n")
    jf = parse_jobfile(main.read_text(), str(main), env={"BS": "4k"})
    glob = jf.section("global")
    assert glob == {"ioengine": "libaio", "direct": "1", "bs": "4k"}
    assert str(jf.origin("global", "direct")) == f"{tmp_path}/common.fio:2"
    assert jf.section("j")["size"] == "${SIZE}"
    assert [(str(o), m) for o, m in jf.problems] == [
        (f"{main}:6", "${SIZE} is not set in the environment (fio would read it there)")]


def test_an_include_loop_is_reported_not_followed_forever(tmp_path):
    loop = tmp_path / "loop.fio"
    loop.write_text("include loop.fio\n")
    jf = parse_jobfile(loop.read_text(), str(loop))
    assert jf.problems and "nest deeper" in jf.problems[0][1]


def test_an_include_of_a_device_or_a_huge_file_is_refused_unread(tmp_path):
    big = tmp_path / "big.fio"
    big.write_bytes(b"#" * (5 * 2**20))
    main = tmp_path / "main.fio"
    main.write_text("[global]\ninclude /dev/zero\ninclude big.fio\n[j]\nrw=read\n")
    jf = parse_jobfile(main.read_text(), str(main))
    assert [(str(o), m.split(":")[0]) for o, m in jf.problems] == [
        (f"{main}:2", "include /dev/zero"), (f"{main}:3", "include big.fio")]
    assert "not a regular file" in jf.problems[0][1] and "larger than 4 MiB" in jf.problems[1][1]


def test_split_paths_honours_escaped_colons():
    assert split_paths("a:b\\:c:/dev/sdb") == ["a", "b:c", "/dev/sdb"]


@pytest.mark.parametrize("line, why", [
    ("filename=/dev/sda", "(a device) is outside the case folder"),
    ("filename=/tmp/data", "is outside the case folder"),
    ("filename=../../escaped", "climbs out"),
    ("filename=ok:/etc/passwd", "/etc/passwd is outside"),
    ("directory=/data", "points outside the case folder"),
    ("directory=../up", "points outside"),
    ("filename_format=/tmp/$jobname", "points outside"),
    ("opendir=/srv", "reads files outside"),
    ("ioengine=sg", "addresses a device"),
    ("ioengine=rbd", "writes to an RBD image"),
    ("read_iolog=trace.log", "replays I/O"),
    ("ioscheduler=none", "changes the I/O scheduler"),
    ("write_bw_log=/tmp/bw", "writes its log outside"),
    ("mem=mmapshared:/dev/shm/x", "maps a file outside"),
    ("exec_prerun=rm -rf /", "runs a command"),
    ("ioengine=exec", "runs a command"),
    ("ioengine=external:/tmp/evil.so", "runs a command"),
])
def test_every_way_out_is_refused(line, why):
    jf = parse_jobfile(f"[job]\n{line}\n", "x.fio")
    escapes = find_escapes(jf, TARGET)
    assert len(escapes) == 1 and why in escapes[0].message, escapes
    assert str(escapes[0].origin) == "x.fio:2" and escapes[0].section == "job"


@pytest.mark.parametrize("line", ["filename=data", "filename=a:b", "directory=sub", "filename_format=f.$jobnum",
                                  "write_bw_log=bw", "ioengine=libaio", "ioengine=filecreate", "mem=mmap"])
def test_what_stays_inside_is_allowed(line):
    assert find_escapes(parse_jobfile(f"[job]\n{line}\n"), TARGET) == []


def test_a_destructive_target_may_be_written_raw_but_only_itself():
    assert find_escapes(parse_jobfile("[j]\nfilename=/dev/loop7\nioengine=sg\n"), DEVICE) == []
    other = find_escapes(parse_jobfile("[j]\nfilename=/dev/sda\n"), DEVICE)
    assert len(other) == 1 and "/dev/sda" in other[0].message
    # a workload on a destructive and a plain target: the device is the plain one's outside
    assert find_escapes(parse_jobfile("[j]\nfilename=/dev/loop7\n"), DEVICE + TARGET)


def test_commands_allowed_only_on_request():
    jf = parse_jobfile("[j]\nexec_postrun=sync\n")
    assert find_escapes(jf, TARGET) and find_escapes(jf, TARGET, allow_commands=True) == []


def _scenario(tmp_path: Path, workload: str, target: str = "t: {path: /srv/bench/t}") -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(f"name: s\ntargets:\n  {target}\nworkloads:\n  w:\n{workload}")
    return path


def test_validation_names_the_job_file_line_and_option(tmp_path):
    (tmp_path / "bad.fio").write_text("[global]\nsize=1m\n\n[writer]\nrw=write\nfilename=/dev/sda\n")
    path = _scenario(tmp_path, "    tool: fio\n    job_file: bad.fio\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    text = str(err.value)
    assert f"{tmp_path}/bad.fio:6: workloads.w.job_file [writer] filename" in text
    assert "/dev/sda (a device) is outside the case folder on t" in text and "destructive: true" in text


def test_options_and_set_values_are_contained_too(tmp_path):
    path = _scenario(tmp_path, "    tool: fio\n    options: {rw: write, filename: '${where}'}\n")
    path.write_text("variables: {where: data}\n" + path.read_text())
    load_scenario(path)  # a relative name is fine
    with pytest.raises(ScenarioError) as err:
        load_scenario(path, ["where=/tmp/data"])
    assert "s.yaml:8: workloads.w.options.filename: filename=/tmp/data is outside" in str(err.value)


def test_every_sweep_value_is_checked_not_only_the_first():
    text = "name: s\ntargets: {t: {path: /srv/b}}\nworkloads:\n  w:\n    tool: fio\n    sweep:\n" \
           "      product: {bs: [4k, 4q]}\n"
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(text, "s.yaml")
    assert "s.yaml:7: workloads.w.sweep.product.bs[1]: bs='4q' is not a size" in str(err.value)


# -- engines: an allow list -----------------------------------------------------------------------------

def _engine(engine: str, targets: list[TargetPlace] = TARGET, **kw) -> list:
    return find_escapes(parse_jobfile(f"[j]\nrw=write\nioengine={engine}\n", "e.fio"), targets, **kw)


@pytest.mark.parametrize("engine", ["psync", "libaio", "io_uring", "mmap", "posixaio", "null", "filecreate",
                                    "dirstat", "falloc", "splice", "cpuio"])
def test_file_engines_are_allowed_everywhere(engine):
    assert _engine(engine) == []


@pytest.mark.parametrize("engine, why", [
    ("gfapi", "does its I/O on another system"),       # fio's own examples/gfapi.fio, built into this fio
    ("gfapi_async", "does its I/O on another system"),
    ("nbd", "does its I/O on another system"),
    ("net", "does its I/O on another system"),
    ("libblkio", "addresses a device"),
    ("/tmp/evil.so", "runs a command or loads code"),  # fio dlopens an engine given as a path
    ("evil.so", "runs a command or loads code"),
    ("external:/tmp/evil.so", "runs a command or loads code"),
    ("exec", "runs a command or loads code"),
    ("fancy_new_engine", "is not an engine fsbench knows"),
])
def test_other_engines_are_refused_on_a_plain_target_naming_it(engine, why):
    (escape,) = _engine(engine)
    assert why in escape.message and escape.message.endswith(" t"), escape
    assert str(escape.origin) == "e.fio:3" and escape.option == "ioengine"


def test_the_refusal_of_an_unknown_engine_lists_what_is_allowed_and_how_to_opt_in():
    (escape,) = _engine("fancy_new_engine")
    assert "psync" in escape.hint and "libaio" in escape.hint and "allow_commands: true" in escape.hint
    assert _engine("fancy_new_engine", allow_commands=True) == []


def test_allow_commands_lets_code_load_but_never_reaches_another_system():
    for engine in ("exec", "external:/x.so", "/x.so"):
        assert _engine(engine, allow_commands=True) == []
    assert _engine("gfapi", allow_commands=True) and _engine("libblkio", allow_commands=True)
    assert _engine("gfapi", DEVICE)  # nor does a destructive device


def test_a_device_engine_addresses_only_the_destructive_target_s_own_device():
    assert _engine("sg", DEVICE) == []  # fsbench sets filename to the device
    assert find_escapes(parse_jobfile("[j]\nioengine=xnvme\nfilename=/dev/loop7\n"), DEVICE) == []
    # a name that is not a path (an xnvme PCI address) or another device is refused, at the engine's line
    for other in ("0000\\:01\\:00.0", "/dev/nvme0n1"):
        escapes = find_escapes(parse_jobfile(f"[global]\nioengine=xnvme\n[j]\nfilename={other}\n", "d.fio"), DEVICE)
        assert any("addresses the device filename names" in e.message and str(e.origin) == "d.fio:2"
                   for e in escapes), escapes
    blkio = parse_jobfile("[j]\nioengine=libblkio\nlibblkio_path=/dev/sdb\n")
    assert any("addresses the device libblkio_path names" in e.message for e in find_escapes(blkio, DEVICE))


# -- rbd-image targets: the target's own image only -----------------------------------------------------

IMAGE = [TargetPlace("img", "/fsbench-img", kind="rbd-image",
                     rbd=(("pool", "rbd"), ("rbdname", "fsbench-img"), ("clientname", "admin")))]


def test_a_job_section_cannot_send_the_rbd_engine_to_another_image():
    jf = parse_jobfile("[global]\nrw=randwrite\n[j]\nrbdname=prod-image\npool=prod\nclientname=admin\n"
                       "clustername=other\n", "rbd.fio")
    escapes = find_escapes(jf, IMAGE)
    assert [(e.option, str(e.origin)) for e in escapes] == [("rbdname", "rbd.fio:4"), ("pool", "rbd.fio:5"),
                                                            ("clustername", "rbd.fio:7")]
    assert "elsewhere than target img's image (its rbdname is fsbench-img)" in escapes[0].message
    assert "it sets no clustername" in escapes[2].message
    # the target's own values are fine (clientname=admin above was)
    assert find_escapes(parse_jobfile("[j]\nioengine=rbd\npool=rbd\nrbdname=fsbench-img\n"), IMAGE) == []


def test_scenario_jobs_cannot_send_the_rbd_engine_elsewhere_either(tmp_path):
    target = "img: {kind: rbd-image, path: /fsbench-img, rbd-image: {pool: rbd, image: fsbench-img}}"
    path = _scenario(tmp_path, "    tool: fio\n    options: {rw: randwrite, size: 4m}\n"
                               "    jobs: {j: {rbdname: prod-image, pool: rbd}}\n", target)
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert len(err.value.issues) == 1
    assert "workloads.w.jobs.j.rbdname: rbdname=prod-image sends fio's rbd engine elsewhere than target img" \
        in str(err.value)


# -- ${NAME} in paths, logs, host-level options ---------------------------------------------------------

@pytest.mark.parametrize("line", ["write_bw_log=${HOME}/bw", "filename=${DATA}", "directory=${X}",
                                  "write_iolog=${X}.log", "merge_blktrace_file=${X}", "filename_format=${X}/f"])
def test_a_variable_fio_would_fill_on_the_host_is_refused_in_paths(line):
    (escape,) = find_escapes(parse_jobfile(f"[j]\n{line}\n", env={}), TARGET)
    assert "fio would replace ${" in escape.message and "cannot check on t" in escape.message
    assert "write the path itself" in escape.hint


def test_a_variable_from_the_scenario_options_is_refused_where_it_names_a_path():
    from fsbench.tools import get_tool

    issues = get_tool("fio").check_options({"rw": "write", "write_bw_log": "${HOME}/bw", "description": "${S}"}, None, {},
                                           CheckContext(targets=(CheckTarget("t", "/srv/t"),)))
    assert [(i.path, "fio would replace ${HOME}" in i.message) for i in issues] == [("write_bw_log", True)]


@pytest.mark.parametrize("line, why", [
    ("cgroup=fsbench-evil", "creates a cgroup on the host"),
    ("cgroup_weight=500", "sets a cgroup's I/O weight"),
    ("merge_blktrace_file=/tmp/merged", "writes its log outside the case's raw folder (target t)"),
    ("write_lat_log=../lat", "writes its log outside"),
])
def test_host_level_options_and_merged_traces_are_refused(line, why):
    (escape,) = find_escapes(parse_jobfile(f"[j]\n{line}\n"), TARGET)
    assert why in escape.message


def test_host_level_options_pass_on_a_destructive_target_or_with_allow_commands():
    jf = parse_jobfile("[j]\ncgroup=bench\nioscheduler=none\n")
    assert find_escapes(jf, DEVICE) == [] and find_escapes(jf, TARGET, allow_commands=True) == []
    fine = parse_jobfile("[j]\ncpus_allowed=0-1\nnice=5\nmerge_blktrace_file=merged\nwrite_hist_log=h\n")
    assert find_escapes(fine, TARGET) == []


@pytest.mark.parametrize("line", ["opendir=/srv", "filename_format=/tmp/$jobname", "ioengine=sg",
                                  "write_bw_log=/tmp/bw", "filename=../x", "mem=mmap:/dev/shm/x"])
def test_messages_name_the_target(line):
    two = [TargetPlace("fast", "/srv/a"), TargetPlace("slow", "/srv/b")]
    (escape,) = find_escapes(parse_jobfile(f"[j]\n{line}\n"), two)
    assert "fast, slow" in escape.message, escape.message


def test_repeated_sections_are_each_checked_at_their_own_line():
    jf = parse_jobfile("[a]\nfilename=data\n[global]\nbs=4k\n[a]\nfilename=/etc/passwd\n", "r.fio")
    (escape,) = find_escapes(jf, TARGET)
    assert str(escape.origin) == "r.fio:6" and escape.section == "a"
