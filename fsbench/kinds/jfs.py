"""JuiceFS through its Hadoop SDK as a URL target: jfs://VOLUME/path, no FUSE mount.

The SDK is io.juicefs:juicefs-hadoop from Maven Central, whose last release there is 1.0.2 (2022); the
volume is formatted by the juicefs command line (1.3 or newer from PyPI), which stamps
MinClientVersion 1.1.0-A into the volume's settings, and SDK 1.0.2 refuses such a volume ("please
upgrade the client"). `downgrade_for_sdk: true` makes the new, still empty volume one a 1.0 client
accepts, with the command line's own tools: `juicefs dump --keep-secret-key` of its metadata (into a
0700 temporary folder, removed at once), the fields a 1.0 client does not know (MinClientVersion,
DirStats, Tiers, EnableACL) left out, `juicefs destroy`, `juicefs load`. JuiceFS does not support
this; fsbench only does it on a volume it has just formatted and then uses it through the 1.0.2 SDK
alone. Never mount such a volume with a newer client afterwards.
The metadata password of the URL travels as META_PASSWORD, the object store's keys (for the format) as
ACCESS_KEY / SECRET_KEY: in the environment, never in argv or a file."""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass, field
from typing import Any

from fsbench.config import schema as s
from fsbench.core.secrets import remember_written, split_url_password
from fsbench.core.shell import sh
from fsbench.kinds import hadoop_client
from fsbench.kinds.base import KindPlan
from fsbench.kinds.juicefs import empty_meta_check, volume_name

#: settings fields a JuiceFS 1.0 client does not know (written by the 1.1+ command line)
NEWER_FIELDS = ("MinClientVersion", "DirStats", "Tiers", "EnableACL")
_DOWNGRADE_PY = (
    "import json, sys\n"
    "path = sys.argv[1]\n"
    "with open(path) as f:\n"
    "    dump = json.load(f)\n"
    "if dump['Counters'].get('usedInodes') or dump['FSTree'].get('entries'):\n"
    "    sys.exit('the volume is not empty: fsbench downgrades only a volume it has just formatted')\n"
    "setting = dump['Setting']\n"
    f"for key in {NEWER_FIELDS!r}:\n"
    "    setting.pop(key, None)\n"
    "with open(path, 'w') as f:\n"
    "    json.dump(dump, f)\n"
    "print(setting['UUID'])\n")


@dataclass(frozen=True)
class JfsTarget:
    """Which volume on which metadata engine, how fsbench formats it, and the SDK's own settings."""

    meta: str
    volume: str = ""
    storage: str = "file"
    bucket: str = ""
    access_key: str = ""
    secret_key: str = ""
    format: bool = True
    format_options: tuple[str, ...] = ()
    downgrade_for_sdk: bool = False
    binary: str = "juicefs"
    cache_dir: str = ""
    properties: dict = field(default_factory=dict)
    jars: str = ""

    def url(self, path: str) -> str:
        return f"jfs://{volume_name(self.volume)}{path}"

    def client_conf(self, threads: int = 1) -> dict[str, str]:
        meta, _ = split_url_password(self.meta)
        conf = {"fs.jfs.impl": "io.juicefs.JuiceFileSystem", "fs.AbstractFileSystem.jfs.impl": "io.juicefs.JuiceFS",
                "juicefs.meta": meta, "juicefs.no-usage-report": "true",
                # the SDK maps the local superuser to `hdfs` by default, then fails to look up its groups
                "juicefs.superuser": "root", "juicefs.supergroup": "root"}
        if self.cache_dir:
            conf["juicefs.cache-dir"] = self.cache_dir
        return {**conf, **{str(k): str(v) for k, v in self.properties.items()}}

    def client_env(self) -> dict[str, str]:
        _, password = split_url_password(self.meta)
        remember_written(password)
        return {"META_PASSWORD": password} if password else {}


SECTION = s.Struct({
    "meta": s.Key(s.line_text, required=True, doc="the metadata engine URL, e.g. "
                                                  "redis://${services.redis.host}:${services.redis.port}/1"),
    "volume": s.Key(s.matches(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$", "a JuiceFS volume name: 3-63 of a-z, 0-9, '-'"),
                    default="", doc="default: from the target's name"),
    "storage": s.Key(s.one_of("file", "s3", "minio"), default="file",
                     doc="the object store of a volume fsbench formats"),
    "bucket": s.Key(s.line_text, default="",
                    doc="its bucket URL (storage file: default a folder of the run's scratch space)"),
    "access_key": s.Key(s.line_text, default="", doc="for the format: ${services.s3.access_key} or ${secrets.NAME}"),
    "secret_key": s.Key(s.line_text, default="", doc="for the format: ${services.s3.secret_key} or ${secrets.NAME}"),
    "format": s.Key(s.boolean, default=True, doc="false: an existing volume, used as it is"),
    "format_options": s.Key(s.list_of(s.line_text), default=list),
    "downgrade_for_sdk": s.Key(s.boolean, default=False,
                               doc="make the volume just formatted acceptable to the 1.0.2 Hadoop SDK "
                                   "(unsupported by JuiceFS; see the kind's documentation)"),
    "binary": s.Key(s.line_text, default="juicefs", doc="the juicefs command line that formats the volume"),
    **hadoop_client.COMMON_KEYS,
}, what="jfs settings")


class JfsKind(hadoop_client.HadoopUrlKind):
    """A folder of a JuiceFS volume through the Hadoop SDK (no mount)."""

    name = "jfs"
    section = SECTION
    spec_class = JfsTarget

    def settings(self, checked: dict | None) -> object:
        if not checked:
            return None
        values: dict[str, Any] = self._values(checked)
        # the volume is named after the target unless named; its cache stays in the run's scratch space
        values["volume"] = values.get("volume") or "${target.name}"
        return JfsTarget(**values, cache_dir="${run.scratch}/jfs-cache/${target.name}")

    def texts(self, settings: object) -> list[tuple[str, str]]:
        spec: JfsTarget | None = settings  # type: ignore[assignment]
        if spec is None:
            return []
        return [("meta", spec.meta), ("volume", spec.volume), ("bucket", spec.bucket), ("access_key", spec.access_key),
                ("secret_key", spec.secret_key), ("cache_dir", spec.cache_dir), ("jars", spec.jars)]

    def check(self, target: object) -> list[tuple[tuple, str, str]]:
        spec: JfsTarget | None = getattr(target, "settings", None)
        if spec is None:
            return [(("kind",), "a jfs target needs a `jfs:` section",
                     "at least `jfs: {meta: redis://${services.redis.host}:${services.redis.port}/1}`")]
        out = hadoop_client.path_issues(target, self.name, "meta: redis://...")
        if spec.downgrade_for_sdk and not spec.format:
            out.append((("jfs", "downgrade_for_sdk"), "only a volume fsbench has just formatted can be downgraded",
                        "set format: true, or leave downgrade_for_sdk out for an existing volume"))
        if spec.storage != "file" and not spec.bucket and spec.format:
            out.append((("jfs", "bucket"), f"storage {spec.storage} needs a bucket URL",
                        "e.g. ${services.s3.endpoint}/${services.s3.bucket}"))
        return out

    def plan(self, target: object, values: dict[str, str], scratch: str) -> KindPlan:
        raw: JfsTarget = target.settings  # type: ignore[attr-defined]
        name = target.name  # type: ignore[attr-defined]
        spec: JfsTarget = hadoop_client.filled(raw, self.texts(raw), values)  # type: ignore[assignment]
        spec = JfsTarget(**{**spec.__dict__, "volume": volume_name(spec.volume or name)})
        meta, _ = split_url_password(spec.meta)
        env = {}
        for var, key in (("ACCESS_KEY", spec.access_key), ("SECRET_KEY", spec.secret_key)):
            if key:
                env[var] = key
        before: list[list[str]] = []
        if spec.format:
            bucket = spec.bucket or posixpath.join(scratch, "jfs", name, "bucket")
            if spec.storage == "file":
                bucket = bucket.rstrip("/") + "/"
                before.append(["mkdir", "-p", bucket])
            # a volume that exists is never formatted again (its bucket and settings would change)
            before.append(empty_meta_check(spec.binary, meta, "`format: false` under `jfs:`"))
            before.append([spec.binary, "format", "--storage", spec.storage, "--bucket", bucket, "--trash-days", "0",
                           *spec.format_options, meta, spec.volume])
        if spec.downgrade_for_sdk:
            before.append(sh(downgrade_script(spec.binary, meta)))
        plan = hadoop_client.url_plan(spec, target, values, before, env)
        return KindPlan(prepare=[["mkdir", "-p", spec.cache_dir]], once=plan.once, after=plan.after, env=plan.env,
                        version=plan.version, shown=plan.shown)


def downgrade_script(binary: str, meta: str) -> str:
    """Shell text: the volume just formatted, rewritten for a JuiceFS 1.0 client (dump, edit, destroy, load)."""
    jfs, url = shlex.quote(binary), shlex.quote(meta)
    return (f"# make the new volume acceptable to JuiceFS's 1.0 Hadoop SDK\n"
            f"work=$(mktemp -d)\ntrap 'rm -rf \"$work\"' EXIT\n"
            # the object store's secret key stays in the dump (else `removed`): a 0700 folder, deleted at exit
            f"{jfs} dump --keep-secret-key {url} \"$work/meta.json\" 2>\"$work/log\" || "
            f"{{ tail -5 \"$work/log\" >&2; exit 1; }}\n"
            f"uuid=$(python3 -c {shlex.quote(_DOWNGRADE_PY)} \"$work/meta.json\")\n"
            f"{jfs} destroy --yes {url} \"$uuid\" 2>\"$work/log\" || {{ tail -5 \"$work/log\" >&2; exit 1; }}\n"
            f"{jfs} load {url} \"$work/meta.json\" 2>\"$work/log\" || {{ tail -5 \"$work/log\" >&2; exit 1; }}\n")


PLUGIN = JfsKind()
