"""Which processes and listening ports on a host are a service's own, as one POSIX sh script over /proc.

A process is the service's when fsbench started it for this run and service: its environment carries
FSBENCH_RUN=<run id> and FSBENCH_SERVICE=<name> (the start commands get both), or, for daemons that
overwrite their environment with a process title (redis-server, postgres), its working folder is in
the service's folder, it started after the service's start began and its environment does not carry the
run's marker (fsbench's own commands there, which do, are not the service). A listening port is the service's
when every process holding its socket is. Nothing is ever found or stopped by name.

The script reads /proc (any Linux, through any transport); it needs sh, awk, ls, GNU-style `grep -z`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fsbench.core.units import is_whole_number

SERVICE_TAG = "FSBENCH_SERVICE"
RUN_TAG = "FSBENCH_RUN"

SCRIPT = r"""
set -u
mode=$1 run=$2 name=$3 dir=$4 t0=$5
shift 5
hz=$(getconf CLK_TCK 2>/dev/null) || hz=100
# the folder as the kernel names a working folder (its links resolved), beside the name fsbench gave it
real=$(cd "$dir" 2>/dev/null && pwd -P) || real=$dir
now() { awk -v hz="${hz:-100}" '{ printf "%d\n", $1 * hz }' /proc/uptime; }
cmd() { tr '\000\n' '  ' < "/proc/$1/cmdline" 2>/dev/null | cut -c1-160 | sed 's/ *$//'; }
started() {
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*") "}
  set -- $s
  echo "${20}"
}
# the service's processes (see the module's doc); never this script's own
mine() {
  {
    grep -lsxzF "FSBENCH_RUN=$run" /proc/[0-9]*/environ | while IFS= read -r f; do
      if grep -qsxzF "FSBENCH_SERVICE=$name" "$f"; then p=${f#/proc/}; echo "${p%/environ}"; fi
    done
    ls -ld /proc/[0-9]*/cwd 2>/dev/null | awk -v d="$dir" -v r="$real" '{
      i = index($0, " -> "); if (i == 0) next
      c = substr($0, i + 4); sub(/ \(deleted\)$/, "", c)
      if (c != d && index(c, d "/") != 1 && c != r && index(c, r "/") != 1) next
      p = substr($0, 1, i - 1); sub(/.*\/proc\//, "", p); sub(/\/cwd$/, "", p); print p }' |
    while read -r p; do
      # the run's marker without the service's tag: another command of fsbench's (a probe, a stop command,
      # the SSH transport's wrapper), not a process of the service
      grep -qsxzF "FSBENCH_RUN=$run" "/proc/$p/environ" && continue
      st=$(started "$p") && [ "$st" -ge "$t0" ] && echo "$p"
    done
  } | sort -un | grep -vx "$$"
  true
}
# "PORT INODE" of every listening TCP socket (IPv4 and IPv6) on the ports given
listening() {
  for port in "$@"; do
    hex=$(printf '%04X' "$port")
    awk -v h="$hex" -v p="$port" '$4 == "0A" { n = split($2, a, ":"); if (a[n] == h) print p, $10 }' \
      /proc/net/tcp /proc/net/tcp6 2>/dev/null
  done
}
# "PID INODE" for every socket inode given (in "|i1|i2|" form) that a visible process holds
holders() {
  ls -l /proc/[0-9]*/fd 2>/dev/null | awk -v want="$1" '
    /^\/proc\/[0-9]+\/fd:$/ { pid = $0; sub(/^\/proc\//, "", pid); sub(/\/fd:$/, "", pid); next }
    / -> socket:\[[0-9]+\]$/ { i = $NF; gsub(/[^0-9]/, "", i); if (index(want, "|" i "|")) print pid, i }' |
  sort -u
}
# one line per port: free PORT | ours PORT PID | theirs PORT PID CMD | hidden PORT
ports() {
  pairs=$(listening "$@")
  own=" $(mine | tr '\n' ' ') "
  want="|$(echo "$pairs" | awk '{ printf "%s|", $2 }')"
  held=$(holders "$want")
  for port in "$@"; do
    inodes=$(echo "$pairs" | awk -v p="$port" '$1 == p { print $2 }')
    if [ -z "$inodes" ]; then echo "free $port"; continue; fi
    for i in $inodes; do
      pids=$(echo "$held" | awk -v i="$i" '$2 == i { print $1 }')
      if [ -z "$pids" ]; then echo "hidden $port"; continue; fi
      for p in $pids; do
        case $own in *" $p "*) echo "ours $port $p" ;; *) echo "theirs $port $p $(cmd "$p")" ;; esac
      done
    done
  done
}
case $mode in
  now) now ;;
  ports) echo "now $(now)"; ports "$@" | sort -u ;;
  procs) for p in $(mine); do echo "$p $(started "$p") $(cmd "$p")"; done ;;
  guard)
    # run the command after "--" only when no port is held by a process that is not the service's
    list=
    while [ "$1" != -- ]; do list="$list $1"; shift; done
    shift
    bad=$(ports $list | grep -v -e '^free ' -e '^ours ')
    if [ -n "$bad" ]; then
      echo "fsbench: not running the stop command: a port of service $name is held by a process" \
        "fsbench did not start: $bad" >&2
      exit 3
    fi
    exec "$@" ;;
  kill)
    # let the service's processes end on their own for $1 s, then TERM, $2 s later KILL what is left
    wait_s=${1:-0} grace_s=${2:-10}
    i=0
    while [ -n "$(mine)" ] && [ $i -lt $((wait_s * 5)) ]; do sleep 0.2 2>/dev/null || sleep 1; i=$((i + 1)); done
    left=$(mine)
    [ -z "$left" ] && exit 0
    for p in $left; do echo "term $p $(cmd "$p")"; done
    kill -s TERM $left 2>/dev/null
    kill -s CONT $left 2>/dev/null  # a stopped process (SIGSTOP) takes its TERM only once continued
    i=0
    while [ -n "$(mine)" ] && [ $i -lt $((grace_s * 5)) ]; do sleep 0.2 2>/dev/null || sleep 1; i=$((i + 1)); done
    left=$(mine)
    [ -z "$left" ] && exit 0
    for p in $left; do echo "kill $p $(cmd "$p")"; done
    kill -s KILL $left 2>/dev/null
    sleep 1
    left=$(mine)
    [ -z "$left" ] && exit 0
    for p in $left; do echo "alive $p $(cmd "$p")"; done
    exit 1 ;;
  *) echo "fsbench-service: unknown mode $mode" >&2; exit 2 ;;
esac
"""


@dataclass(frozen=True)
class Identity:
    """What tells a service's processes from everyone else's on its host."""

    run_id: str
    name: str
    dir: str
    since: int = 0  # the host's clock ticks since boot when the start began (0: any start time)

    def argv(self, mode: str, *args: str) -> list[str]:
        """The script in one mode, as an argv list (no shell quoting needed)."""
        return ["/bin/sh", "-c", SCRIPT, "fsbench-service", mode, self.run_id, self.name, self.dir,
                str(self.since), *args]

    def tag(self, argv: list[str]) -> list[str]:
        """argv run with the tags that make what it starts this service's."""
        return ["env", f"{RUN_TAG}={self.run_id}", f"{SERVICE_TAG}={self.name}", *argv]

    def guarded(self, ports: list[int], argv: list[str]) -> list[str]:
        """argv run only when none of the ports is held by a process that is not the service's."""
        return self.argv("guard", *(str(p) for p in ports), "--", *argv)

    def kill(self, wait_s: int = 0, grace_s: int = 10) -> list[str]:
        """Stop every process of the service still running: TERM, then KILL."""
        return self.argv("kill", str(wait_s), str(grace_s))


@dataclass
class PortState:
    """Who listens on one port: nobody, the service, someone else, or a process fsbench cannot see."""

    port: int
    state: str  # free | ours | theirs | hidden
    others: list[str] = field(default_factory=list)  # "pid N (`command`)" of the processes not the service's


def parse_now(text: str) -> int | None:
    """The host's clock ticks since boot, from the script's `ports` output."""
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "now" and is_whole_number(rest.strip()):
            return int(rest)
    return None


def parse_ports(text: str) -> dict[int, PortState]:
    """The script's `ports` output, one state per port (theirs and hidden win over ours)."""
    out: dict[int, PortState] = {}
    rank = {"free": 0, "ours": 1, "hidden": 2, "theirs": 3}
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word not in rank:
            continue
        parts = rest.split(" ", 2)
        try:
            port = int(parts[0])
        except ValueError:
            continue
        st = out.setdefault(port, PortState(port, "free"))
        if rank[word] > rank[st.state]:
            st.state = word
        who = (f"pid {parts[1]} (`{parts[2].strip() if len(parts) > 2 else '?'}`)" if word == "theirs"
               else "a process fsbench cannot see (another user's)" if word == "hidden" else "")
        if who and who not in st.others:
            st.others.append(who)
    return out
