"""The /proc sampler: a POSIX sh loop that needs nothing on the host but sh, cat, sleep, tr, grep and /proc
(and awk, where there is one, to pass each sample on in one piece: WHOLE_SAMPLES).

It runs through any Transport (local now, SSH later) and prints one block per sample:

    #fsbench-monitor 1 pid=<sampler pid> interval=<s> ncpu=<cpuN lines in /proc/stat> scan=<pids> marker=<1|0>
    #watch <name>                      one per watched process name, once, before the first sample
    #client <name>US<word>US<word>...  the target's client, when there is one: its name, and the words
                                       its command line holds (US: the 0x1f byte), once
    #folder <start tick> <folder>      one per folder of a service fsbench started on this host (numbered
                                       from 1 in order), with the host's clock tick when that start began
    @ <uptime s> <seq>                 a sample starts: /proc/uptime's first field (monotonic, boot-based)
    cpu  <user> <nice> <system> <idle> <iowait> <irq> <softirq> <steal> ...   first line of /proc/stat
    p <pid> <name>                     one per pid whose /proc/PID/comm is a watched name (as of the
                                       last pid scan: see SCAN_PIDS_PER_S; the parser checks the comm)
    c <pid> <arg>US<arg>US...          after the p line of each pid of the client's name: its command
                                       line as of that scan (NUL and line breaks shown as US)
    m <pid>                            after the p and c lines, when marker=1: the pid carries this run's
                                       marker (FSBENCH_RUN=<the sampler's own value>) in /proc/PID/environ
    n <pid>                            ... its environment was read and has no such marker; a pid with
                                       neither line is unknown (its environment could not be read)
    w <pid> <k>                        after those, when there are #folder lines: the pid's working folder
                                       (/proc/PID/cwd) is #folder k or inside it
    <cat /proc/meminfo /proc/diskstats /proc/net/dev, then /proc/PID/stat and /proc/PID/status of each
     pid above, verbatim; a pid that exited meanwhile simply has no lines>
    . <seq>                            the sample is complete

Names match /proc/PID/comm (what `ps -o comm` and `pgrep NAME` show), which the kernel cuts to 15
bytes: a longer watched name matches a 15-byte comm that starts it. A name alone is not the client:
`juicefs bench` and `juicefs stats` are `juicefs` too, so the parser keeps, of the client's name, the
pids whose command line holds the kind's words (the mount point; `mount` for JuiceFS). A name alone is
not this run's either: another run, or another user, may run a process of that name on the same host.
So each pid scan also says which watched pids carry the run's marker (fsbench.run.leftovers.MARKER, which
every command of a run, the sampler included, has in its environment; marker=0 when the sampler has none
and so cannot tell), and which work in the folder of a service fsbench started: redis-server and postgres
write their process title over their environment, so their marker is gone, but they run in their
service's folder, as fsbench.services.processes knows a service's processes; a process there that started
after the service's start is the run's too (the parser decides that from its start time). The parser
keeps, of a name, this run's processes when it has any (see fsbench.monitor.processes). JuiceFS rewrites
its command line into one title, cut at 255 bytes (often before the mount point): the marker then also
says such a cut title is this run's. The loop ends when
killed (the runner cancels it and the transport kills its process group), when its stdout goes away
(SIGPIPE), or after `max_s` seconds, so an abandoned sampler never runs for ever.

Sampling is dense at first: the first samples come every `first_interval_s` (0.1 s), and the interval
doubles every DOUBLE_EVERY samples up to the scenario's, so a case of a second has about ten samples
(memory peaks need them) while a long one costs no more than before. The runner also stops the sampler
right after the tool, and the sampler's last sample is taken on the way out, so CPU (utime + stime
deltas) covers the window to the tick even when it is shorter than one interval.

Cost per sample: builtins only (`read`, `case`, `printf`) plus one `cat` and one `sleep`; a pid scan
adds one `tr` per pid of the client's name (its command line holds NULs, which sh cannot read), and one
`grep -z` for the environments of all the watched pids it found together (none when it found none): an
environment is a few KiB, so reading them costs little beside that grep's fork and exec; with service
folders, one `ls` for the working folders of those pids together. A host with
fewer pids than `scan=` is scanned every sample. Measured on a 2-core VM with 250 pids and 3 watched
processes: 4.8 ms of CPU per sample without the marker check, 6.3 ms with it (0.6 % of a core at 1 s);
the working folders' `ls` adds about 0.5 ms per scan (3.6 ms against 4.1 ms, 73 pids and 4 watched).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: first token of the header line; also the sampler's $0, so `pgrep -f fsbench-monitor` finds it
MAGIC = "fsbench-monitor"
#: the kernel's TASK_COMM_LEN minus the terminating NUL
COMM_LEN = 15
#: separates the words of a command line in the raw output (the ASCII unit separator)
US = "\x1f"

#: /proc/PID/comm reads per second of interval: ~10 us each, so the pid scan stays near 0.5 % of a core
SCAN_PIDS_PER_S = 500
#: the first interval of every sampler (or the scenario's, when shorter): a short case still gets samples
FIRST_INTERVAL_S = 0.1
#: samples at one interval before it doubles (the dense start ends after about a second and a half)
DOUBLE_EVERY = 10

# Arguments arrive as positional parameters: $1 interval (ms), $2 max seconds, $3 pids per scan-sample
# at that interval, $4 the client's name ("" when none), $5 its words (US-separated), $6 the first
# interval (ms), $7 the services' folders ("<start tick> <folder>" entries, each ended by US), then the
# other names. A command
# line is read with tr: NUL separates its words, and every byte Python's splitlines() breaks on becomes
# US too, so an argument can never start a line of its own.
# Why builtins: a `read` from /proc costs a few syscalls, a fork+exec ~1 ms.
# Opening /proc/PID/comm dominates the cost, so on a host with many processes the scan runs only
# every ceil(pids / $3) samples; the pids already found are still sampled every time.
# $files only ever holds /proc/<digits>/stat|status paths built here, so splitting it is safe.
SCRIPT = r"""
LC_ALL=C; export LC_ALL
# TERM/HUP/INT: take one last sample (the case's tail) and leave; a signal that arrives mid-sample only
# marks the stop, so a block is never interrupted by another. The trap also makes sh reap its children.
busy=0 stop=0
trap 'if [ "$busy" = 1 ]; then stop=1; else sample; exit 0; fi' HUP INT TERM
ivms=$1 mx=$2 sp=$3 cn=$4 cw=$5 ms=$6 rest=$7
shift 7
# $1: seconds as sleep(1) reads them (plain decimals) from milliseconds
secs() { r=$(($1 % 1000)); case ${#r} in 1) r=00$r ;; 2) r=0$r ;; esac; iv=$(($1 / 1000)).$r; }
secs "$ivms"
n=0
while read -r l; do
  case $l in cpu[0-9]*) n=$((n + 1)) ;; cpu*) ;; *) break ;; esac
done < /proc/stat
# marker=1: the sampler knows the run's marker, so its pid scans say which processes carry it
mk=0; [ -z "${FSBENCH_RUN:-}" ] || mk=1
printf '#fsbench-monitor 1 pid=%s interval=%s ncpu=%s scan=%s marker=%s\n' "$$" "$iv" "$n" "$sp" "$mk"
all=/
for w in "$@"; do printf '#watch %s\n' "$w"; all="$all$w/"; done
if [ -n "$cn" ]; then printf '#client %s\037%s\n' "$cn" "$cw"; all="$all$cn/"; fi
# "<k> <folder>" entries, each ended by US: every folder as given and as the kernel names a working folder
us=$(printf '\037') fl= k=0
while [ -n "$rest" ]; do
  e=${rest%%"$us"*} rest=${rest#*"$us"} k=$((k + 1))
  printf '#folder %s\n' "$e"
  d=${e#* }
  r=$(cd "$d" 2>/dev/null && pwd -P) || r=$d
  fl="$fl$k $d$us$k $r$us"
done
read -r up _ < /proc/uptime
# uptime in hundredths; the 1 prefix keeps a fraction like 08 from reading as octal
end=$((${up%.*} * 100 + 1${up#*.} - 100 + mx * 100))
s=0 next=1 files= envs= cwds= pl=
sample() {
  busy=1
  s=$((s + 1))
  if [ "$s" -ge "$next" ]; then
    files= envs= cwds= pl= n=0
    for d in /proc/[0-9]*; do
      n=$((n + 1))
      IFS= read -r c < "$d/comm" || continue
      # one pattern test rejects most pids; the exact test below decides (comm is cut to 15 bytes)
      case $all in */"$c"/*) ;; *) [ ${#c} -eq 15 ] || continue ;; esac
      # the watched names, from the /-separated list (a function's "$@" is its own arguments)
      rest=${all#/}
      while [ -n "$rest" ]; do
        w=${rest%%/*} rest=${rest#*/}
        if [ "$c" = "$w" ] || { [ ${#c} -eq 15 ] && case $w in "$c"*) true ;; *) false ;; esac; }; then
          pl="$pl
p ${d#/proc/} $w"
          if [ "$w" = "$cn" ]; then
            cl=$(tr '\000\n\r\013\014\034\035\036' '\037\037\037\037\037\037\037\037' < "$d/cmdline")
            pl="$pl
c ${d#/proc/} $cl"
          fi
          files="$files $d/stat $d/status" envs="$envs $d/environ" cwds="$cwds $d/cwd"
          break
        fi
      done
    done 2>/dev/null
    # which watched pids are this run's: one grep for all their environments per scan (not per pid);
    # -c prints "<file>:<count>" for each file it could read, nothing for one it could not (unknown)
    if [ "$mk" = 1 ] && [ -n "$envs" ]; then
      for l in $(grep -HcsxzF "FSBENCH_RUN=$FSBENCH_RUN" $envs 2>/dev/null); do
        e=${l#/proc/} e=${e%%/*}
        case $l in *:0) pl="$pl
n $e" ;; *:[0-9]*) pl="$pl
m $e" ;; esac
      done
    fi
    # which watched pids work in a service's folder: one ls for all their working folders per scan
    if [ -n "$fl" ] && [ -n "$cwds" ]; then
      out=$(ls -ld $cwds 2>/dev/null)
      while IFS= read -r l; do
        case $l in *" -> "*) ;; *) continue ;; esac
        e=${l#*/proc/} c=${l#* -> }
        e=${e%%/*} c=${c% (deleted)} rest=$fl
        while [ -n "$rest" ]; do
          f=${rest%%"$us"*} rest=${rest#*"$us"}
          case $c in "${f#* }"|"${f#* }"/*) pl="$pl
w $e ${f%% *}"; break ;; esac
        done
      done <<EOF
$out
EOF
    fi
    # dense samples scan as many pids each as a sample at the full interval: a tool's processes, born
    # during a short case, are found at once (a bounded cost: the dense start lasts about a second)
    next=$((s + (n + sp - 1) / sp))
  fi
  read -r up _ < /proc/uptime
  read -r cpu < /proc/stat
  printf '@ %s %s\n%s%s\n' "$up" "$s" "$cpu" "$pl"
  cat /proc/meminfo /proc/diskstats /proc/net/dev $files 2>/dev/null
  printf '. %s\n' "$s"
  busy=0
  if [ "$stop" = 1 ]; then exit 0; fi
}
while :; do
  sample
  if [ $((${up%.*} * 100 + 1${up#*.} - 100)) -ge "$end" ]; then break; fi
  # dense first, then twice as sparse every DOUBLE_EVERY samples, up to the scenario's interval
  if [ $((s % DOUBLE_EVERY)) -eq 0 ] && [ "$ms" -lt "$ivms" ]; then
    ms=$((ms * 2)); [ "$ms" -le "$ivms" ] || ms=$ivms
  fi
  secs "$ms"
  # a sleep without fractions (strict POSIX) fails fast; never spin, wait a second instead
  sleep "$iv" 2>/dev/null || sleep 1
done
""".replace("DOUBLE_EVERY", str(DOUBLE_EVERY))


#: The sampler behind a pipe to awk, which passes each sample on as one write: the sampler writes a sample in
#: pieces (a printf, a `cat` write per /proc file, a printf), and on a host where sshd wakes for each piece
#: each went out as an SSH packet of its own, read by the controller one wake-up at a time (about six a
#: sample; the controller's CPU per sample, not per byte). Arguments: the shell, the sampler's script, then
#: the sampler's own arguments. awk ignores TERM (the transport signals the whole group) and ends when the
#: sampler, which takes its last sample on TERM, closes the pipe; the sampler's exit status is passed on as
#: awk's, through a line the sampler's shell adds (named by that shell's pid) and awk drops. Lines are
#: gathered in pieces of a KiB and pieces into at most 64 KiB: each concatenation copies the growing string,
#: so the copy per line stays bounded whatever a sample's size. POSIX awk only (tested with gawk and
#: mawk). No awk on the host: the sampler streams as it writes.
WHOLE_SAMPLES = r"""
sh=$1 s=$2; shift 2
command -v awk >/dev/null 2>&1 || exec "$sh" -c "$s" fsbench-monitor "$@"
trap : HUP INT TERM
{ trap : HUP INT TERM; "$sh" -c "$s" fsbench-monitor "$@"; echo "#fsbench-monitor-exit-$$ $?"; } | {
  trap '' HUP INT TERM
  exec awk -v m="#fsbench-monitor-exit-$$ " '
    # the exit line, after a last line the sampler did not end (killed mid-sample): that part is kept
    (i = index($0, m)) && substr($0, i + length(m)) ~ /^[0-9]+$/ {
      st = substr($0, i + length(m)); l = l substr($0, 1, i - 1); next }
    { l = l $0 "\n" }
    length(l) >= 1024 { b = b l; l = ""; if (length(b) >= 65536) { printf "%s", b; b = "" } }
    /^\. [0-9]+$/ { printf "%s%s", b, l; fflush(); b = ""; l = "" }
    END { printf "%s%s", b, l; exit st }'
}
"""


@dataclass(frozen=True)
class Client:
    """A target's client process: its /proc/PID/comm name and the words its command line holds."""

    name: str
    #: whole arguments of its command line that tell it from other processes of the name (the mount point)
    words: tuple[str, ...]


def sampler_argv(interval_s: float, processes: list[str] | tuple[str, ...] = (), max_s: float = 86400.0,
                 shell: str = "/bin/sh", scan_pids_per_s: float = SCAN_PIDS_PER_S,
                 client: Client | None = None, first_interval_s: float = FIRST_INTERVAL_S,
                 folders: Sequence[tuple[int, str]] = (), whole_samples: bool = True) -> list[str]:
    """argv that samples /proc every interval_s seconds (denser at first) for at most max_s seconds.

    folders: (the host's clock tick when the start began, folder) of each service fsbench started there.
    whole_samples: behind a pipe to awk (WHOLE_SAMPLES), where the host has one. Without it the sampler
    writes each sample in its pieces: what a sampler on this machine wants, whose pieces reach the run's
    process through a pipe (no packets), and which would otherwise load awk and its libraries from disk
    just after each case's cache drop (6 ms a case here, bench/run_overhead.py)."""
    if not interval_s > 0:
        raise ValueError(f"interval must be > 0 seconds, got {interval_s!r}")
    if not max_s > 0:
        raise ValueError(f"max duration must be > 0 seconds, got {max_s!r}")
    for name in [*processes, *([client.name] if client else [])]:
        if not name or "\n" in name or "/" in name:
            raise ValueError(f"process name {name!r}: a /proc/PID/comm name cannot be empty or hold '/' or a newline")
        if name == "host":
            raise ValueError("process name 'host' would be mistaken for the host's own scope in the results")
    if client and any(not w or "\n" in w or US in w for w in (client.name, *client.words)):
        raise ValueError(f"client {client!r}: its name and words must be non-empty, without a newline or 0x1f")
    for since, folder in folders:
        if since < 0 or not folder.startswith("/") or "\n" in folder or US in folder:
            raise ValueError(f"service folder {folder!r} (since {since}): absolute, without a newline or 0x1f")
    listed = "".join(f"{since} {folder.rstrip('/') or '/'}{US}" for since, folder in folders)
    scan = str(max(1, round(scan_pids_per_s * interval_s)))
    every_ms = max(1, round(interval_s * 1000))
    first_ms = min(every_ms, max(1, round(first_interval_s * 1000)))
    args = [str(every_ms), str(math.ceil(max_s)), scan, client.name if client else "",
            US.join(client.words) if client else "", str(first_ms), listed, *processes]
    if not whole_samples:
        return [shell, "-c", SCRIPT, MAGIC, *args]
    return [shell, "-c", WHOLE_SAMPLES, MAGIC, shell, SCRIPT, *args]

