"""Checks before the first case: hosts reachable, tools present and alike, targets there, space, clocks.

A failed preflight raises PreflightError (exit 4) with a table of what failed where; nothing ran.
"""

from __future__ import annotations

import functools
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from fsbench.api.tools import LayoutBytes
from fsbench.api.transport import Transport
from fsbench.core.at_once import Pending, each
from fsbench.core.errors import FsbenchError, PreflightError
from fsbench.core.path_safety import resolved_unsafe_reason
from fsbench.host import facts
from fsbench.kinds import KINDS
from fsbench.scenario.model import Scenario, Target
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool
from fsbench.transport.group import run_on_group

SKEW_WARN_S = 1.0


@dataclass
class Preflight:
    """What preflight found: host facts (for hosts.csv), failures and warnings."""

    hosts: list[dict] = field(default_factory=list)
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def raise_if_failed(self) -> None:
        if self.failures:
            raise PreflightError(self.failures)


def run_preflight(sc: Scenario, cases: list[Case], transports: dict[str, Transport]) -> Preflight:
    """Every check, on every host, in parallel where it can be."""
    pf = Preflight()
    reach = run_on_group(transports, ["true"], timeout=60)
    for host, r in reach.failed().items():
        detail = [line.strip() for line in (r.stderr_tail or r.stdout_tail or "").strip().splitlines() if line.strip()]
        pf.failures.append((host, "reachable", " ".join(detail) if detail else r.describe()))
    alive = {h: t for h, t in transports.items() if h not in reach.failed()}
    tools = {name: get_tool(name).version_argv() for name in sorted({c.tool for c in cases})}

    def gather() -> dict[str, dict]:
        with ThreadPoolExecutor(max_workers=max(1, min(64, len(alive)))) as pool:
            return dict(zip(alive, pool.map(lambda t: _facts(t, tools), alive.values())))

    # the hosts' facts, the servers' programs and the targets asked at once (none needs another's answer: each
    # host's probe took 40 ms here, its target's checks as long again); their findings in the former order
    servers, targets = Preflight(), Preflight()
    checks = [Pending(lambda: _server_checks(sc, cases, alive, servers), "fsbench-preflight-servers"),
              Pending(lambda: _target_checks(sc, cases, alive, targets), "fsbench-preflight-targets")]
    try:
        gathered = gather()
    finally:  # no check is left running on any host, whatever happened
        for check in checks:
            check.wait()
    for check in checks:
        check.result()  # a check's own error, raised as before
    pf.hosts = [{**(gathered.get(h) or {"host": h, "reachable": "no"}),  # its groups: the report groups hosts by them
                 "groups": " ".join(sc.hosts[h].groups) if h in sc.hosts else ""} for h in transports]
    _tool_checks(sc, cases, gathered, pf)
    pf.failures += servers.failures + targets.failures
    for h, row in gathered.items():
        skew = row.get("clock_skew_s")
        if isinstance(skew, float) and abs(skew) > SKEW_WARN_S:
            pf.warnings.append(f"the clock of {h} is {skew:+.1f}s off this machine's: timestamps will disagree")
    return pf


def _facts(transport: Transport, tools: dict[str, list[str]]) -> dict:
    try:
        row = facts.gather(transport, tools)
        before = time.time()
        r = transport.run(["date", "+%s.%N"], timeout=15)
        after = time.time()
        if r.ok:
            row["clock_skew_s"] = round(float(r.extra.get("stdout", "0").strip() or 0) - (before + after) / 2, 3)
        return row
    except (FsbenchError, ValueError) as exc:
        return {"host": transport.host, "error": str(exc)}


def may_skip(sc: Scenario, cases: list[Case], tool: str) -> bool:
    """Whether a missing tool skips its cases (bring-your-own tools, optional workloads) or refuses the run."""
    return get_tool(tool).bring_your_own or all(sc.workloads[c.workload].optional for c in cases if c.tool == tool)


def _tool_checks(sc: Scenario, cases: list[Case], gathered: dict[str, dict], pf: Preflight) -> None:
    for tool in sorted({c.tool for c in cases}):
        hosts = sorted({h for c in cases if c.tool == tool for h in c.hosts if h in gathered})
        versions = {h: gathered[h].get(f"{tool}_version", "not found") for h in hosts}
        present = {h: v for h, v in versions.items() if v != "not found"}
        absent = sorted(set(versions) - set(present))
        if present and absent:  # partly missing is always an error: results would mix host sets
            for h in absent:
                pf.failures.append((h, f"{tool} installed", f"missing here but present on {', '.join(present)}: "
                                    f"install it (fsbench deploy) or drop this host"))
        elif absent and not may_skip(sc, cases, tool):
            for h in absent:
                pf.failures.append((h, f"{tool} installed", f"{tool} is not installed here (`{tool}` workloads "
                                    "run on this host): `fsbench deploy SCENARIO` puts it there, or mark the "
                                    "workload `optional: true` to skip its cases"))
        elif absent:
            pf.warnings.append(f"{tool} is not installed on {', '.join(absent)}: its cases will be skipped")
        if len(set(present.values())) > 1:
            listing = "; ".join(f"{h}: {v}" for h, v in present.items())
            pf.failures.append(("(all)", f"{tool} version", f"differs between hosts ({listing}): results would "
                                "not compare; install the same version everywhere"))


def _server_checks(sc: Scenario, cases: list[Case], alive: dict[str, Transport], pf: Preflight) -> None:
    """The programs a case across hosts starts in the background on some of them (NNBench's barrier:
    metabench on the first host) are there: a tool's version probe covers only the tool itself."""
    from fsbench.run.plan_show import plan_context  # the plan's commands, as plan --show and placement.csv build them

    wanted: dict[tuple[str, str], tuple[Case, list[str]]] = {}  # (host, program): the first case that starts it
    for case in cases:
        if len(case.hosts) < 2:
            continue
        try:
            ctx, folder = plan_context(sc, case)
            servers = get_tool(case.tool).build(case, folder, ctx).servers
        except Exception:  # noqa: BLE001 - the case itself reports a command it cannot build
            continue
        for host, argv in servers.items():
            program = next((w for w in argv if w != "env" and "=" not in w), "")
            if program and host in alive:
                wanted.setdefault((host, program), (case, argv))

    def installed(key: tuple[str, str]) -> bool:
        host, program = key
        return alive[host].run(["/bin/sh", "-c", f"command -v {shlex.quote(program)}"], timeout=30).ok

    # every host asked at once (one after the other, 1,000 hosts would wait 1,000 round trips); the failures in
    # the order the cases name them
    keys = list(wanted)
    for (host, program), ok in zip(keys, each(keys, installed)):
        if not ok:
            case, argv = wanted[(host, program)]
            pf.failures.append((host, f"{program} installed", f"{case.tool} across {', '.join(case.hosts)} "
                                f"starts `{shlex.join(argv)}` here ({case.workload}): {program} is not "
                                "installed; `fsbench deploy SCENARIO` puts it there"))


def _target_checks(sc: Scenario, cases: list[Case], alive: dict[str, Transport], pf: Preflight) -> None:
    for target in sc.targets.values():
        tcases = [c for c in cases if c.target == target.name]
        if not tcases:
            continue
        needed = peak_bytes(tcases)
        kind = KINDS.get(target.kind)
        if kind.address != "directory":
            continue  # devices and URLs: their kind's setup checks them, there is no folder to measure
        prepared_later = bool(target.setup) or kind.name != "directory"  # a kind with its own setup mounts it
        hosts = [h for h in sc.resolve_hosts(target.hosts) if h in alive]
        # every host checked at once; the failures in the hosts' order
        for found in each(hosts, functools.partial(_target_host, target, alive, needed, prepared_later)):
            pf.failures += found


def _target_host(target: Target, alive: dict[str, Transport], needed: float, prepared_later: bool,
                 h: str) -> list[tuple[str, str, str]]:
    """What is wrong with a directory target on host h: unsafe, missing, of another type, short of space."""
    t = alive[h]
    unsafe = None if target.destructive else resolved_unsafe_reason(t, target.path)
    if unsafe:
        return [(h, f"target {target.name}", f"{unsafe}; fsbench will not write there "
                 "(point the target elsewhere, or set `destructive: true` on it)")]
    out = []
    exists = t.is_dir(target.path)
    if not exists and (dead := _dead_mount(t, target.path)):
        return [(h, f"target {target.name}", dead)]
    if not prepared_later:
        if not exists:
            return [(h, f"target {target.name}", f"{target.path} is not an existing directory "
                     "(mount it, or give the target setup commands)")]
        if target.fstype:
            m = facts.mount_of(t, target.path)
            if m["fstype"] != target.fstype:
                out.append((h, f"target {target.name}", f"{target.path} is on {m['fstype'] or '?'} "
                            f"({m['source']}), the scenario expects {target.fstype}"))
    avail = _available(t, target.path)
    if needed and avail is not None and avail < needed:
        out.append((h, f"space on {target.name}", f"{avail / 2**30:.1f} GiB free under "
                    f"{target.path}, a case needs about {needed / 2**30:.1f} GiB"))
    return out


def _dead_mount(t: Transport, path: str) -> str | None:
    """Why path cannot be used as it stands: a FUSE mount whose client is gone (ENOTCONN), else None.

    fsbench cleans up its own dead mounts from a run's leftovers before the preflight; one still here is
    not in any run it knows of, so it is left alone and named.
    """
    r = t.run(["stat", "-c", "%F", path], timeout=15)
    said = r.stderr_tail
    if r.ok or "not connected" not in said:
        return None
    return (f"{path} is a FUSE mount whose client has gone (Transport endpoint is not connected); no run of "
            f"fsbench's records made it, so fsbench leaves it: unmount it (`umount -l {path}`) and run again")


def _bytes_needed(case: Case) -> float:
    """Data one case writes (fio: every job's size x numjobs; other tools: unknown, 0)."""
    tool = get_tool(case.tool)
    if not isinstance(tool, LayoutBytes):
        return 0.0
    try:
        return float(tool.layout_bytes(case.options, case.job_file_text, case.jobs, case.job_file))
    except (ValueError, TypeError):
        return 0.0


def peak_bytes(cases: list[Case]) -> float:
    """The most a target holds at once: a case's own files, plus every dataset still to be read then.

    A dataset lives from its first case to its last (the runner removes it then); its size is the
    largest of its cases' layouts (fio adds missing files, never shrinks them).
    """
    sizes: dict[str, float] = {}
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, c in enumerate(cases):
        if c.dataset:
            sizes[c.dataset] = max(sizes.get(c.dataset, 0.0), _bytes_needed(c))
            first.setdefault(c.dataset, i)
            last[c.dataset] = i
    peak = 0.0
    for i, c in enumerate(cases):
        live = sum(sizes[d] for d in sizes if first[d] <= i <= last[d])
        peak = max(peak, live + (0.0 if c.dataset else _bytes_needed(c)))
    return peak


def _available(t: Transport, path: str) -> float | None:
    """Free bytes of the file system holding path (or its nearest existing parent)."""
    probe = path
    while probe not in ("", "/") and not t.is_dir(probe):
        probe = probe.rsplit("/", 1)[0] or "/"
    r = t.run(["df", "-P", "-B1", probe or "/"], timeout=15)
    lines = r.extra.get("stdout", "").splitlines() if r.ok else []
    try:
        return float(lines[1].split()[3]) if len(lines) > 1 else None
    except (IndexError, ValueError):
        return None
