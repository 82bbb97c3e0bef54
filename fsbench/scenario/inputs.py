"""The files a run depends on besides the scenario text, by content hash, so a resume can refuse edits.

The scenario hash (fsbench.run.store.scenario_hash) covers what the scenario says, not what the files
it names hold: a job file edited between a run and its --resume would make one workload mix two
different jobs. These digests cover the rest: job files, the files they include, the inventory.
Secret files are left out on purpose: a secret may change (rotated) without changing what is
measured, and a hash of a short secret written into the run directory would let it be guessed.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from fsbench.api.tools import IncludesFiles
from fsbench.config.files import read_text_bounded
from fsbench.scenario.model import Scenario
from fsbench.tools import TOOLS


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()


def _name(path: str | Path, base_dir: Path) -> str:
    """A path as recorded: relative to the scenario's folder, so a moved folder of files still resumes."""
    return os.path.relpath(os.path.abspath(path), os.path.abspath(base_dir))


def input_digests(sc: Scenario) -> dict[str, str]:
    """{file, relative to the scenario's folder, or `inventory`: sha256 of its text} for one scenario."""
    out: dict[str, str] = {}
    for w in sc.workloads.values():
        if not w.job_file or w.job_file_text is None:
            continue
        out[_name(w.job_file, sc.base_dir)] = _digest(w.job_file_text)  # the text the plan was made from
        tool = TOOLS.get(w.tool)
        if isinstance(tool, IncludesFiles):  # fio's `include`: an included file is part of the workload too
            for path, text in tool.included_files(w.job_file_text, w.job_file).items():
                out.setdefault(_name(path, sc.base_dir), _digest(text))
    if sc.inventory_file:
        try:  # by role, not path: the same hosts given from another place resume
            out["inventory"] = _digest(read_text_bounded(sc.inventory_file))
        except OSError:
            pass  # validation has said why already
    return out


def changed_inputs(recorded: dict[str, str], now: dict[str, str]) -> list[str]:
    """The recorded inputs whose content is no longer what the run started with (or that are gone)."""
    return [name for name, digest in recorded.items() if now.get(name) != digest]
