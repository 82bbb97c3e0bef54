"""Job files read as fio reads them, and no job or option doing I/O outside the case folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsbench.errors import ScenarioError
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
