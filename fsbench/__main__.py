"""python -m fsbench, and the `fsbench` program."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from fsbench.cli import main


def run() -> NoReturn:
    """Run the command line as the program (`fsbench`, `python -m fsbench`) and leave without the interpreter's
    own teardown.

    The teardown frees every module and object one by one: 0.17 s after each command once pandas and
    matplotlib are loaded (bench/run_overhead.py). Nothing of fsbench's waits on it: its files are closed
    when the command returns. What a program's exit must still do is done here first: the threads that are
    not daemons are joined, the atexit handlers run (temporary folders' finalizers among them), stdout and
    stderr are flushed. An exception other than SystemExit leaves the usual way, traceback and all."""
    import atexit
    import threading

    try:
        main.main()
    except SystemExit as exc:
        code = exc.code
    else:  # pragma: no cover - click's standalone mode always ends with SystemExit
        code = 0
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (fsbench ... | head): nothing more to say
            pass
    os._exit(int(code or 0))


if __name__ == "__main__":
    run()
