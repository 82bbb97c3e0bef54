"""Recovery after a killed run reads only what this user wrote: planted index entries and clean-ups are skipped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fsbench.core.errors import PreflightError
from fsbench.core.events import Event
from fsbench.run.leftovers import Leftovers, dead_runs, recover, register_run, state_dir, state_path
from fsbench.run.store import RunDir
from fsbench.transport.local import LocalTransport

STRANGER = 65534  # nobody


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("FSBENCH_STATE_DIR", str(folder))
    return folder


def dead_run(tmp_path: Path, name: str, marker: Path) -> Path:
    """A run directory whose leftovers.json would create marker when recovered."""
    rd = RunDir.create(tmp_path / "runs", name, {"name": name})
    Leftovers(rd.path / "leftovers.json").add("local", "scratch folders", [["touch", str(marker)]])
    (rd.path / "lock").touch()  # a run locks its directory before anything of it starts (nobody holds it now)
    return rd.path


def recover_all(events: list[Event]) -> list[str]:
    problems = []
    for run_id, run_dir in dead_runs(events.append):
        problems += recover(run_id, run_dir, {}, LocalTransport("controller"), events.append)
    return problems


def warnings(events: list[Event]) -> str:
    return "\n".join(e.message for e in events if e.kind == "warning")


def test_the_default_state_folder_is_per_user(monkeypatch):
    monkeypatch.delenv("FSBENCH_STATE_DIR", raising=False)
    assert state_path() == Path(f"/var/tmp/fsbench-runs-{os.geteuid()}")


def test_the_state_folder_is_created_private_and_entries_are_private_whatever_the_umask(tmp_path, state):
    old = os.umask(0o002)
    try:
        run = dead_run(tmp_path, "mine", tmp_path / "marker")
        register_run(run, run.name)
    finally:
        os.umask(old)
    assert state.stat().st_mode & 0o777 == 0o700
    assert (state / f"{run.name}.json").stat().st_mode & 0o777 == 0o600
    assert (run / "leftovers.json").stat().st_mode & 0o777 == 0o600


def test_an_own_dead_run_is_cleaned_up(tmp_path, state):
    marker = tmp_path / "cleaned"
    run = dead_run(tmp_path, "mine", marker)
    register_run(run, run.name)
    events: list[Event] = []
    assert recover_all(events) == []
    assert marker.exists() and "cleaned up after the dead run" in warnings(events)
    assert not (state / f"{run.name}.json").exists()
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"


@pytest.mark.parametrize("plant", ["another user's entry", "a world-writable entry", "a symlinked entry",
                                   "another user's leftovers", "group-writable leftovers", "symlinked leftovers"])
def test_a_planted_entry_or_clean_up_never_runs(tmp_path, state, plant):
    marker = tmp_path / "PWNED"
    run = dead_run(tmp_path, "planted", marker)
    register_run(run, run.name)
    entry, left = state / f"{run.name}.json", run / "leftovers.json"
    if plant == "another user's entry":
        os.chown(entry, STRANGER, STRANGER)
    elif plant == "a world-writable entry":
        entry.chmod(0o666)
    elif plant == "a symlinked entry":
        real = tmp_path / "elsewhere.json"
        entry.rename(real)
        entry.symlink_to(real)
    elif plant == "another user's leftovers":
        os.chown(left, STRANGER, STRANGER)
    elif plant == "group-writable leftovers":
        left.chmod(0o620)
    else:
        real = tmp_path / "elsewhere-leftovers.json"
        left.rename(real)
        left.symlink_to(real)
    events: list[Event] = []
    assert recover_all(events) == []
    assert not marker.exists()
    said = warnings(events)
    assert ("ignoring the run index entry" in said) if "entry" in plant else ("not cleaning up" in said)
    assert "symbolic link" in said or "uid 65534" in said or "writable by its group or by others" in said


def test_a_state_folder_of_someone_else_is_refused_with_what_to_do(tmp_path, state):
    state.mkdir(mode=0o700)
    os.chown(state, STRANGER, STRANGER)
    with pytest.raises(PreflightError) as err:
        state_dir()
    text = str(err.value)
    assert str(state) in text and "uid 65534" in text and "FSBENCH_STATE_DIR" in text


def test_a_world_writable_state_folder_is_refused(tmp_path, state):
    state.mkdir()
    state.chmod(0o1777)
    with pytest.raises(PreflightError, match="writable by its group or by others"):
        dead_runs()


def test_a_symlink_as_state_folder_is_refused(tmp_path, state):
    (tmp_path / "real").mkdir(mode=0o700)
    state.symlink_to(tmp_path / "real")
    with pytest.raises(PreflightError, match="not a folder"):
        state_dir()


def test_a_dead_run_being_cleaned_by_another_run_is_left_to_it(tmp_path, state):
    marker = tmp_path / "twice"
    run = dead_run(tmp_path, "locked", marker)
    register_run(run, run.name)
    other = RunDir.open(run)
    other.lock()  # another new run is recovering it right now
    try:
        assert recover(run.name, run, {}, LocalTransport("controller")) == []
        assert not marker.exists() and (state / f"{run.name}.json").exists()
    finally:
        other.unlock()
    assert recover(run.name, run, {}, LocalTransport("controller")) == []
    assert marker.exists() and not (state / f"{run.name}.json").exists()
    marker.unlink()
    assert recover(run.name, run, {}, LocalTransport("controller")) == []  # the index entry is gone: done already
    assert not marker.exists()


def test_a_run_id_another_run_holds_is_not_taken_even_in_another_folder(tmp_path, state):
    """Two runs of one scenario started in the same second into two folders: the second gets -2. Its
    processes carry its run id, which stops a case's strays and a service's daemons: a shared id would let
    each run stop the other's."""
    from fsbench.run.run_index import claim_run_id

    first = RunDir.create(tmp_path / "a", "same", {"name": "same"}, claim=claim_run_id)
    assert json.loads((state / f"{first.run_id}.json").read_text())["run_dir"] == str(first.path)
    assert not claim_run_id(tmp_path / "b" / first.run_id, first.run_id)  # held: nobody else gets it
    offered = []

    def held_elsewhere_first(folder: Path, run_id: str) -> bool:
        """As if another run (in another folder) held the first id this run is offered."""
        offered.append(run_id)
        return len(offered) > 1 and claim_run_id(folder, run_id)

    second = RunDir.create(tmp_path / "b", "same", {"name": "same"}, claim=held_elsewhere_first)
    assert second.run_id == f"{offered[0]}-2" and offered == [offered[0], second.run_id]
    assert [p.name for p in (tmp_path / "b").iterdir()] == [second.run_id]  # the refused folder is gone
    assert json.loads((state / f"{second.run_id}.json").read_text())["run_dir"] == str(second.path)


def test_a_run_that_claimed_its_id_and_holds_no_lock_yet_is_not_taken_for_dead(tmp_path, state):
    """Between claiming its id and locking its run directory a run is starting, not dead: another run's
    recovery must not take its entry away (a third run could then claim the same id)."""
    from fsbench.run.run_index import claim_run_id

    starting = tmp_path / "runs" / "s-1"
    starting.mkdir(parents=True)
    assert claim_run_id(starting, "s-1")  # this process's pid: running
    killed = tmp_path / "runs" / "k-1"
    killed.mkdir()
    (state / "k-1.json").write_text(json.dumps({"run_dir": str(killed), "pid": 2 ** 22 + 1}))  # no such pid
    (state / "k-1.json").chmod(0o600)
    assert [run_id for run_id, _ in dead_runs()] == ["k-1"]
    assert not (starting / "lock").exists()  # looking did not create its lock file either


def test_a_claim_that_cannot_be_written_leaves_no_entry(tmp_path, state, monkeypatch):
    from fsbench.run import run_index

    def full(_run_dir):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(run_index, "_entry", full)
    with pytest.raises(OSError):
        run_index.claim_run_id(tmp_path, "x-1")
    assert not (state / "x-1.json").exists()


def test_the_record_is_rewritten_whole_but_each_action_serialised_once(tmp_path, monkeypatch):
    """Every add and done rewrites leftovers.json (a killed run leaves a whole file), but an action's JSON is
    made once: serialising every action again on every save grew with the square of a run's hosts."""
    import json

    from fsbench.run import leftovers as module

    made: list[object] = []
    real = json.dumps

    def counting(obj, *a, **kw):  # noqa: ANN001, ANN002, ANN003
        made.append(obj)
        return real(obj, *a, **kw)

    monkeypatch.setattr(module.json, "dumps", counting)
    record = Leftovers(tmp_path / "leftovers.json")
    ids = [record.add(f"client{i}", f"target t on client{i}", [["umount", f"/mnt/t {i}"]]) for i in range(64)]
    for i in ids[::2]:
        record.done(i)
    assert len(made) == 64  # one per action, not one per action per save
    kept = json.loads((tmp_path / "leftovers.json").read_text())
    assert [a["id"] for a in kept] == ids[1::2]
    assert kept[0] == {"id": ids[1], "host": "client1", "what": "target t on client1", "commands": [["umount", "/mnt/t 1"]]}
    assert [a.id for a in Leftovers(tmp_path / "leftovers.json").actions] == ids[1::2]  # what recovery reads
