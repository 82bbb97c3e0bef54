"""One prepare step for a dataset's cases: of fio steps that differ in numjobs alone, the one with the most
clones of every job lays out the files of all (fsbench.tools.fio.layout.cover)."""

from fsbench.api.tools import CoversLayouts, Invocation
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool
from fsbench.tools.fio.jobfile import parse_jobfile

FIO = get_tool("fio")
READ = {"rw": "randread", "bs": "4k", "size": "8m", "ioengine": "psync", "time_based": 1, "runtime": 2}
TWO_JOBS = "[a]\nrw=randread\nsize=4m\n[b]\nrw=read\nsize=8m\n"


def prep(case_id: str = "t__w__r1", dataset: str = "w", **options) -> Invocation:
    c = Case(case_id=case_id, index=1, target="t", workload="w", tool="fio", repetition=1,
             options={**READ, **options}, dataset=dataset, prepare=True)
    step = FIO.prepare(c, "/t/data/w")
    assert step is not None
    return step


def jobs_prep(case_id: str, a: int, b: int) -> Invocation:
    c = Case(case_id=case_id, index=1, target="t", workload="w", tool="fio", repetition=1,
             job_file_text=TWO_JOBS.replace("[b]", f"numjobs={a}\n[b]") + f"numjobs={b}\n", dataset="w", prepare=True)
    step = FIO.prepare(c, "/t/data/w")
    assert step is not None
    return step


def test_fio_names_the_hook():
    assert isinstance(FIO, CoversLayouts)


def test_the_step_with_the_most_clones_covers_a_numjobs_sweep_in_any_order():
    one, two, four = (prep(f"t__w__numjobs={n}__r1", numjobs=n) for n in (1, 2, 4))
    assert FIO.cover_layout([one, two, four]) is four
    assert FIO.cover_layout([four, one, two]) is four
    assert FIO.cover_layout([two, prep(iodepth=8)]) is two  # iodepth decides no file: one job is one clone
    text = dict(parse_jobfile(four.files["job.fio"]).jobs())["w"]
    # the clones' files are named by their number: clone 0 of four is the one file of numjobs=1
    assert text["filename_format"] == "w.0.$jobnum.$filenum" and text["numjobs"] == "4"


def test_steps_laying_out_other_files_have_no_cover():
    assert FIO.cover_layout([prep(numjobs=1), prep(numjobs=2, size="16m")]) is None
    assert FIO.cover_layout([prep(numjobs=1), prep(numjobs=2, dataset="other")]) is None
    assert FIO.cover_layout([prep(numjobs=1), prep(numjobs=2, nrfiles=2)]) is None


def test_each_job_is_counted_on_its_own():
    both = jobs_prep("t__w__2", 2, 2)
    assert FIO.cover_layout([jobs_prep("t__w__1", 1, 2), jobs_prep("t__w__3", 2, 1), both]) is both
    # more clones of a in one step, of b in the other: neither holds the other's files
    assert FIO.cover_layout([jobs_prep("t__w__1", 1, 2), jobs_prep("t__w__3", 2, 1)]) is None


def test_a_numjobs_fsbench_cannot_read_as_a_number_has_no_cover():
    assert FIO.cover_layout([prep(numjobs=1), prep(numjobs="${JOBS}")]) is None
    assert FIO.cover_layout([prep(numjobs=1), prep(numjobs="²")]) is None


def test_steps_across_hosts_or_none_have_no_cover():
    across = Invocation(argv=["fio", "--client=ip:h1,8765", "job-h1.fio"], files={"job-h1.fio": "[w]\n"},
                        controller=True)
    assert FIO.cover_layout([across, across]) is None
    assert FIO.cover_layout([]) is None
