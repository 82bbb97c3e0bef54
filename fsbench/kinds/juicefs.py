"""JuiceFS as a target kind: fsbench formats a new volume (trash off) on a metadata engine that holds none,
mounts it on every host of the target with cache and log in the run's scratch space, unmounts it and
keeps the client's log. A volume that exists is refused (formatting it again would re-point its bucket
and change its settings), unless `existing: true` says to use it as it is: mounted, never formatted."""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from dataclasses import dataclass
from urllib.parse import unquote

from fsbench.api.kinds import KindIssue, KindPlan, KindTarget, StoreAccess, TargetKind, settings_of
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.errors import FsbenchError
from fsbench.core.secrets import remember, remember_written, split_url_password
from fsbench.core.shell import render, sh
from fsbench.validity import juicefs as jfs_counters
from fsbench.validity.backends import Counters, engine_counters
from fsbench.validity.engine import CHANGES_AT_ENGINE, ENGINE_SAW_CLIENT


@dataclass(frozen=True)
class JuiceFS:
    """A JuiceFS volume fsbench formats and mounts at the target's path (the target's `juicefs:` section)."""

    meta: str = option(s.line_text, "", required=True,
                       doc="the metadata engine URL, e.g. redis://127.0.0.1:6379/1")
    storage: str = option(s.one_of("file", "s3", "minio"), "file")
    bucket: str = option(s.line_text, "")
    volume: str = option(s.line_text, "")
    binary: str = option(s.line_text, "juicefs")
    format_options: tuple[str, ...] = option(s.list_of(s.line_text), (), convert=tuple)
    mount_options: tuple[str, ...] = option(s.list_of(s.line_text), (), convert=tuple)
    access_key_env: str = option(s.line_text, "", doc="the NAME of the variable holding the access key")
    secret_key_env: str = option(s.line_text, "", doc="the NAME of the variable holding the secret key")
    access_key: str = option(s.line_text, "", doc="e.g. ${services.s3.access_key} or ${secrets.access_key}")
    secret_key: str = option(s.line_text, "", doc="e.g. ${services.s3.secret_key} or ${secrets.secret_key}")
    existing: bool = option(s.boolean, False,
                            doc="true: the meta URL holds a volume to use as it is (mounted, never formatted nor "
                                "changed); false: fsbench formats a new volume and refuses a meta URL that holds one")


SECTION = Section(JuiceFS, "juicefs settings")

#: what `juicefs status` says on a metadata engine that holds no volume (1.0 to 1.4)
NOT_FORMATTED = "database is not formatted"
#: metadata engines that are a file on the client's host (a second host's client would get its own, empty)
EMBEDDED = ("sqlite3", "badger")


def empty_meta_check(binary: str, meta: str, opt_in: str = "`existing: true` under `juicefs:`") -> list[str]:
    """Fails, saying why, unless the metadata engine holds no JuiceFS volume (`juicefs status` tells)."""
    refuse = (f"{meta} holds a JuiceFS volume already: fsbench formats only a metadata engine that holds none "
              "(formatting again would re-point that volume to fsbench's bucket and change its settings); give "
              f"the target an empty database (e.g. another Redis database number), or set {opt_in} to benchmark "
              "that volume as it is")
    return sh("\n".join([
        f"# check that {meta} holds no JuiceFS volume yet",
        f"if out=$({shlex.join([binary, 'status', meta])} 2>&1 > /dev/null); then",
        f"  echo {shlex.quote(refuse)} >&2; exit 1",
        "fi",
        f'case "$out" in *{shlex.quote(NOT_FORMATTED)}*) exit 0 ;; esac',
        f"echo {shlex.quote(f'cannot tell whether {meta} holds a JuiceFS volume (fsbench formats only an empty one)')}"
        " >&2",
        'printf "%s\\n" "$out" | tail -n 3 >&2',
        "exit 1",
    ]))


def destroy_own_volume(binary: str, meta: str, volume: str) -> list[str]:
    """Destroys the volume fsbench formatted on meta (fresh rounds: the next round formats a new one), after
    checking that meta holds that volume by name: its metadata and every object `juicefs destroy` removes."""
    status = shlex.join([binary, "status", meta])
    field = "sed -n 's/^ *\"{0}\": *\"\\([^\"]*\\)\".*/\\1/p' | head -n 1"
    return sh("\n".join([
        f"# destroy the volume {volume} fsbench formatted on {meta}, to format a new one",
        f"out=$({status} 2>&1) || {{ printf '%s\\n' \"$out\" | tail -n 3 >&2; exit 1; }}",
        f'name=$(printf "%s\\n" "$out" | {field.format("Name")})',
        f'uuid=$(printf "%s\\n" "$out" | {field.format("UUID")})',
        f'if [ "$name" != {shlex.quote(volume)} ] || [ -z "$uuid" ]; then',
        f"  echo {shlex.quote(f'{meta} holds no volume named {volume} (fsbench destroys only the one it formatted)')}"
        " >&2; exit 1",
        "fi",
        f'exec {shlex.join([binary, "destroy", "--yes", meta])} "$uuid"',
    ]))


def volume_name(target: str) -> str:
    """JuiceFS volume names: 3-63 of a-z, 0-9 and '-'."""
    name = re.sub(r"[^a-z0-9-]+", "-", target.lower()).strip("-")
    return (name + "-vol")[:63] if len(name) < 3 else name[:63]


class JuiceFSKind:
    """A JuiceFS volume on any metadata engine and object store."""

    name = "juicefs"
    address = "directory"
    object_store = True  # its plan names the store behind it (KindPlan.store)
    section = SECTION
    client_process = "juicefs"  # its CPU and peak memory are reported beside each result
    #: the client's own count of its metadata-engine requests by method (`.stats` at the mount's root, JuiceFS
    #: 1.x): metabench reads it around every timed call, telling a call the engine served from a cached one
    meta_counters = (jfs_counters.STATS_FILE, "juicefs_meta_ops_total_")
    #: mdtest's creations and removals against the client's engine requests of the same methods (`.stats`)
    validity_checks = (CHANGES_AT_ENGINE, ENGINE_SAW_CLIENT)

    def settings(self, checked: dict | None) -> JuiceFS | None:
        return SECTION.build(checked)

    def texts(self, settings: JuiceFS | None) -> list[tuple[str, str]]:
        spec = settings
        return [("meta", spec.meta), ("bucket", spec.bucket), ("access_key", spec.access_key),
                ("secret_key", spec.secret_key)] if spec else []

    def check(self, target: KindTarget[JuiceFS]) -> list[KindIssue]:
        spec = target.settings
        if spec is None:
            return [(("kind",), "a juicefs target needs a `juicefs:` section", "at least `juicefs: {meta: URL}`")]
        if spec.existing:  # the settings of a new volume are meaningless for one used as it is
            return [(("juicefs", key), f"`{key}` is a setting of a new volume; `existing: true` uses the volume "
                                       "as it is and never formats it", f"remove `{key}`, or remove `existing`")
                    for key, value in (("bucket", spec.bucket), ("format_options", spec.format_options)) if value]
        return []

    def one_host(self, target: KindTarget[JuiceFS]) -> str:
        """Why the target can live on one host only ('' when it can be mounted by several)."""
        spec = target.settings
        engine = spec.meta.split("://", 1)[0].lower() if spec else ""
        if engine not in EMBEDDED:
            return ""
        return (f"its metadata engine ({engine}://) is embedded: one file on one host, which the other hosts' "
                "clients cannot open")

    def counters(self, target: KindTarget[JuiceFS], values: dict[str, str]) -> list[Counters]:
        """The client's object and engine requests, from the mount's `.stats` file on each host (a read, nothing
        more), and the metadata engine's own count of what it served (fsbench.validity.engine_server), read once
        from the case's first host, its password in the environment."""
        path = target.path
        if not path:
            return []
        out = [Counters(target.name or "juicefs", jfs_counters.stats_argv(path), jfs_counters.parse_stats,
                        per_host=True)]
        try:
            meta = settings_of(target, self.name).meta
        except FsbenchError:
            return out  # no settings: no engine counter
        return out + engine_counters(f"{target.name or 'juicefs'}-engine", meta, values)

    def plan(self, target: KindTarget[JuiceFS], values: dict[str, str], scratch: str) -> KindPlan:
        """Format with trash off, mount in the background, cache and log in scratch, no usage report."""
        spec = settings_of(target, self.name)
        path, tname = target.path, target.name
        base = posixpath.join(scratch, "juicefs", tname)
        # a password in the meta URL travels in META_PASSWORD (juicefs reads it there), never in argv
        meta, password = split_url_password(render(spec.meta, values, quote=False))
        bucket = render(spec.bucket, values, quote=False) if spec.bucket else posixpath.join(base, "bucket")
        # keys in the bucket URL (https://AK:SK@host/b) would show in ps: they go to the environment
        bucket, url_keys = bucket_keys(bucket)
        cache, log = posixpath.join(base, "cache"), posixpath.join(base, "juicefs.log")
        prepare = [["mkdir", "-p", path, cache]]
        if spec.storage == "file" and not spec.existing:
            bucket = bucket.rstrip("/") + "/"
            prepare.append(["mkdir", "-p", bucket])
        remember_written(password)
        env = {"META_PASSWORD": password} if password else {}
        for var, env_name, text in (("ACCESS_KEY", spec.access_key_env, spec.access_key),
                                    ("SECRET_KEY", spec.secret_key_env, spec.secret_key)):
            # secrets travel in the environment, never in argv or the run directory
            if text:
                env[var] = render(text, values, quote=False)
                remember_written(env[var])
            elif env_name:
                env[var] = os.environ.get(env_name, "")
                remember(env[var])
            elif var in url_keys:
                env[var] = url_keys[var]
                remember_written(env[var])
        binary = spec.binary
        volume = spec.volume or volume_name(tname)
        fmt = [binary, "format", "--storage", spec.storage, "--bucket", bucket, "--trash-days", "0",
               *spec.format_options, meta, volume]
        mount = [binary, "mount", "-d", "--no-usage-report", "--cache-dir", cache, "--log", log,
                 *spec.mount_options, meta, path]
        # an existing volume is only mounted: never formatted, its settings never changed
        once = [] if spec.existing else [empty_meta_check(binary, meta), fmt]
        store = None if spec.existing else StoreAccess(spec.storage, bucket, {k: v for k, v in env.items()
                                                                             if k != "META_PASSWORD"})
        unformat = [] if spec.existing else [destroy_own_volume(binary, meta, volume)]
        return KindPlan(prepare=prepare, once=once, mount=[mount], unmount=[[binary, "umount", path]],
                        force_unmount=[[binary, "umount", "--force", path]], after=[["rmdir", path]],
                        unformat=unformat,
                        logs={log: "juicefs-{host}.log"}, env=env, version=[binary, "version"],
                        client_args=("mount", path),  # `juicefs stats PATH` holds the path too
                        store=store, caches=[cache])


def bucket_keys(url: str) -> tuple[str, dict[str, str]]:
    """(the bucket URL without its user info, {ACCESS_KEY, SECRET_KEY} from it) for https://AK:SK@host/b.

    JuiceFS 1.4 reads the keys from ACCESS_KEY and SECRET_KEY, and ignores a URL's user info (it
    asks the cloud's instance metadata instead), so this also makes such a bucket work; %XX in the
    keys is decoded, as in any URL. A URL without a password is left as it is.
    """
    plain, secret = split_url_password(url)
    if not secret:
        return url, {}
    scheme_end = plain.find("://") + 3
    at = plain.find("@", scheme_end)
    access = unquote(plain[scheme_end:at]) if at >= 0 else ""
    keys = {"SECRET_KEY": unquote(secret), **({"ACCESS_KEY": access} if access else {})}
    return (plain[:scheme_end] + plain[at + 1:] if at >= 0 else plain), keys


PLUGIN: TargetKind[JuiceFS] = JuiceFSKind()
