"""Seed 002's HDFS client as stock: fsbench adds no client setting of its own (it once added a 20 ms
locateFollowingBlock delay, which made create_write faster than the seed's stock client); a setting the
scenario's `properties` names goes to the client and shows in hosts.csv's client column."""

from __future__ import annotations

from fsbench.kinds import KINDS
from fsbench.scenario.load import load_scenario_text

SCENARIO = """
name: stock
targets:
  stock:
    kind: hdfs
    path: /bench
    hdfs: {namenode: "hdfs://127.0.0.1:8020"}
  tuned:
    kind: hdfs
    path: /bench
    hdfs: {namenode: "hdfs://127.0.0.1:8020", properties: {dfs.client.socket-timeout: 120000}}
workloads:
  nn: {tool: nnbench, options: {files_per_map: 3, operations: [create_write]}}
"""
VALUES = {"run.id": "r1", "run.scratch": "/var/tmp/fsbench/r1", "target.path": "/bench", "host.name": "local"}


def _plan(name: str):
    t = load_scenario_text(SCENARIO, "stock.yaml").targets[name]
    return KINDS.get("hdfs").plan(t, {**VALUES, "target.name": name}, VALUES["run.scratch"])


def test_the_hdfs_client_gets_no_setting_the_scenario_did_not_name():
    plan = _plan("stock")
    assert plan.shown == ["hadoop-client"]  # hosts.csv: the stock client, nothing else
    words = " ".join(w for cmd in plan.once + plan.after for w in cmd)
    assert "locateFollowingBlock" not in words and " -D " not in words
    assert load_scenario_text(SCENARIO, "stock.yaml").targets["stock"].settings.client_conf(20) == {}


def test_a_scenario_property_reaches_the_client_and_shows_in_hosts_csv():
    plan = _plan("tuned")
    assert plan.shown == ["hadoop-client", "dfs.client.socket-timeout=120000"]
    mkdir = plan.once[-1]
    assert mkdir[mkdir.index("-D") + 1] == "dfs.client.socket-timeout=120000"
