"""Run one command (or one per host) on many hosts in parallel; every host's result is collected first."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from fsbench.api.transport import Transport
from fsbench.core.at_once import Pending, each
from fsbench.core.errors import CommandResult, FsbenchError


@dataclass
class GroupResult:
    """Per-host results of a fan-out, in the order the hosts were given."""

    results: dict[str, CommandResult] = field(default_factory=dict)

    def __getitem__(self, host: str) -> CommandResult:
        return self.results[host]

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def failed(self) -> dict[str, CommandResult]:
        """Hosts whose command failed, timed out, was interrupted or never ran."""
        return {h: r for h, r in self.results.items() if not r.ok}

    def succeeded(self) -> dict[str, CommandResult]:
        """Hosts whose command exited 0."""
        return {h: r for h, r in self.results.items() if r.ok}

    @property
    def ok(self) -> bool:
        """True when every host succeeded."""
        return all(r.ok for r in self.results.values())

    def raise_if_failed(self, what: str = "command") -> None:
        """Raise GroupFailed, carrying every host's result, when any host failed."""
        if not self.ok:
            raise GroupFailed(self, what)


class GroupFailed(FsbenchError):
    """Some hosts of a fan-out failed; `.group` holds every host's result, the good ones too."""

    def __init__(self, group: GroupResult, what: str = "command"):
        self.group = group
        bad = group.failed()
        lines = [f"{what} failed on {len(bad)} of {len(group)} hosts ({', '.join(bad)}):"]
        lines += [f"  {r.describe()}".replace("\n", "\n  ") for r in bad.values()]
        super().__init__("\n".join(lines))


def goes_together(tr: Transport) -> bool:
    """Whether the host's transport runs a step's commands together with its other hosts' (`run_together`:
    ssh-relay), so that a step's one command a host is best sent through run_on_group."""
    return _together(tr) is not None


def _together(tr: Transport) -> Callable[..., list[CommandResult | BaseException]] | None:
    """The transport kind's `run_together`, when it has one."""
    return getattr(type(tr), "run_together", None)


def run_on_group(transports: dict[str, Transport], argv: list[str] | dict[str, list[str]], *,
                 timeout: float | None = 60.0, max_workers: int | None = None, cwd: str | None = None,
                 env: dict[str, str] | None = None, cancel: threading.Event | None = None) -> GroupResult:
    """Run argv (or argv[host]) on every host at once; a host that cannot be reached is a failed result."""
    per_host = argv if isinstance(argv, dict) else {h: argv for h in transports}
    missing = [h for h in transports if h not in per_host]
    if missing:
        raise ValueError(f"no command given for {', '.join(missing)}")
    if not transports:
        return GroupResult()
    hosts = list(transports)
    # a transport kind that runs a step's commands together (ssh-relay: a frame a host, no thread a host) gets
    # its hosts in one call; every other host has a thread of `each`, as before
    together: dict[Callable[..., list[CommandResult | BaseException]], list[str]] = {}
    for h in hosts:
        runner = _together(transports[h]) if env is None else None
        if runner is not None:
            together.setdefault(runner, []).append(h)
    grouped = {h for group in together.values() for h in group}
    alone = [h for h in hosts if h not in grouped]
    results: dict[str, CommandResult] = {}
    side = Pending(lambda: each(alone, lambda h: _run_one(h, transports[h], per_host[h], timeout, cwd, env, cancel),
                                workers=max_workers or 32)) if alone else None
    for runner, group in together.items():
        start = time.monotonic()
        try:
            done = runner([(transports[h], list(per_host[h])) for h in group], timeout=timeout, cwd=cwd,
                          cancel=cancel)
        except Exception as exc:  # noqa: BLE001 - as _run_one: every host of the group gets the reason
            done = [exc] * len(group)
        results.update({h: error_result(h, per_host[h], r, start) if isinstance(r, BaseException) else r
                        for h, r in zip(group, done, strict=True)})
    if side is not None:  # _run_one turns any error into the host's result
        results.update(zip(alone, side.result(), strict=True))
    return GroupResult({h: results[h] for h in hosts})


def _run_one(host: str, transport: Transport, argv: list[str], timeout: float | None, cwd: str | None,
             env: dict[str, str] | None, cancel: threading.Event | None) -> CommandResult:
    start = time.monotonic()
    try:
        return transport.run(list(argv), cwd=cwd, timeout=timeout, env=env, cancel=cancel)
    # any error on one host must become that host's result, or it would hide every other host's
    except Exception as exc:  # noqa: BLE001
        return error_result(host, argv, exc, start)


def error_result(host: str, argv: list[str], exc: BaseException, start: float) -> CommandResult:
    """A host whose command could not run: a failed result that says why."""
    return CommandResult.not_run(host, argv, exc, time.monotonic() - start)
