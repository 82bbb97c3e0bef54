"""fio job files rendered from the scenario: fsbench's directory, one result per section, the prepare pass."""

from fsbench.api.tools import CheckContext
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
                               CheckContext())
    by_path = {i.path: i for i in issues}
    assert "numjobs" in by_path["numjob"].hint
    assert "randread" in by_path["rw"].hint
    assert "not a size" in by_path["bs"].message
    assert "not a duration" in by_path["runtime"].message
    assert FIO.check_options({"bs": "4k-64k", "bssplit": "4k/50:64k/50"}, None, {}, CheckContext()) == []


MULTI = "[global]\nbs=4k\nsize=1m\n[a]\nrw=randread\n[global]\nbs=1m\ndirectory=sub\n[b]\nrw=write\n[a]\nrw=randwrite\n"


def test_repeated_globals_and_job_names_are_rendered_as_fio_reads_them():
    c = case(job_file_text=MULTI, options={"numjobs": 2}, dataset="ds")
    jf = parse_jobfile(FIO.build(c, "/t/data/ds").files["job.fio"])
    assert jf.job_names() == ["a", "b", "a"]  # the randread job is still there
    assert [(n, o["bs"], o["rw"], o["numjobs"]) for n, o in jf.jobs()] == [
        ("a", "4k", "randread", "2"), ("b", "1m", "write", "2"), ("a", "1m", "randwrite", "2")]
    # a later global's directory counts for the jobs after it only; each job has its own dataset files
    assert [o["directory"] for _n, o in jf.jobs()] == ["/t/data/ds", "/t/data/ds/sub", "/t/data/ds/sub"]
    assert [o["filename_format"] for _n, o in jf.jobs()] == [f"ds.{i}.$jobnum.$filenum" for i in range(3)]
    assert not any("directory" in s.options for s in jf.globals())


def _rbd_ctx(hosts=("local",)):
    from fsbench.api.tools import BuildContext, HostInfo
    from fsbench.kinds.rbd_image import RbdImage

    return BuildContext({h: HostInfo(h, f"10.0.0.{i + 1}") for i, h in enumerate(hosts)}, port=8765,
                        address="url", target_kind="rbd-image",
                        target_settings=RbdImage(pool="rbd", image="fsbench-img", conf="/etc/ceph/lab.conf"))


def test_every_section_on_an_rbd_image_uses_the_target_s_image():
    text = "[global]\nrw=randwrite\nsize=4m\n[j]\nrbdname=prod-image\npool=prod\nclustername=other\n" \
           "[global]\nioengine=libaio\n[k]\n"
    jf = parse_jobfile(FIO.build(case(job_file_text=text), "/fsbench-img", _rbd_ctx()).files["job.fio"])
    for s in jf.sections:
        assert (s.options["ioengine"], s.options["pool"], s.options["rbdname"], s.options["clientname"]) == \
            ("rbd", "rbd", "fsbench-img", "admin"), s
        assert "clustername" not in s.options
    assert [o["rbdname"] for _n, o in jf.jobs()] == ["fsbench-img", "fsbench-img"]


def test_the_image_fill_writes_the_extents_the_job_file_reads_once():
    text = "[global]\nrw=randread\nbs=4k\nsize=64m\noffset=1g\nruntime=60\ntime_based\n[r1]\n[r2]\niodepth=8\n" \
           "[w]\nrw=write\noffset=0\n[spread]\nsize=8m\noffset_increment=8m\nnumjobs=4\n"
    c = case(job_file_text=text)
    fill = parse_jobfile(FIO.prepare(c, "/fsbench-img", _rbd_ctx()).files["job.fio"])
    glob = fill.section("global")
    assert (glob["rw"], glob["bs"], glob["ioengine"], glob["rbdname"]) == ("write", "4m", "rbd", "fsbench-img")
    # r1 and r2 read the same 64 MiB at 1 GiB: written once; the writer reads nothing; spread's clones 4 extents
    assert [(n, o.get("size"), o.get("offset"), o.get("numjobs")) for n, o in fill.jobs()] == [
        ("r1", "64m", "1g", None), ("spread", "8m", "1g", "4")]
    assert not any(k in o for _n, o in fill.jobs() for k in ("runtime", "time_based", "create_only"))
    # the fill names no case: two cases that read the same extent have the same fill, written once per target
    other = FIO.prepare(case(job_file_text=text, case_id="t__w__r2", options={"iodepth": 32}), "/fsbench-img",
                        _rbd_ctx())
    assert other.files == FIO.prepare(c, "/fsbench-img", _rbd_ctx()).files


def test_across_hosts_one_host_writes_the_image_fill():
    prep = FIO.prepare(case(options={"rw": "randread", "size": "16m"}, hosts=("h1", "h2")), "/fsbench-img",
                       _rbd_ctx(("h1", "h2")))
    assert prep.controller and list(prep.servers) == ["h1"] and list(prep.files) == ["job-h1.fio"]
    assert prep.argv[-2:] == ["--client=ip:10.0.0.1,8765", "job-h1.fio"]
    assert prep.servers["h1"][:2] == ["env", "CEPH_CONF=/etc/ceph/lab.conf"]


def _seconds(text: str) -> float:
    return FIO.estimate_seconds({}, "[global]\nbs=4k\nrw=read\n" + text, {})


def test_estimates_follow_every_option_that_sets_how_long_fio_runs():
    # runtime's alias, with an inline comment as fio reads it
    assert _seconds("timeout=3600 # one hour\ntime_based\nsize=64m\n[j]\n") == 3600 + 1
    # bandwidth and iops limits hold each clone: 1 GiB at 1 MiB/s, 1 GiB at 100 x 4 KiB/s
    assert _seconds("size=1g\nrate=1m\nnumjobs=4\n[j]\n") == 1024 + 1
    assert _seconds("size=1g\nrate_iops=100\n[j]\n") == round(2**30 / 4096 / 100 + 1, 1)
    assert _seconds("size=1g\nrw=write\nrate=,2m\n[j]\n") == 512 + 1  # read,write: the write limit
    # io_limit (io_size's alias), loops and number_ios set the bytes moved
    assert _seconds("size=1m\nio_limit=100g\n[j]\n") == 256 + 1
    assert _seconds("size=1g\nloops=4\nrate=16m\n[j]\n") == 4 * 64 + 1
    assert _seconds("size=1g\nnumber_ios=1000\nrate_iops=10\n[j]\n") == 100 + 1
    # 10 ms of thinking after every 4 KiB block of 64 MiB; a start delay (a range: its upper end); ramp time
    assert _seconds("size=64m\nthinktime=10000\n[j]\n") == round(64 / 400 + 16384 * 0.01 + 1, 1)
    assert _seconds("size=4m\nstartdelay=600\n[j]\n") == round(600 + 4 / 400 + 1, 1)
    assert _seconds("size=4m\nstartdelay=5-10\nramp_time=2\nruntime=30\ntime_based\n[j]\n") == 10 + 2 + 30 + 1
    # runtime still stops a size-bound job early
    assert _seconds("size=1g\nrate=1m\nruntime=60\n[j]\n") == 60 + 1


def test_groups_follow_stonewall_and_later_globals_not_new_group():
    assert _seconds("runtime=5\ntime_based\n[a]\n[b]\nnew_group\n") == 5 + 1  # new_group: reporting only
    assert _seconds("runtime=5\ntime_based\n[a]\n[b]\nwait_for_previous\n") == 10 + 1
    assert _seconds("runtime=5\ntime_based\n[a]\n[global]\nstonewall\n[b]\n[c]\n") == 15 + 1
    # two jobs of one name are two jobs; a later global's runtime counts for the later one only
    assert _seconds("runtime=5\ntime_based\n[a]\n[global]\nruntime=50\n[a]\nstonewall\n") == 55 + 1


def test_rate_min_lets_fio_run_longer_than_the_estimate_and_the_timeout_allows_it():
    text = "[global]\nrw=read\nsize=1g\nrate_min=1m\n[j]\n"
    assert FIO.estimate_seconds({}, text, {}) < 5 and FIO.longest_seconds({}, text, {}) == 1024 + 1
