"""fio job files rendered from the scenario, with fsbench's directory and reporting defaults."""

from fsbench.scenario.plan import Case
from fsbench.tools import get_tool
from fsbench.tools.fio.jobfile import parse_jobfile

FIO = get_tool("fio")


def case(**kw):
    base = dict(case_id="t__w__r1", index=1, target="t", workload="w", tool="fio", repetition=1)
    return Case(**{**base, **kw})


def test_inline_options_become_one_job_section():
    inv = FIO.build(case(options={"rw": "write", "bs": "1m", "time_based": True, "end_fsync": False}), "/data/x")
    text = inv.files["job.fio"]
    jf = parse_jobfile(text)
    assert jf.job_names() == ["w"]
    glob = jf.section("global")
    assert glob["rw"] == "write" and glob["bs"] == "1m" and "time_based" in glob and glob["time_based"] is None
    assert "end_fsync" not in glob
    assert glob["directory"] == "/data/x" and "group_reporting" in glob
    assert inv.argv == ["fio", "--output-format=json", "--output=fio.json", "job.fio"]
    assert inv.outputs == ["fio.json"]


def test_job_file_overrides_win_over_job_sections():
    text = "[global]\nioengine=libaio\ndirectory=/elsewhere\n[seq]\nrw=write\nbs=4k\n[rand]\nstonewall\nrw=randread\n"
    inv = FIO.build(case(options={"bs": "64k", "numjobs": 4}, job_file_text=text), "/data/x")
    jf = parse_jobfile(inv.files["job.fio"])
    assert jf.job_names() == ["seq", "rand"]
    assert jf.section("global")["bs"] == "64k" and "bs" not in jf.section("seq")
    assert jf.section("global")["directory"] == "/data/x"
    assert "stonewall" in jf.section("rand")


def test_jobs_mapping_gives_several_sections_and_estimate_follows_stonewall():
    jobs = {"write": {"rw": "write", "runtime": 2, "time_based": True},
            "read": {"rw": "read", "runtime": 3, "time_based": True, "stonewall": True}}
    assert FIO.estimate_seconds({"size": "8m"}, None, jobs) == 2 + 3 + 1
    jobs["read"].pop("stonewall")
    assert FIO.estimate_seconds({"size": "8m"}, None, jobs) == 3 + 1


def test_group_reporting_can_be_turned_off():
    inv = FIO.build(case(options={"rw": "read", "group_reporting": False}), "/d")
    assert "group_reporting" not in parse_jobfile(inv.files["job.fio"]).section("global")


def test_option_checks():
    issues = FIO.check_options({"numjob": 4, "rw": "randomread", "bs": "4q", "runtime": "soon"}, None, {},
                               {"destructive": False})
    by_path = {i.path: i for i in issues}
    assert "numjobs" in by_path["numjob"].hint
    assert "randread" in by_path["rw"].hint
    assert "not a size" in by_path["bs"].message
    assert "not a duration" in by_path["runtime"].message
    assert FIO.check_options({"bs": "4k-64k", "bssplit": "4k/50:64k/50"}, None, {}, {}) == []
