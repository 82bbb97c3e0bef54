"""Host names as a reader takes them in: runs of numbered names joined (client1-client16), past a handful."""

from __future__ import annotations

import re

#: past this many hosts, placement is shown per group of hosts that run alike, not one line or column per host
COMPACT_FROM = 9


def host_ranges(hosts: list[str]) -> str:
    """Host names with runs of numbered names joined: client1-client16, meta1 (order kept)."""
    out: list[str] = []
    run: list[tuple[str, int, str]] = []  # (prefix, number, name) of the run being built

    def close() -> None:
        if len(run) > 2:
            out.append(f"{run[0][2]}-{run[-1][2]}")
        else:
            out.extend(r[2] for r in run)
        run.clear()

    for h in hosts:
        m = re.match(r"^(.*?)([0-9]+)$", h)
        if m and run and run[-1][0] == m.group(1) and int(m.group(2)) == run[-1][1] + 1:
            run.append((m.group(1), int(m.group(2)), h))
            continue
        close()
        if m:
            run.append((m.group(1), int(m.group(2)), h))
        else:
            out.append(h)
    close()
    return ", ".join(out)


def listed(hosts: list[str], among: int) -> str:
    """Hosts named in a sentence: as ranges when the case has COMPACT_FROM hosts or more (`among`), else each."""
    return host_ranges(hosts) if among >= COMPACT_FROM else ", ".join(hosts)
