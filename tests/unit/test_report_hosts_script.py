"""The Hosts table shows a target's mount command, with its 30-line script folded behind a disclosure
(the packaged template rendered on a run directory of genuine mdtest output)."""

from __future__ import annotations

import csv
import html
import re

from fsbench.ingest.run import ingest_run_dir
from fsbench.report import write_report
from fsbench.report.tables import command_line
from tests.paths import FIXTURES

SCRIPT = "set -e\n# mount the client\n" + "s3fs bucket /mnt/x -o url=http://127.0.0.1:9000\n" + \
    "".join(f"test -d /mnt/x/d{i} || mkdir /mnt/x/d{i}\n" for i in range(28))


def test_command_line_skips_shell_options_and_comments():
    assert command_line(SCRIPT) == "s3fs bucket /mnt/x -o url=http://127.0.0.1:9000"
    assert command_line("juicefs mount -d redis://h/1 /mnt/j") == "juicefs mount -d redis://h/1 /mnt/j"


def test_the_hosts_table_shows_the_mount_command_and_folds_the_script(tmp_path):
    src = FIXTURES / "mdtest" / "3.3.0" / "default_np1_tmpfs.stdout.txt"
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "mdtest.txt").write_bytes(src.read_bytes())
    run, errors = ingest_run_dir("mdtest", [str(tmp_path / "x" / "mdtest.txt")], tmp_path / "run")
    assert errors == []
    with open(run / "hosts.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["host", "kernel", "client_x"])
        w.writeheader()
        w.writerow({"host": "local", "kernel": "6.1", "client_x": SCRIPT})
    page = write_report(run).read_text()
    row = re.search(r"<tr><th>client x</th>(.*?)</tr>", page, re.S)
    assert row, "the client row of the Hosts table"
    cell = row.group(1)
    shown = re.sub(r"<details.*?</details>", "", cell, flags=re.S)
    assert html.unescape(re.sub(r"<[^>]+>", "", shown)).strip() == "s3fs bucket /mnt/x -o url=http://127.0.0.1:9000"
    folded = re.search(r"<details class=\"script\"><summary>the whole script \((\d+) lines\)</summary><pre>(.*?)</pre>",
                       cell, re.S)
    assert folded and folded.group(1) == "31" and html.unescape(folded.group(2)) == SCRIPT
