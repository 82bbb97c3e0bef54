"""What the Hadoop file system kinds (hdfs, s3a, jfs) share: settings with placeholders filled, and the
setup every one of them gets: the run's folder made through the Hadoop client on the first host (which
proves the client reaches the file system with this configuration), and removed at teardown.

Their targets are URLs: `path` is a folder inside the file system (`/fsbench`), the kind's section
says which file system, and tools get `<url of path>/fsbench-<run id>/<case id>`.
"""

from __future__ import annotations

import dataclasses
import posixpath
from typing import Any, Generic, TypeVar

from fsbench import hadoop
from fsbench.api.kinds import KindIssue, KindPlan, KindTarget, settings_of
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.secrets import remember_written
from fsbench.core.shell import render

#: the settings of a Hadoop file system kind: a dataclass that is also a hadoop.HadoopFileSystem
F = TypeVar("F", bound=hadoop.HadoopFileSystem)

def properties_option() -> dict:
    """The `properties` field every Hadoop file system section has."""
    return option(s.mapping_of(s.scalar, name_rule=False, what="property"), factory=dict, convert=dict,
                  doc="more Hadoop client configuration (core-site.xml properties), never secrets")


def jars_option() -> str:
    """The `jars` field every Hadoop file system section has."""
    return option(s.line_text, "", doc=f"the jar cache on the target's hosts (default: FSBENCH_HADOOP_HOME "
                                       f"or {hadoop.DEFAULT_HOME}, filled by install.sh)")


def filled(spec: F, texts: list[tuple[str, str]], values: dict[str, str]) -> F:
    """The settings with run-time placeholders filled in; secrets (keys, passwords) are masked from now on."""
    fields_of: Any = spec  # a dataclass too: every kind's settings are (fsbench.api.sections)
    names = {f.name for f in dataclasses.fields(fields_of)}
    out = {k: render(v, values, quote=False) for k, v in texts if k in names and v}
    for key, value in out.items():
        if key.endswith(("access_key", "secret_key", "password", "token")):
            remember_written(value)
    made: F = dataclasses.replace(fields_of, **out)
    return made


def path_issues(target: KindTarget[Any], kind: str, example: str) -> list[KindIssue]:
    """A URL kind's path is a folder inside its file system, not a URL or a relative name."""
    path = target.path
    if not path.startswith("/") or "://" in path:
        return [(("path",), f"a {kind} target's path is a folder inside the file system, e.g. /fsbench, got {path!r}",
                 f"the file system comes from the `{kind}:` section ({example}); tools get its URL")]
    if posixpath.normpath(path) == "/":
        return [(("path",), f"a {kind} target's path must not be the file system's root",
                 "fsbench writes into <path>/fsbench-<run id>/ and removes it afterwards: name a folder, "
                 "e.g. /fsbench")]
    return []


def run_url(spec: hadoop.HadoopFileSystem, target: KindTarget[Any], values: dict[str, str]) -> str:
    """The folder of this run on the target: <url of path>/fsbench-<run id>."""
    base = spec.url(posixpath.normpath(target.path or "/"))
    return f"{base.rstrip('/')}/fsbench-{values.get('run.id', 'run')}"


def fs_shell(spec: hadoop.HadoopFileSystem, args: list[str]) -> list[str]:
    """`hadoop fs ARGS` from the jar cache, with the target's client configuration as -D options."""
    return hadoop.java(hadoop.FS_SHELL, args, jars=hadoop.home(spec.jars), heap="256m",
                       properties=spec.client_conf(), brief=True)


def url_plan(spec: hadoop.HadoopFileSystem, target: KindTarget[Any], values: dict[str, str],
             before: list[list[str]] | None = None, env: dict[str, str] | None = None) -> KindPlan:
    """Setup: `before` (a format), then the run's folder made through the client; teardown: it is removed."""
    folder = run_url(spec, target, values)
    jars = hadoop.home(spec.jars)
    return KindPlan(
        once=[*(before or []), fs_shell(spec, ["-mkdir", "-p", folder])],
        after=[fs_shell(spec, ["-rm", "-r", "-f", "-skipTrash", folder])],
        env={**spec.client_env(), **(env or {})},
        version=hadoop.java(hadoop.VERSION_INFO, [], jars=jars, heap="64m", brief=True),
        shown=["hadoop-client", *(f"{k}={v}" for k, v in spec.client_conf().items())])


class HadoopUrlKind(Generic[F]):
    """The shape hdfs, s3a and jfs share: a URL target (no mount) whose client is the tool's own JVM,
    settings of its section's class, and the plan of `url_plan`. A subclass names itself, its section
    (a Section of its settings class, which is also a hadoop.HadoopFileSystem) and `texts` (the settings
    that take placeholders)."""

    name = ""
    address = "url"
    client_process = ""  # the client runs inside the tool's JVM
    section: Section[F]

    def settings(self, checked: dict | None) -> F | None:
        return self.section.build(checked)

    def texts(self, settings: F | None) -> list[tuple[str, str]]:
        raise NotImplementedError

    def plan(self, target: KindTarget[F], values: dict[str, str], scratch: str) -> KindPlan:
        spec = settings_of(target, self.name)
        return url_plan(filled(spec, self.texts(spec), values), target, values)
