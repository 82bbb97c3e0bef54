"""Seed 004's Compare through the CLI: genuine mdtest outputs ingested as four Ceph-like variants
(`fsbench ingest mdtest ... --run-dir`), a `best` view with `reference: rbd-ssd`, then `fsbench report`:
the HTML's % cells are each variant's share of RBD-SSD, capped at 100 and rounded down, never 0 %."""

from __future__ import annotations

import csv
import html
import math
import re
import shutil
from pathlib import Path

import yaml

from tests.conftest import run_cli
from tests.paths import FIXTURES

MDTEST = FIXTURES / "mdtest"
#: genuine mdtest outputs of one shape, one per variant; RBD-SSD is the slowest of them in places
SOURCES = {"rbd-ssd": MDTEST / "3.3.0" / "default_np1_tmpfs.stdout.txt",
           "cephfs-ssd": MDTEST / "3.3.0" / "default_np4_ext4.stdout.txt",
           "rbd-hdd": MDTEST / "4.0.0" / "default_np4_tmpfs.stdout.txt",
           "cephfs-hdd": MDTEST / "3.2.1" / "default_np2_ext4.stdout.txt"}


def _cells(page: str) -> dict[str, dict[str, str]]:
    """Compare tables in the HTML: operation title -> {variant: its % cell}."""
    section = page[page.index('id="view-mdtest-best"'):]
    section = section[:section.index("</section>")]
    out: dict[str, dict[str, str]] = {}
    for block in re.split(r"<h3[^>]*>", section)[1:]:
        title = html.unescape(re.sub(r"<[^>]+>", "", block[:block.index("</h3>")])).strip()
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", block, re.S)
        for r in rows:
            texts = [html.unescape(re.sub(r"<[^>]+>", " ", c)).split()
                     for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)]
            if len(texts) == 3 and texts[0] and texts[0][0] in SOURCES:
                out.setdefault(title, {})[texts[0][0]] = texts[2][0]
    return out


def test_compare_is_a_capped_whole_percent_of_rbd_ssd(tmp_path: Path):
    files = []
    for variant, src in SOURCES.items():
        (tmp_path / variant).mkdir()
        files.append(str(shutil.copyfile(src, tmp_path / variant / "mdtest.txt")))
    run = tmp_path / "run"
    run_cli("ingest", "mdtest", *files, "--run-dir", str(run), "--no-report", check=True)
    data = yaml.safe_load((run / "scenario.yaml").read_text())
    data["report"] = {"views": [{"view": "best", "workload": "mdtest", "title": "Compare", "reference": "rbd-ssd"}]}
    (run / "scenario.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    run_cli("report", str(run), check=True)

    rates: dict[str, dict[str, float]] = {}
    with open(run / "results.csv") as f:
        for r in csv.DictReader(f):
            if r["metric"] == "rate" and r["stat"] == "mean" and float(r["value"]) > 0:
                rates.setdefault(r["operation"], {})[r["target"]] = float(r["value"])
    expected = {op: {t: f"{math.floor(100 * min(1.0, v / by['rbd-ssd']) + 1e-9)}%" for t, v in by.items()}
                for op, by in rates.items() if "rbd-ssd" in by and len(by) > 1}
    above = [op for op, by in rates.items() if max(by.values()) > by.get("rbd-ssd", math.inf)]
    assert above, "the fixture must have operations where another variant beats RBD-SSD"

    shown = _cells((run / "report.html").read_text())
    assert len(shown) == len(expected), (shown.keys(), expected.keys())
    for title, cells in shown.items():
        op = next(op for op in expected if op.replace("_", " ").lower() == title.lower())
        assert cells == {t: ("<1%" if e == "0%" else e) for t, e in expected[op].items()}, title
        assert cells["rbd-ssd"] == "100%"
    # a variant faster than RBD-SSD reads 100 %, as the seed's RBD-HDD does, never above
    for op in above:
        cells = next(c for title, c in shown.items() if op.replace("_", " ").lower() == title.lower())
        assert all(cells[t] == "100%" for t, v in rates[op].items() if v > rates[op]["rbd-ssd"])
