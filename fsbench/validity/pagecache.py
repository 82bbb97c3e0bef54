"""Where no backend counts what it served (a local file system, ext4 on RBD): does the working set a tool
read fit in the host's page cache, and was that cache dropped before the read?"""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.api.case import Case
from fsbench.api.tools import DeclaresWorkingSet
from fsbench.api.transport import Transport
from fsbench.core.units import format_value
from fsbench.validity.settings import Thresholds


@dataclass(frozen=True)
class HostCache:
    """The tool host's memory and page cache when the tool started, and what the tool declared it reads."""

    host: str
    mem_total: int
    cached: int | None
    #: the page cache was dropped on this host just before the tool (the case's drop_caches)
    dropped: bool
    #: the distinct bytes the tool's buffered (not O_DIRECT) reads cover; None: the tool cannot say
    working_set: float | None
    #: the target's file system keeps its data in memory (tmpfs, ramfs): memory is the storage there
    in_memory: str = ""


#: file systems whose data lives in the page cache itself: a read there measures memory by design
MEMORY_FILE_SYSTEMS = ("tmpfs", "ramfs")

#: the tool host's facts at the tool's start in one command (one process start after the case's drop, and
#: over SSH one channel, where there were two): its /proc/meminfo, then the type of the file system at the
#: target's path (none without a path)
_FACTS = 'cat /proc/meminfo; echo @@; [ -z "$1" ] || exec stat -f -c %T -- "$1"'


def facts_argv(path: str) -> list[str]:
    """The command that reads the facts: /proc/meminfo, "@@", then the file system type at path."""
    return ["/bin/sh", "-c", _FACTS, "fsbench-page-cache", path]


def read_facts(transport: Transport, path: str) -> tuple[dict[str, int], str]:
    """(/proc/meminfo of the host in bytes, {} when unreadable; the type of the file system at path when it
    keeps its data in memory (tmpfs, ramfs), else "")."""
    r = transport.run(facts_argv(path), timeout=15)
    memory, sep, kind = r.extra.get("stdout", "").partition("@@\n")
    out: dict[str, int] = {}
    for line in memory.splitlines() if sep else []:
        name, _, rest = line.partition(":")
        words = rest.split()
        if words and words[0].isdigit():
            out[name] = int(words[0]) * (1024 if words[1:] == ["kB"] else 1)
    kind = kind.strip() if r.ok else ""  # the type only from a stat that succeeded
    return out, kind if kind in MEMORY_FILE_SYSTEMS else ""


def host_cache(transport: Transport, dropped: bool, tool: object, case: Case, path: str = "") -> HostCache | None:
    """The facts at the tool's start, or None when the host's memory cannot be read."""
    info, in_memory = read_facts(transport, path)
    if "MemTotal" not in info:
        return None
    ws = None
    if isinstance(tool, DeclaresWorkingSet):
        ws = tool.read_working_set(case.options, case.job_file_text, case.jobs, case.job_file)
    return HostCache(transport.host, info["MemTotal"], info.get("Cached"), dropped, ws, in_memory)


def _b(n: float) -> str:
    return format_value(float(n), "B")


class PageCache:
    """'working set fits in the page cache': a buffered read of fewer bytes than the page cache can hold,
    with no drop before it (or read more than once), may have been served from memory, not the storage."""

    name = "working set fits in the page cache"

    def judge_host(self, tool: str, read: float, facts: HostCache, limits: Thresholds) -> tuple[bool, str] | None:
        """(holds, detail) for a read of `read` bytes, None when there is nothing to judge."""
        if read <= 0 or facts.working_set is None:
            return None
        ws = facts.working_set
        if facts.in_memory:
            return True, (f"the target is a {facts.in_memory} on {facts.host}: its data lives in memory, so a read "
                          "from memory is what it measures")
        if ws <= 0:
            return True, f"{tool} read with O_DIRECT (direct=1): the page cache is bypassed"
        room = limits.page_cache_share * facts.mem_total
        said = (f"{tool} read {_b(read)} of a {_b(ws)} working set; the page cache of {facts.host} can hold "
                f"{_b(room)} ({limits.page_cache_share * 100:.0f} % of its {_b(facts.mem_total)} of memory)")
        if ws > room:
            return True, f"{said}: more than it holds"
        again = read > ws * (1 + limits.reread_margin)
        if not facts.dropped:
            cached = f", {_b(facts.cached)} cached when it started" if facts.cached is not None else ""
            return False, (f"{said}, and it was not dropped before the read{cached}: the read may have come from "
                           "memory (drop_caches: true, or a working set bigger than the page cache)")
        if again:
            return False, (f"{said}; dropped before the read, but {tool} read it {read / ws:.1f} times: after "
                           "the first pass the reads may have come from memory (read each byte once, or a "
                           "working set bigger than the page cache)")
        return True, f"{said}; dropped before the read, read once"


PAGE_CACHE = PageCache()
