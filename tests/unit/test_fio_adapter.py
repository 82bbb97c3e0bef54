"""fio job files rendered from the scenario: fsbench's directory, one result per section, the prepare pass."""

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
    assert "end_fsync" not in glob and "group_reporting" in glob
    assert jf.section("w")["directory"] == "/data/x"
    assert inv.argv == ["fio", "--output-format=json", "--output=fio.json", "job.fio"]
    assert inv.outputs == ["fio.json"]


def test_job_file_overrides_win_over_job_sections():
    text = "[global]\nioengine=libaio\n[seq]\nrw=write\nbs=4k\n[rand]\nstonewall\nrw=randread\n"
    inv = FIO.build(case(options={"bs": "64k", "numjobs": 4}, job_file_text=text), "/data/x")
    jf = parse_jobfile(inv.files["job.fio"])
    assert jf.job_names() == ["seq", "rand"]
    assert jf.section("global")["bs"] == "64k" and "bs" not in jf.section("seq")
    assert jf.section("seq")["directory"] == jf.section("rand")["directory"] == "/data/x"
    assert "stonewall" in jf.section("rand")


def test_each_parallel_section_is_its_own_reporting_group():
    """group_reporting merges only a section's numjobs clones: fio's aio-read example keeps 4 rows."""
    text = ("[global]\nrw=read\nsize=16m\n[aio-read4]\niodepth=4\n[aio-read32]\niodepth=32\n"
            "[aio-read8]\niodepth=8\n[aio-read16]\niodepth=16\n")
    jf = parse_jobfile(FIO.build(case(options={"numjobs": 2}, job_file_text=text), "/d").files["job.fio"])
    assert "group_reporting" in jf.section("global")
    assert all("new_group" in opts for name, opts in jf.sections if name != "global")


def test_a_relative_directory_or_filename_stays_inside_the_case_folder():
    text = "[global]\ndirectory=sub:other\n[a]\nfilename=data.bin\nrw=write\n[b]\ndirectory=own\nrw=write\n"
    jf = parse_jobfile(FIO.build(case(job_file_text=text), "/t/case").files["job.fio"])
    assert jf.section("a")["directory"] == "/t/case/sub:/t/case/other" and jf.section("a")["filename"] == "data.bin"
    assert jf.section("b")["directory"] == "/t/case/own"
    assert "directory" not in jf.section("global")


def test_a_destructive_target_s_own_device_gets_no_directory():
    jf = parse_jobfile(FIO.build(case(options={"filename": "/dev/loop7", "rw": "randread"}), "/t/c").files["job.fio"])
    assert "directory" not in jf.section("w") and jf.section("w")["filename"] == "/dev/loop7"
    assert "filename" not in jf.section("global")


def test_directory_comes_before_filename_in_every_job():
    """fio prefixes a filename only with a directory set before it: [global]'s filename moves down."""
    text = FIO.build(case(options={"filename": "data.bin", "rw": "write"}), "/t/c").files["job.fio"]
    section = text[text.index("[w]"):].splitlines()
    assert section[1:3] == ["directory=/t/c", "filename=data.bin"]


def test_the_prepare_pass_lays_out_the_same_files_without_timing():
    c = case(options={"rw": "read", "bs": "1m", "size": "64m", "runtime": 30, "time_based": True, "numjobs": 4})
    prep = FIO.prepare(c, "/t/data/w")
    jf = parse_jobfile(prep.files["job.fio"])
    glob = jf.section("global")
    assert glob["create_only"] == "1" and "time_based" not in glob and "runtime" not in glob
    assert glob["numjobs"] == "4" and glob["size"] == "64m" and jf.section("w")["directory"] == "/t/data/w"
    assert FIO.prepare(case(options={"rw": "write"}), "/t") is None  # writers lay out nothing
    assert FIO.layout_bytes(c.options, None, {}) == 4 * 64 * 2**20


def test_jobs_mapping_gives_several_sections_and_estimate_follows_stonewall():
    jobs = {"write": {"rw": "write", "runtime": 2, "time_based": True},
            "read": {"rw": "read", "runtime": 3, "time_based": True, "stonewall": True}}
    assert FIO.estimate_seconds({"size": "8m"}, None, jobs) == 2 + 3 + 1
    jobs["read"].pop("stonewall")
    assert FIO.estimate_seconds({"size": "8m"}, None, jobs) == 3 + 1


def test_estimates_read_job_files_as_fio_does():
    """`runtime=3600  # one hour`: fio strips the comment; so does the estimate (it was 1 s)."""
    text = "[global]\ntime_based\nruntime=3600  # one hour\n[j]\nrw=read ; sequential\n"
    assert FIO.estimate_seconds({}, text, {}) == 3601
    # size-bound jobs: the jobs of a section share the bandwidth, so numjobs multiplies
    assert FIO.estimate_seconds({"rw": "write", "size": "400m", "numjobs": 4}, None, {}) == 4 + 1


def test_group_reporting_can_be_turned_off():
    inv = FIO.build(case(options={"rw": "read", "group_reporting": False}), "/d")
    jf = parse_jobfile(inv.files["job.fio"])
    assert "group_reporting" not in jf.section("global") and "new_group" not in jf.section("w")


def test_option_checks():
    issues = FIO.check_options({"numjob": 4, "rw": "randomread", "bs": "4q", "runtime": "soon"}, None, {},
                               {"destructive": False})
    by_path = {i.path: i for i in issues}
    assert "numjobs" in by_path["numjob"].hint
    assert "randread" in by_path["rw"].hint
    assert "not a size" in by_path["bs"].message
    assert "not a duration" in by_path["runtime"].message
    assert FIO.check_options({"bs": "4k-64k", "bssplit": "4k/50:64k/50"}, None, {}, {}) == []
