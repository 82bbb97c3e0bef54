"""notebooks/analysis.ipynb runs against a real run directory and rebuilds a table and a chart."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pandas as pd
from nbclient import NotebookClient

from tests.conftest import run_cli, write_scenario
from tests.paths import REPO


def test_analysis_notebook_executes(tmp_path, fio):
    scenario = write_scenario(tmp_path, f"""\
        name: nb
        targets:
          a: {{path: {tmp_path}, baseline: true}}
          b: {{path: {tmp_path}}}
        workloads:
          w:
            tool: fio
            options: {{rw: write, bs: 64k, size: 2m}}
            sweep: {{product: {{numjobs: [1, 2]}}}}
        """)
    run = Path(run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report",
                       check=True).stdout.splitlines()[0])
    nb = nbformat.read(REPO / "notebooks" / "analysis.ipynb", as_version=4)
    os.environ["FSBENCH_RUN"] = str(run)
    try:
        NotebookClient(nb, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(REPO / "notebooks")}}).execute()
    finally:
        os.environ.pop("FSBENCH_RUN", None)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    table_html = html[1]  # after df.head(): the bandwidth table in MiB/s
    results = pd.read_csv(run / "results.csv")
    for value in results[results.metric == "bandwidth"].value:  # one repetition: each case is one cell
        assert f"{round(value / 2**20, 1)}" in table_html
    assert (run / "notebook-bandwidth.png").stat().st_size > 5000
