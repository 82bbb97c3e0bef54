"""The monitors' figures per host group (fsbench.report.monitor_groups): a row per workload, target and group
of at least three hosts, its median, lowest and highest host, and the hosts far off the median named."""

from __future__ import annotations

import pandas as pd

from fsbench.report.monitor_groups import FEWEST, group_tables, host_groups


def _rows(cpu: dict[str, float], reps: int = 2) -> pd.DataFrame:
    rows = []
    for rep in range(1, reps + 1):
        for host, value in cpu.items():
            base = {"tool": "monitor", "operation": "host", "workload": "w", "target": "t", "host": host,
                    "job": "host", "repetition": rep}
            rows.append({**base, "metric": "cpu_usage", "stat": "mean", "value": value + rep, "unit": "%"})
            rows.append({**base, "metric": "cpu_usage", "stat": "max", "value": 400.0, "unit": "%"})
            rows.append({**base, "metric": "memory_peak", "stat": "max", "value": 2.0**30, "unit": "B"})
    rows.append({"tool": "fio", "operation": "write", "workload": "w", "target": "t", "host": "all", "job": "",
                 "repetition": 1, "metric": "bandwidth", "stat": "value", "value": 1e8, "unit": "B/s"})
    return pd.DataFrame(rows)


def test_a_group_of_clients_reads_as_median_lowest_highest_and_its_outlier_by_name():
    cpu = {f"client{i}": 50.0 + i for i in range(1, 9)} | {"client9": 180.0, "meta": 20.0}
    groups = {f"client{i}": ("clients",) for i in range(1, 10)} | {"meta": ("meta",)}
    tables = group_tables(_rows(cpu), groups)
    cpu_table = next(t for t in tables if t["title"].startswith("host CPU"))
    assert cpu_table["head"] == ["workload", "target", "group (hosts)", "median", "lowest", "highest", "outliers"]
    assert len(cpu_table["rows"]) == 1  # the meta group has one host: no spread to show
    workload, target, group, median, lowest, highest, outliers = cpu_table["rows"][0]
    assert (workload, target, group, outliers) == ("w", "t", "clients (9)", "1")
    assert lowest.startswith("client1 ") and highest.startswith("client9 ")
    assert median == "56.5%"  # client5's 55 plus 1.5 (its two rounds' mean): the middle of nine
    assert len(cpu_table["notes"]) == 1 and "client9" in cpu_table["notes"][0] and "client1" not in \
        cpu_table["notes"][0]
    memory = next(t for t in tables if t["title"].startswith("host peak memory"))
    assert memory["rows"][0][-1] == "0" and not memory["notes"]  # every host alike


def test_no_table_without_a_group_of_three_hosts():
    assert FEWEST == 3
    assert group_tables(_rows({"a": 1.0, "b": 2.0}), {"a": ("g",), "b": ("g",)}) == []
    assert group_tables(pd.DataFrame(), {"a": ("g",)}) == []


def test_host_groups_come_from_hosts_csv_rows():
    rows = [{"host": "c1", "groups": "clients meta"}, {"host": "c2", "groups": ""}, {"host": "", "groups": "x"},
            {"host": "c3"}]
    assert host_groups(rows) == {"c1": ("clients", "meta"), "c2": (), "c3": ()}
