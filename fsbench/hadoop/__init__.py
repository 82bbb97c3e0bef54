"""Hadoop on a host: the jar cache install.sh fills, Java command lines, and Hadoop's configuration files.

The jars come from Maven Central (fsbench/hadoop/pom.xml) through `install-jars.sh`, once, into the jar
cache (`FSBENCH_HADOOP_HOME`, default /usr/local/share/fsbench/hadoop): `lib/` (Hadoop 3.3.6, S3A,
JuiceFS's Hadoop SDK), `fsbench-hadoop.jar` (fsbench's NNBench runner, compiled at install time) and
`web/webapps/*` (empty folders the NameNode and DataNode insist on). The service kind `hdfs`, the target
kinds `hdfs`, `s3a` and `jfs` and the `nnbench` tool build their command lines here.

A URL target's settings answer the `HadoopFileSystem` protocol: its URL, the client's configuration
(no secrets: they travel in the environment of the command, never in a file or argv).
"""

from __future__ import annotations

import os
import shlex
from typing import Protocol, runtime_checkable
from xml.sax.saxutils import escape

HOME_ENV = "FSBENCH_HADOOP_HOME"
DEFAULT_HOME = "/usr/local/share/fsbench/hadoop"
#: Hadoop 3.3 (and JuiceFS's SDK) reach into JDK internals that Java 17 keeps closed: the `--add-opens`
#: options are in this file of the jar cache (a copy of fsbench/hadoop/jvm.args), given as `java @FILE`
JVM_ARGS = "jvm.args"
#: how a missing jar cache is explained wherever a command would fail on it
MISSING = "the Hadoop jars are missing in {home}: run ./install.sh (or sh fsbench/hadoop/install-jars.sh) there"
#: the Hadoop client's classes: FsShell (hadoop fs), VersionInfo, NNBench, fsbench's runner
FS_SHELL = "org.apache.hadoop.fs.FsShell"
VERSION_INFO = "org.apache.hadoop.util.VersionInfo"
NNBENCH_RUNS = "fsbench.NNBenchRuns"
#: JVM options of fsbench's own short helpers (a folder made or removed, a probe, a version): the first
#: JIT tier only and the serial collector start a JVM on half the CPU (0.85 -> 0.41 s for an FsShell
#: -mkdir here). They run between cases, never while one is measured. Never on the services or NNBench,
#: whose speed is what a scenario measures.
BRIEF_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def home(configured: str = "") -> str:
    """The jar cache: the scenario's setting, else FSBENCH_HADOOP_HOME, else the default."""
    return configured or os.environ.get(HOME_ENV) or DEFAULT_HOME


def classpath(jars: str, *first: str) -> str:
    """Configuration folders first (core-site.xml, log4j.properties), then the webapps, the runner, the jars."""
    return ":".join([*first, f"{jars}/web", f"{jars}/fsbench-hadoop.jar", f"{jars}/lib/*"])


def java(main: str, args: list[str], *, jars: str, heap: str = "1g", conf_dirs: tuple[str, ...] = (),
         properties: dict[str, str] | None = None, system: dict[str, str] | None = None,
         brief: bool = False) -> list[str]:
    """argv of a Hadoop JVM: the jar cache's JVM options (@jvm.args), heap, classpath, main class, generic
    `-D` options, then args.

    `properties` go as `-D key=value` after the main class (Hadoop's generic options: every Tool
    reads them); they are never secrets. `system` are JVM system properties (-Dkey=value). `brief`: one
    of fsbench's own short helpers, started with BRIEF_JVM.
    """
    jvm = ["java", f"@{jars}/{JVM_ARGS}", *(BRIEF_JVM if brief else ()), f"-Xmx{heap}",
           *(f"-D{k}={v}" for k, v in (system or {}).items()), "-cp", classpath(jars, *conf_dirs), main]
    generic = [w for k, v in (properties or {}).items() for w in ("-D", f"{k}={v}")]
    return jvm + generic + list(args)


def site_xml(properties: dict[str, str], comment: str = "") -> str:
    """A Hadoop configuration file (core-site.xml, hdfs-site.xml) with these properties."""
    lines = ['<?xml version="1.0"?>']
    if comment:
        lines.append(f"<!-- {escape(comment).replace('--', '- -')} -->")
    lines.append("<configuration>")
    lines += [f"  <property><name>{escape(k)}</name><value>{escape(str(v))}</value></property>"
              for k, v in properties.items()]
    lines.append("</configuration>")
    return "\n".join(lines) + "\n"


def log4j_properties(root: str = "WARN", info: tuple[str, ...] = ()) -> str:
    """log4j 1.2 configuration: everything at `root` to standard error, the named loggers at INFO."""
    lines = [f"log4j.rootLogger={root},console", "log4j.appender.console=org.apache.log4j.ConsoleAppender",
             "log4j.appender.console.target=System.err",
             "log4j.appender.console.layout=org.apache.log4j.PatternLayout",
             "log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n"]
    lines += [f"log4j.logger.{name}=INFO" for name in info]
    return "\n".join(lines) + "\n"


def check_jars_sh(jars: str) -> str:
    """Shell text that fails with MISSING when the jar cache is not there (quoted for sh)."""
    q = shlex.quote(jars)
    message = shlex.quote(MISSING.format(home=jars))
    return (f'[ -d {q}/lib ] && [ -f {q}/fsbench-hadoop.jar ] && [ -f {q}/{JVM_ARGS} ] || '
            f'{{ echo {message} >&2; exit 127; }}\n'
            f'command -v java >/dev/null 2>&1 || {{ echo "java is missing on $(hostname): install '
            f'openjdk-17-jre-headless (./install.sh does)" >&2; exit 127; }}\n')


@runtime_checkable
class HadoopFileSystem(Protocol):
    """What a Hadoop client needs of a URL target (its kind's settings, placeholders filled)."""

    @property
    def jars(self) -> str:
        """The jar cache on the target's hosts ("" = home())."""
        ...

    def url(self, path: str) -> str:
        """The file system URL of a folder of the target (path absolute inside the file system)."""
        ...

    def client_conf(self, threads: int = 1) -> dict[str, str]:
        """The client's configuration (core-site.xml properties) for this many threads at once; never a secret."""
        ...

    def client_env(self) -> dict[str, str]:
        """Secrets for the client (S3 keys, a metadata password), passed as environment variables."""
        ...
