"""A case's tool on its host(s): inputs staged (raw/ first), the command or its steps run, outputs fetched."""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable
from pathlib import Path

from fsbench.api.tools import Invocation
from fsbench.api.transport import Transport
from fsbench.core.cancel import Cancel
from fsbench.core.errors import CommandResult, FsbenchError
from fsbench.core.secrets import redact
from fsbench.scenario.plan import Case


def where_of(transport: Transport) -> str:
    """The host name a transport reaches."""
    return transport.host


def stage(inv: Invocation, transport: Transport, raw: Path, place: str) -> str:
    """Input files into raw/ and onto the host that runs the tool; the command line(s) next to them; the
    folder the tool runs in (place: its name below the host's remote_base, fsbench.api.transport.work_name)."""
    work = transport.workdir(raw, place)
    for name, text in inv.files.items():
        (raw / name).write_text(redact(text))
        transport.put_text(f"{work}/{name}", text)
    (raw / "command").write_text(redact("".join(shlex.join(a) + "\n" for a in (inv.steps or [inv.argv]))))
    return work


def fetch(outputs: list[str], transport: Transport, work: str, raw: Path) -> None:
    """The tool's output files into raw/, then its work folder removed (unless it is raw/ itself: locally)."""
    for name in outputs:
        transport.fetch(f"{work}/{name}", raw / name)
    if work != str(raw):
        transport.remove_tree(work)  # raw/ has it now


class ToolRun:
    """How the tool's commands run for one case: its timeout, cancel event, environment and capped outputs."""

    def __init__(self, case: Case, cancel: threading.Event, env: dict[str, str],
                 note: Callable[[CommandResult | None], None]):
        self.case, self.cancel, self.env, self.note = case, cancel, env, note

    def one(self, argv: list[str], transport: Transport, work: str, raw: Path, timeout: float | None = None,
            suffix: str = "", cancel: threading.Event | None = None) -> CommandResult:
        """One command in the work folder, its output into raw/stdout and raw/stderr (with suffix)."""
        r = transport.run(argv, cwd=work, timeout=self.case.timeout_s if timeout is None else timeout,
                          stdout_path=raw / f"stdout{suffix}", stderr_path=raw / f"stderr{suffix}",
                          cancel=self.cancel if cancel is None else cancel, env=self.env)
        self.note(r)
        return r

    def steps(self, inv: Invocation, transport: Transport, work: str, raw: Path,
              drop: Callable[[int], str | None]) -> CommandResult:
        """The tool's command, or its steps in order with drop(i) between them (outputs concatenated)."""
        if not inv.steps:
            return self.one(inv.argv, transport, work, raw)
        deadline = time.monotonic() + self.case.timeout_s
        result = CommandResult(where_of(transport), [], None)  # replaced by the first step's
        with open(raw / "stdout", "wb") as out, open(raw / "stderr", "wb") as err:
            for i, argv in enumerate(inv.steps):
                failed = drop(i) if i else None
                if failed:
                    raise FsbenchError(failed)  # the case fails with it; its earlier steps' output is kept
                result = self.one(argv, transport, work, raw, max(1.0, deadline - time.monotonic()), f".{i}")
                out.write((raw / f"stdout.{i}").read_bytes())
                err.write((raw / f"stderr.{i}").read_bytes())
                if not result.ok:
                    break
        return result

    def each(self, per_host: dict[str, list[str]], transports: dict[str, Transport], works: dict[str, str],
             raw_of: Callable[[str], Path]) -> CommandResult:
        """The tool on every host at once, each in its own raw folder. The first host to fail (its command, or
        the host lost) stops the others and stands for the case; else the longest run does."""
        results: dict[str, CommandResult] = {}
        failures: list[tuple[str, Exception | None]] = []  # in the order they happened
        # the others may be waiting for the failed host at a barrier (NNBench's, metabench's): without this
        # they would wait for it until the case's timeout
        stop = Cancel()
        lock = threading.Lock()

        def run(host: str) -> None:
            raw = raw_of(host)
            try:
                r = self.one(per_host[host], transports[host], works[host], raw, cancel=stop)
            except Exception as exc:  # noqa: BLE001 - raised again below, once the other hosts are stopped
                with lock:
                    failures.append((host, exc))
                stop.set()
                return
            (raw / "exit_status").write_text(f"{r.exit_status}\n")
            results[host] = r
            if not r.ok:
                with lock:
                    failures.append((host, None))
                stop.set()

        threads = [threading.Thread(target=run, args=(h,), name=f"fsbench-{h}", daemon=True) for h in works]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)
                if self.cancel.is_set():  # the case's own cancel (Ctrl-C, a monitor's stop) reaches every host
                    stop.set()
        stop.close()  # every host's command has ended
        if failures:
            host, exc = failures[0]
            if exc is not None:
                raise exc
            return results[host]
        done = [results[h] for h in works if h in results]
        if len(done) < len(works):  # a thread that died without a result (a transport bug)
            lost = ", ".join(h for h in works if h not in results)
            raise FsbenchError(f"{self.case.tool} on {lost} ended without a result")
        return max(done, key=lambda r: r.duration_s)
