"""HDFS as a URL target: hdfs://NAMENODE/path through the Hadoop client of the jar cache (fsbench/hadoop).

The NameNode is usually ${services.NAME.url} of an `hdfs` service (one fsbench starts, or an existing
cluster with `managed: false`); an HA nameservice (hdfs://NAMESERVICE) needs its client settings in
`properties` (dfs.nameservices, dfs.ha.namenodes.*, ...)."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.api.kinds import KindIssue, KindTarget, TargetKind
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.kinds import hadoop_client


@dataclass(frozen=True)
class HdfsTarget:
    """Which HDFS, and the client's own settings."""

    namenode: str = option(s.matches(r"^(hdfs://[^/\s]+|\$\{services\.[A-Za-z0-9_-]+\.url\})/?$",
                                     "an HDFS URL such as hdfs://nn1:8020 or ${services.hdfs.url}"), "",
                           required=True, doc="the NameNode: ${services.hdfs.url}, hdfs://HOST:PORT or hdfs://NAMESERVICE")
    properties: dict = hadoop_client.properties_option()
    jars: str = hadoop_client.jars_option()

    def url(self, path: str) -> str:
        return self.namenode.rstrip("/") + path

    def client_conf(self, threads: int = 1) -> dict[str, str]:
        # the stock client, as the seed's: only what the scenario's `properties` set (shown in hosts.csv)
        return {str(k): str(v) for k, v in self.properties.items()}

    def client_env(self) -> dict[str, str]:
        return {}


SECTION = Section(HdfsTarget, "hdfs settings")


class HdfsTargetKind(hadoop_client.HadoopUrlKind[HdfsTarget]):
    """A folder of an HDFS, reached through the Hadoop client (no mount)."""

    name = "hdfs"
    section = SECTION

    def texts(self, settings: HdfsTarget | None) -> list[tuple[str, str]]:
        spec = settings
        return [("namenode", spec.namenode), ("jars", spec.jars)] if spec else []

    def check(self, target: KindTarget[HdfsTarget]) -> list[KindIssue]:
        if target.settings is None:
            return [(("kind",), "an hdfs target needs an `hdfs:` section",
                     "at least `hdfs: {namenode: ${services.hdfs.url}}`")]
        return hadoop_client.path_issues(target, self.name, "namenode: ${services.hdfs.url}")


PLUGIN: TargetKind[HdfsTarget] = HdfsTargetKind()
