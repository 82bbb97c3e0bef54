"""A new run directory's folder and run id: `<scenario>-<UTC yyyymmddThhmmss>`, then -2, -3... when taken."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from fsbench.core.errors import RunDirError
from fsbench.run.run_dir_end import out_of_space


def new_run_folder(root: Path, scenario_name: str, claim: Callable[[Path, str], bool] | None = None) -> Path:
    """Make the run's folder under root, its name the run id. A name is taken when the folder exists (mkdir
    is the atomic claim: two runs started in the same second get -2, -3...) or, with claim(folder, run id),
    when claim says another run holds the id beyond root (the controller's index of runs: a run started in
    the same second into another folder)."""
    if not scenario_name or "/" in scenario_name or scenario_name.startswith(".") or "\0" in scenario_name:
        raise RunDirError(f"{scenario_name!r} cannot name a folder under {root}")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    base = root / f"{scenario_name}-{stamp}"
    path, n = base, 1
    try:
        root.mkdir(parents=True, exist_ok=True)
        while True:
            try:
                path.mkdir()
                if _claimed(claim, path):
                    return path
                path.rmdir()  # the id is another run's (its processes carry it): not this run's to use
            except FileExistsError:
                pass
            n += 1
            path = base.with_name(f"{base.name}-{n}")
    except OSError as exc:  # a bad -o: a file on the way, a read-only or full file system, no permission
        if out_of_space(exc):
            raise RunDirError(f"{root}: no space left to create a run directory: free some space or give "
                              "another folder with -o") from None
        where = exc.filename or root
        raise RunDirError(f"{root}: cannot create a run directory there ({where}: {exc.strerror or exc}): "
                          "give a folder you can write to with -o") from None


def _claimed(claim: Callable[[Path, str], bool] | None, path: Path) -> bool:
    """Whether the run id `path.name` is this run's (no claim: the folder alone decides); the folder made for
    it is removed when claiming raises."""
    if claim is None:
        return True
    try:
        return claim(path, path.name)
    except BaseException:
        path.rmdir()
        raise
