"""Seed 002's HDFS server as stock: the managed NameNode and DataNodes get only where they live and how soon
they leave safe mode; every setting that changes what NNBench measures is the scenario's, written visibly."""

from __future__ import annotations

import re
from types import SimpleNamespace

from fsbench.services.hdfs import PLUGIN, hdfs_site

#: what fsbench's HDFS once set beyond placement: close() before the last block was reported, 32 RPC
#: handlers instead of 10, no permission checks, 1 s heartbeats, blocks of any size
MEASURED = ("dfs.namenode.file.close.num-committed-allowed", "dfs.namenode.handler.count", "dfs.permissions.enabled",
            "dfs.heartbeat.interval", "dfs.namenode.fs-limits.min-block-size")
PLACEMENT = ("dfs.namenode.name.dir", "dfs.namenode.rpc-address", "dfs.namenode.http-address", "dfs.replication",
             "dfs.datanode.address", "dfs.datanode.http.address", "dfs.datanode.ipc.address", "dfs.datanode.hostname",
             "dfs.namenode.datanode.registration.ip-hostname-check", "dfs.namenode.safemode.extension",
             "dfs.namenode.safemode.min.datanodes")


def _site(section: dict | None) -> dict[str, str]:
    service = SimpleNamespace(settings=PLUGIN.settings(section), managed=True)
    xml = PLUGIN.plan(service).files["hdfs-site.xml"]
    return dict(re.findall(r"<name>([^<]+)</name>\s*<value>([^<]*)</value>", xml))


def test_the_managed_hdfs_sets_nothing_that_changes_what_is_measured():
    site = _site(None)
    assert not set(site) & set(MEASURED), site
    assert set(site) == set(PLACEMENT)


def test_a_setting_the_scenario_writes_is_in_the_runs_hdfs_site_xml():
    site = _site({"handlers": 64, "properties": {"dfs.namenode.file.close.num-committed-allowed": 1}})
    assert site["dfs.namenode.handler.count"] == "64"
    assert site["dfs.namenode.file.close.num-committed-allowed"] == "1"
    assert hdfs_site(PLUGIN.settings(None)).get("dfs.namenode.handler.count") is None  # Hadoop's 10
