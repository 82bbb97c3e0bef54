"""A job file is the ordered list of sections fio sees: a later [global] counts for later jobs only, a
repeated job name is another job, aliases set the option they stand for."""

from __future__ import annotations

from fsbench.tools.fio.jobfile import JobFile, Origin, canonical, parse_jobfile

MULTI = "[global]\nbs=4k\nsize=1m\n[a]\nrw=randread\n[global]\nbs=1m\n[b]\nrw=write\n[a]\nrw=randwrite\niodepth=16\n"


def test_a_later_global_counts_for_later_jobs_and_a_repeated_name_is_another_job():
    jf = parse_jobfile(MULTI, "multi.fio")
    assert jf.job_names() == ["a", "b", "a"]
    assert [(name, opts.get("bs"), opts.get("size"), opts.get("rw")) for name, opts in jf.jobs()] == [
        ("a", "4k", "1m", "randread"), ("b", "1m", "1m", "write"), ("a", "1m", "1m", "randwrite")]
    # each section keeps where its own options were set
    first_a, second_a = (s for s in jf.sections if s.name == "a")
    assert str(first_a.origins["rw"]) == "multi.fio:5" and str(second_a.origins["rw"]) == "multi.fio:11"
    # rendered and read again: the same jobs with the same options
    assert parse_jobfile(jf.render()).jobs() == jf.jobs()


def test_section_names_are_read_as_fio_reads_them():
    # fio compares 6 characters ([globalx] is global) and keeps blanks inside the brackets
    jf = parse_jobfile("[globalx]\nbs=64k\n[a]\n[ global ]\nbs=4k\n[GLOBAL]\n")
    assert [s.name for s in jf.globals()] == ["globalx"]
    assert jf.job_names() == ["a", " global ", "GLOBAL"]
    assert [opts["bs"] for _n, opts in jf.jobs()] == ["64k", "4k", "64k"]
    # options before any section are global ones
    assert parse_jobfile("bs=8k\n[j]\n").jobs() == [("j", {"bs": "8k"})]


def test_aliases_set_the_option_they_stand_for():
    assert canonical("timeout") == "runtime" and canonical("io_limit") == "io_size" and canonical("bs") == "bs"
    jf = parse_jobfile("[global]\nruntime=10\n[a]\ntimeout=3600\nreadwrite=randread\n")
    assert jf.jobs() == [("a", {"runtime": "3600", "rw": "randread"})]


def test_an_override_wins_in_every_job_also_over_aliases_and_later_globals():
    jf = parse_jobfile("[a]\ntimeout=3600\n[global]\nruntime=50\n[b]\n")
    jf.override({"runtime": 4}, Origin("options"))
    assert [opts["runtime"] for _n, opts in jf.jobs()] == ["4", "4"]
    assert jf.sections[0].is_global and jf.sections[0].origins["runtime"] == Origin("options")
    assert "timeout" not in jf.render() and jf.render().count("runtime") == 1


def test_job_options_from_the_scenario_go_to_every_section_of_that_name():
    jf = parse_jobfile(MULTI)
    jf.set("a", "timeout", 5, Origin("jobs.a"))
    assert [opts.get("runtime") for _n, opts in jf.jobs()] == ["5", None, "5"]
    fresh = JobFile()
    fresh.set("w", "rw", "read")
    fresh.set("global", "bs", "4k")
    assert fresh.render() == "[global]\nbs=4k\n\n[w]\nrw=read\n"


def test_fio_fills_any_name_in_braces_from_the_environment():
    jf = parse_jobfile("[j]\nfilename=${a.b}/x\ndescription=${ NOPE}\n", "v.fio", env={"a.b": "/data"})
    assert jf.section("j")["filename"] == "/data/x"  # real fio does the same (`fio --showcmd`)
    assert [(str(o), m) for o, m in jf.problems] == [
        ("v.fio:3", "${ NOPE} is not set in the environment (fio would read it there)")]
