"""HDFS as a URL target: hdfs://NAMENODE/path through the Hadoop client of the jar cache (fsbench/hadoop).

The NameNode is usually ${services.NAME.url} of an `hdfs` service (one fsbench starts, or an existing
cluster with `managed: false`); an HA nameservice (hdfs://NAMESERVICE) needs its client settings in
`properties` (dfs.nameservices, dfs.ha.namenodes.*, ...)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fsbench.config import schema as s
from fsbench.kinds import hadoop_client


@dataclass(frozen=True)
class HdfsTarget:
    """Which HDFS, and the client's own settings."""

    namenode: str
    properties: dict = field(default_factory=dict)
    jars: str = ""

    def url(self, path: str) -> str:
        return self.namenode.rstrip("/") + path

    def client_conf(self, threads: int = 1) -> dict[str, str]:
        # the stock client, as the seed's: only what the scenario's `properties` set (shown in hosts.csv)
        return {str(k): str(v) for k, v in self.properties.items()}

    def client_env(self) -> dict[str, str]:
        return {}


SECTION = s.Struct({
    "namenode": s.Key(s.matches(r"^(hdfs://[^/\s]+|\$\{services\.[A-Za-z0-9_-]+\.url\})/?$",
                                "an HDFS URL such as hdfs://nn1:8020 or ${services.hdfs.url}"), required=True,
                      doc="the NameNode: ${services.hdfs.url}, hdfs://HOST:PORT or hdfs://NAMESERVICE"),
    **hadoop_client.COMMON_KEYS,
}, what="hdfs settings")


class HdfsTargetKind(hadoop_client.HadoopUrlKind):
    """A folder of an HDFS, reached through the Hadoop client (no mount)."""

    name = "hdfs"
    section = SECTION
    spec_class = HdfsTarget

    def texts(self, settings: object) -> list[tuple[str, str]]:
        spec: HdfsTarget | None = settings  # type: ignore[assignment]
        return [("namenode", spec.namenode), ("jars", spec.jars)] if spec else []

    def check(self, target: object) -> list[tuple[tuple, str, str]]:
        if getattr(target, "settings", None) is None:
            return [(("kind",), "an hdfs target needs an `hdfs:` section",
                     "at least `hdfs: {namenode: ${services.hdfs.url}}`")]
        return hadoop_client.path_issues(target, self.name, "namenode: ${services.hdfs.url}")



PLUGIN = HdfsTargetKind()
