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
from dataclasses import dataclass, replace

from fsbench.api.kinds import KindIssue, KindPlan, KindTarget, TargetKind, settings_of
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.errors import FsbenchError
from fsbench.core.secrets import remember_written, split_url_password
from fsbench.core.shell import sh
from fsbench.kinds import hadoop_client
from fsbench.kinds.juicefs import destroy_own_volume, empty_meta_check, volume_name
from fsbench.validity.backends import Counters, engine_counters
from fsbench.validity.namenode import REACHED_ENGINE

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

    meta: str = option(s.line_text, "", required=True,
                       doc="the metadata engine URL, e.g. redis://${services.redis.host}:${services.redis.port}/1")
    volume: str = option(s.matches(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$",
                                   "a JuiceFS volume name: 3-63 of a-z, 0-9, '-'"), "",
                         doc="default: from the target's name")
    storage: str = option(s.one_of("file", "s3", "minio"), "file",
                          doc="the object store of a volume fsbench formats")
    bucket: str = option(s.line_text, "",
                         doc="its bucket URL (storage file: default a folder of the run's scratch space)")
    access_key: str = option(s.line_text, "", doc="for the format: ${services.s3.access_key} or ${secrets.NAME}")
    secret_key: str = option(s.line_text, "", doc="for the format: ${services.s3.secret_key} or ${secrets.NAME}")
    format: bool = option(s.boolean, True, doc="false: an existing volume, used as it is")
    format_options: tuple[str, ...] = option(s.list_of(s.line_text), (), convert=tuple)
    downgrade_for_sdk: bool = option(s.boolean, False,
                                     doc="make the volume just formatted acceptable to the 1.0.2 Hadoop SDK "
                                         "(unsupported by JuiceFS; see the kind's documentation)")
    binary: str = option(s.line_text, "juicefs", doc="the juicefs command line that formats the volume")
    properties: dict = hadoop_client.properties_option()
    jars: str = hadoop_client.jars_option()
    #: not a key of the section: where the SDK caches, set by the kind (inside the run's scratch space)
    cache_dir: str = ""

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


SECTION = Section(JfsTarget, "jfs settings")


class JfsKind(hadoop_client.HadoopUrlKind[JfsTarget]):
    """A folder of a JuiceFS volume through the Hadoop SDK (no mount)."""

    name = "jfs"
    section = SECTION

    def settings(self, checked: dict | None) -> JfsTarget | None:
        spec = SECTION.build(checked)
        # the volume is named after the target unless named; its cache stays in the run's scratch space
        return replace(spec, volume=spec.volume or "${target.name}",
                       cache_dir="${run.scratch}/jfs-cache/${target.name}") if spec else None

    def texts(self, settings: JfsTarget | None) -> list[tuple[str, str]]:
        spec = settings
        if spec is None:
            return []
        return [("meta", spec.meta), ("volume", spec.volume), ("bucket", spec.bucket), ("access_key", spec.access_key),
                ("secret_key", spec.secret_key), ("cache_dir", spec.cache_dir), ("jars", spec.jars)]

    def check(self, target: KindTarget[JfsTarget]) -> list[KindIssue]:
        spec = target.settings
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

    #: NNBench's operations against the metadata engine's own count (the SDK sends its metadata there)
    validity_checks = (REACHED_ENGINE,)

    def counters(self, target: KindTarget[JfsTarget], values: dict[str, str]) -> list[Counters]:
        """The metadata engine's own count of what it served (fsbench.validity.engine_server), read once from the
        case's first host, its password in the environment; none for an engine without one (SQLite...)."""
        try:
            meta = settings_of(target, self.name).meta
        except FsbenchError:
            return []  # no settings: no engine counter
        return engine_counters(f"{target.name or 'jfs'}-engine", meta, values)

    def plan(self, target: KindTarget[JfsTarget], values: dict[str, str], scratch: str) -> KindPlan:
        raw, name = settings_of(target, self.name), target.name
        spec = hadoop_client.filled(raw, self.texts(raw), values)
        spec = replace(spec, volume=volume_name(spec.volume or name))
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
        unformat = [destroy_own_volume(spec.binary, meta, spec.volume)] if spec.format else []
        return KindPlan(prepare=[["mkdir", "-p", spec.cache_dir]], once=plan.once, after=plan.after, env=plan.env,
                        unformat=unformat,
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


PLUGIN: TargetKind[JfsTarget] = JfsKind()
