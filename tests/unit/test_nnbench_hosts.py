"""NNBench across client hosts as pure plans: each host's command (its own base folder, the barrier on the
first host) and the sum of the hosts' rows (rates and counts added, latencies weighted by operations)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fsbench import hadoop
from fsbench.api.tools import BuildContext, HostInfo
from fsbench.core.tidy import ParseResult
from fsbench.run.plan_show import _invocation
from fsbench.tools.nnbench import PLUGIN, share
from fsbench.tools.nnbench.hosts import combine_hosts
from fsbench.tools.nnbench.parse import parse_path
from tests.paths import GOLDEN

INPUTS = GOLDEN / "nnbench" / "inputs"


@dataclass
class _Case:
    case_id: str
    options: dict = field(default_factory=dict)


class _Hdfs:
    """The smallest HadoopFileSystem: a NameNode URL, no client settings, no secrets."""

    jars = ""

    def url(self, path: str) -> str:
        return f"hdfs://127.0.0.1:8020{path}"

    def client_conf(self, threads: int = 1) -> dict[str, str]:
        return {"fs.defaultFS": "hdfs://127.0.0.1:8020"}

    def client_env(self) -> dict[str, str]:
        return {}


def _ctx(*addresses: str) -> BuildContext:
    hosts = {f"c{i + 1}": HostInfo(f"c{i + 1}", a) for i, a in enumerate(addresses)}
    return BuildContext(hosts, port=4242, address="url", target_kind="hdfs", target_settings=_Hdfs(), run_id="r1")


def _value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_each_host_has_its_own_base_folder_and_waits_at_one_barrier() -> None:
    case = _Case("hdfs__nn__maps=7__r1", {"maps": 7, "files_per_map": 3})
    inv = PLUGIN.build(case, "/bench", _ctx("10.0.0.11", "10.0.0.12", "10.0.0.13"))
    assert inv.argv == [] and inv.outputs == ["NNBench_results.log"]
    assert inv.servers == {"c1": ["metabench", "barrier", "--listen", "10.0.0.11:4242", "--parties", "3"]}
    assert inv.wait_ports == [("10.0.0.11", 4242)]
    assert set(inv.per_host) == {"c1", "c2", "c3"}
    base = "hdfs://127.0.0.1:8020/bench/fsbench-r1/hdfs__nn__maps=7__r1"
    for host, argv in inv.per_host.items():
        assert argv[0] == "java" and hadoop.NNBENCH_RUNS in argv
        # NNBench names its files file_<map>_<i> under the base folder: one per host, or they collide
        assert _value(argv, "-baseDir") == f"{base}/{host}"
        assert _value(argv, "-barrier") == "10.0.0.11:4242"
    # `maps` is the whole load's concurrency, spread over the hosts
    assert {h: int(_value(a, "-maps")) for h, a in inv.per_host.items()} == {"c1": 3, "c2": 2, "c3": 2}
    # and every host sizes its start barrier for the largest share, so that all set the same start time
    assert {_value(a, "-barrierMaps") for a in inv.per_host.values()} == {"3"}
    # every host's runner reads the same configuration (enough parallel maps for the largest share)
    assert "<name>mapreduce.local.map.tasks.maximum</name><value>3</value>" in inv.files["mapred-site.xml"]
    shown = "\n".join(_invocation("run", inv))
    assert "on every host at once" in shown and "[c1, in the background] metabench barrier" in shown


def test_one_host_runs_as_before_without_a_barrier() -> None:
    case = _Case("hdfs__nn__maps=2__r1", {"maps": 2})
    for ctx in (_ctx("10.0.0.11"), BuildContext(target_settings=_Hdfs(), run_id="r1")):
        inv = PLUGIN.build(case, "/bench", ctx)
        assert not inv.per_host and not inv.servers and "-barrier" not in inv.argv and "-barrierMaps" not in inv.argv
        assert _value(inv.argv, "-baseDir") == "hdfs://127.0.0.1:8020/bench/fsbench-r1/hdfs__nn__maps=2__r1"
    ipv6 = PLUGIN.build(case, "/bench", _ctx("fd00::1", "fd00::2"))
    assert ipv6.servers["c1"][3] == "[fd00::1]:4242" and _value(ipv6.per_host["c2"], "-barrier") == "[fd00::1]:4242"


def test_maps_spread_over_the_hosts_and_a_host_without_one_does_not_run() -> None:
    assert share(100, ["a", "b", "c"]) == {"a": 34, "b": 33, "c": 33}
    assert share(2, ["a", "b", "c"]) == {"a": 1, "b": 1}
    inv = PLUGIN.build(_Case("c", {"maps": 1}), "/bench", _ctx("10.0.0.11", "10.0.0.12"))
    # one host alone waits for nobody: no barrier server, no -barrier
    assert list(inv.per_host) == ["c1"] and not inv.servers and "-barrier" not in inv.per_host["c1"]
    two = PLUGIN.build(_Case("c", {"maps": 2}), "/bench", _ctx("10.0.0.11", "10.0.0.12", "10.0.0.13"))
    assert list(two.per_host) == ["c1", "c2"] and two.servers["c1"][-1] == "2"


def _by(result: ParseResult, host: str) -> dict[tuple[str, str, str], dict]:
    return {(r["job"], r["operation"], r["metric"]): r for r in result.rows if r["host"] == host}


def test_the_sum_across_hosts_adds_rates_and_weighs_latencies() -> None:
    a, b = parse_path(INPUTS / "hdfs__maps-100"), parse_path(INPUTS / "juicefs__maps-20")
    both = combine_hosts({"h1": a, "h2": b})
    h1, h2, total = _by(both, "h1"), _by(both, "h2"), _by(both, "all")
    assert len(h1) == len(a.rows) and len(h2) == len(b.rows) and set(total) == set(h1) & set(h2)
    for key, row in total.items():
        job, op, metric = key
        x, y = h1[key]["value"], h2[key]["value"]
        if metric in ("rate", "ops", "exceptions", "late_maps"):
            assert row["value"] == x + y, key
        else:  # a mean over every file operation of both hosts
            n1, n2 = h1[("", job or op, "ops")]["value"], h2[("", job or op, "ops")]["value"]
            assert math.isclose(row["value"], (x * n1 + y * n2) / (n1 + n2)), key
        assert row["maps"] == 120 and row["unit"] == h1[key]["unit"]
    assert ("", "rename", "rate") in total and ("create_write", "create", "latency_mean") in total


def test_an_operation_one_host_lacks_has_no_sum_and_says_so() -> None:
    a = parse_path(INPUTS / "s3a__maps-20")
    b = ParseResult(rows=[r for r in a.rows if r["operation"] != "delete"], warnings=["create_write: late"])
    both = combine_hosts({"h1": a, "h2": b})
    assert not [r for r in both.rows if r["host"] == "all" and r["operation"] == "delete"]
    assert "delete: measured on 1 of 2 hosts; no sum across hosts" in both.warnings
    assert "h2: create_write: late" in both.warnings
    alone = combine_hosts({"h1": a})
    assert {r["host"] for r in alone.rows} == {"h1"} and len(alone.rows) == len(a.rows)
