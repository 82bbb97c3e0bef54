"""The seeds' inventory examples in configs/ fit their scenarios: every group a scenario names is there,
services land on the meta node and each target on the clients the seed used."""

from __future__ import annotations

from fsbench.scenario.load import load_scenario
from tests.paths import REPO

CLIENTS = ["client1", "client2", "client3"]


def _where(path: str, inventory: str, scale: str = "full") -> tuple[dict, dict, list[str]]:
    sc = load_scenario(REPO / "scenarios" / path, [f"scale={scale}"], REPO / "configs" / inventory)
    services = {name: sc.resolve_hosts(s.hosts) for name, s in sc.services.items()}
    targets = {name: sc.resolve_hosts(t.hosts) for name, t in sc.targets.items()}
    return services, targets, list(sc.warnings)


def test_seed_002_spreads_nnbench_over_three_core_nodes_with_redis_on_the_master():
    services, targets, warnings = _where("hdfs-s3-juicefs.yaml", "inventory-hdfs-s3-juicefs.example.yaml")
    assert services["redis"] == ["meta1"] and services["s3"] == ["meta1"] and services["hdfs"] == ["client1"]
    assert targets == {"hdfs": CLIENTS, "s3a": CLIENTS, "juicefs": CLIENTS, "juicefs-fuse": ["client1"]}
    assert warnings == []


def test_seed_003_runs_its_one_client_tools_on_node0_and_vdbench_on_three():
    services, targets, warnings = _where("juicefs-evaluation.yaml", "inventory-juicefs-evaluation.example.yaml")
    assert services == {"redis": ["meta1"], "s3": ["meta1"]}
    assert targets == {"juicefs": ["client1"], "juicefs-3-clients": CLIENTS}
    assert warnings == []
