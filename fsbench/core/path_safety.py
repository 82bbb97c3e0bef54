"""Refuse target paths where removing fsbench's test files could hurt: /, homes, system folders."""

from __future__ import annotations

import os
import posixpath

#: never a target, nor anything below them
SYSTEM_TREES = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
                "/sbin", "/sys", "/usr", "/run")
#: never a target themselves (their subfolders may be)
SYSTEM_ROOTS = ("/", "/home", "/root", "/var", "/opt", "/srv", "/mnt", "/media", "/tmp", "/var/tmp",
                "/var/lib", "/var/log")

#: most symlinks followed before the portable walk gives up (a loop, or a chain too long to trust)
MAX_HOPS = 40

#: Prints, NUL-separated: the host's $HOME, that home with its symlinks resolved, the method used, and
#: the path ($1) with its symlinks and `..` resolved the way `realpath -m` does (missing parts kept as
#: written). GNU realpath first; else a walk in POSIX sh: `cd -P` for folders, `readlink` for other
#: symlinks (BusyBox, macOS and the BSDs have both). Exits non-zero, with the reason on stderr, when
#: neither can tell where the path leads: the caller then refuses the target.
RESOLVE_SCRIPT = r"""
h=${HOME:-}
hp=
if [ -n "$h" ]; then hp=$(cd -P -- "$h" 2>/dev/null && pwd -P) || hp=; fi
printf '%s\0%s\0' "$h" "$hp"
case $1 in /*) ;; *) echo "not an absolute path" >&2; exit 3;; esac
if out=$(realpath -m -- "$1" 2>/dev/null) && [ -n "$out" ]; then
  printf 'realpath -m\0%s' "$out"; exit 0
fi
r=/ rest=$1 hops=0
while [ -n "$rest" ]; do
  c=${rest%%/*}
  case $rest in */*) rest=${rest#*/};; *) rest=;; esac
  case $c in
    ''|.) ;;
    ..) r=${r%/*}; [ -n "$r" ] || r=/ ;;
    *) n=${r%/}/$c
       if [ -d "$n" ]; then
         r=$(cd -P -- "$n" && pwd -P) || { echo "cannot enter $n" >&2; exit 3; }
       elif [ -L "$n" ]; then
         hops=$((hops + 1))
         [ "$hops" -le MAX_HOPS ] || { echo "more than MAX_HOPS symlinks (a loop?) at $n" >&2; exit 3; }
         t=$(readlink -- "$n") || { echo "$n is a symlink and readlink cannot read it" >&2; exit 3; }
         case $t in /*) r=/;; esac
         rest=$t${rest:+/$rest}
       else
         r=$n
       fi ;;
  esac
done
printf 'sh walk\0%s' "$r"
""".replace("MAX_HOPS", str(MAX_HOPS))

#: what to tell the user when a host cannot resolve paths
INSTALL_HINT = ("install GNU coreutils there (for `realpath -m`), or make sure `/bin/sh` with `cd -P` and "
                "`readlink` work")


def unsafe_path_reason(path: str, home: str | None = None) -> str | None:
    """Why path must not be a target without `destructive: true`, or None when it is fine.

    `home`: the home folder(s) of the host the path lives on, separated by NUL; None means this machine's.
    """
    if not path.startswith("/"):
        return "is not an absolute path"
    p = posixpath.normpath(path)
    if p.startswith("//"):  # POSIX keeps a leading '//' (implementation-defined); Linux reads it as '/'
        p = "/" + p.lstrip("/")
    if p in SYSTEM_ROOTS:
        return "is / or a top-level system folder"
    for tree in SYSTEM_TREES:
        if p == tree or p.startswith(tree + "/"):
            return f"is inside the system folder {tree}"
    given = os.path.expanduser("~") if home is None else home
    homes = {posixpath.normpath(h) for h in given.split("\0") if h.startswith("/")}
    if p in homes or (p.startswith("/home/") and p.count("/") == 2):
        return "is a home directory"
    return None


def resolved_unsafe_reason(transport, path: str) -> str | None:
    """Why path, resolved on its host (symlinks, `..`, that host's home), must not be written; None if fine.

    Validation sees only the text of the path and this machine's home; a symlink to / or /etc, `link/..`,
    or the host's own home are only known where the path lives. Fails closed: a host where the path
    cannot be resolved (no usable realpath nor sh, no answer) gets a reason too.
    """
    where = f"{path} on {transport.host}"
    try:
        r = transport.run(["/bin/sh", "-c", RESOLVE_SCRIPT, "fsbench-resolve", path], timeout=30)
    except Exception as exc:  # noqa: BLE001 - any failure to check is a refusal, with its cause
        return f"cannot check where {where} leads ({exc}); {INSTALL_HINT}"
    parts = (r.extra.get("stdout", "") or "").split("\0") if r.ok else []
    if len(parts) != 4 or not parts[3].startswith("/"):
        why = (r.stderr_tail or r.stdout_tail).strip().splitlines()[-1:] if not r.ok else ["unexpected output"]
        state = "timed out" if r.timed_out else f"exit status {r.exit_status}"
        return (f"cannot resolve {where} ({state}: {'; '.join(why) or 'no output'}), so it cannot be checked "
                f"for symlinks to system folders; {INSTALL_HINT}")
    home, home_real, _method, resolved = parts
    reason = unsafe_path_reason(resolved, home=f"{home}\0{home_real}")
    if not reason:
        return None
    if posixpath.normpath(resolved) == posixpath.normpath(path):
        return f"{where} {reason}"
    return f"{path} resolves to {resolved} on {transport.host}, which {reason}"
