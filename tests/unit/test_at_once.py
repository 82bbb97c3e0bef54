"""Side jobs stop at once: a case waits for the slowest stop, not for their sum."""

from __future__ import annotations

import threading

import pytest

from fsbench.core.at_once import Pending, at_once
from fsbench.run.side_jobs import QuietSideJob, SideJobs


class Job(QuietSideJob):
    """A side job whose stop only returns once every other job's stop has begun (a barrier): stopped one
    after the other, the first stop's wait would time out."""

    def __init__(self, barrier: threading.Barrier, fail: bool = False):
        self.barrier, self.fail, self.stopped = barrier, fail, False

    def stop(self) -> None:
        self.barrier.wait(timeout=10)
        self.stopped = True
        if self.fail:
            raise RuntimeError("its process would not end")


def test_side_jobs_stop_at_once_and_every_one_is_stopped():
    barrier = threading.Barrier(3)
    jobs = [Job(barrier) for _ in range(3)]
    side = SideJobs(jobs)
    assert side.start() is None
    side.stop()  # one after the other, the barrier would break after 10 s: BrokenBarrierError
    assert all(job.stopped for job in jobs)


def test_a_failing_stop_is_raised_after_the_others_stopped():
    barrier = threading.Barrier(2)
    jobs = [Job(barrier, fail=True), Job(barrier)]
    side = SideJobs(jobs)
    side.start()
    with pytest.raises(RuntimeError, match="would not end"):
        side.stop()
    assert all(job.stopped for job in jobs)


def test_results_come_in_the_calls_order():
    assert at_once([lambda: 1, lambda: 2, lambda: 3]) == [1, 2, 3]
    assert at_once([]) == [] and at_once([lambda: "one"]) == ["one"]


def test_a_pending_call_runs_while_the_caller_goes_on_and_hands_over_its_result_or_error():
    """The case's validity scope runs beside its layout and cache drops: the call is under way before
    result() is asked for (it waits on the caller here), and its error reaches the caller."""
    caller_went_on = threading.Event()

    def scope() -> str:
        assert caller_went_on.wait(timeout=10)
        return "osd.1"

    pending = Pending(scope)
    caller_went_on.set()
    assert pending.result() == "osd.1"

    def broken() -> str:
        raise RuntimeError("no monitor answered")

    failing = Pending(broken)
    failing.wait()  # waiting alone does not raise: a case that failed before its measurement only waits
    with pytest.raises(RuntimeError, match="no monitor answered"):
        failing.result()
