"""The libraries a run needs at its end (pandas, matplotlib, jinja2), imported while it waits at its start.

`fsbench run` spends its first seconds waiting on commands (preflight, target setup, the first prepare
step); importing the end's libraries then, in a thread, takes about a second off the run's fixed cost.
A case settles the warm-up after its cache drop and before its side jobs and measured run: nothing of
fsbench's own competes with a measurement for the CPU. The drop runs beside the imports: its sync waits on
the writeback of the files the first case laid out, which needs no CPU of theirs (0.1 s of the run's
fixed cost, bench/run_overhead.py). The library files the imports still read after the drop are cached
again, a few MB of the page cache and none of the data a case reads.
"""

from __future__ import annotations

import atexit
import io
import threading

_thread: threading.Thread | None = None


def _import_all(report: bool) -> None:
    # third-party modules only: no fsbench module, so the main thread never waits on a lock this holds
    # while holding one this needs
    try:
        import pandas  # noqa: F401
        import pyarrow.parquet  # noqa: F401

        if report:
            import jinja2  # noqa: F401
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            # a first figure drawn to SVG loads what every later one reuses (fonts, text layout): 35 ms of the
            # report's first chart
            fig, ax = plt.subplots(figsize=(2, 1))
            ax.bar(["a"], [1.0])
            fig.savefig(io.StringIO(), format="svg")
            plt.close(fig)
    except Exception:  # noqa: BLE001, S110 - the main thread imports them again and reports any error itself
        pass


def start(report: bool = True) -> None:
    """Begin importing in the background (once per process): the results' libraries, and the report's
    (matplotlib and jinja2, about a third of a second of CPU, and one small chart drawn) only for a run that
    writes one."""
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_import_all, args=(report,), name="fsbench-warmup", daemon=True)
        _thread.start()
        # a process that ends early (a scenario refused at once) must not finalise the interpreter while the
        # thread is inside a C extension's import: that aborts it (SIGABRT, "PyGILState_Release") instead of
        # exiting with its own status
        atexit.register(settle)


def settle() -> None:
    """Wait until the background imports are done (at once when none were started)."""
    if _thread is not None:
        _thread.join()
