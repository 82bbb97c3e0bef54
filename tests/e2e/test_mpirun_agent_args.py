"""The real mpirun hands fsbench's plm_rsh_args to the launch agent word for word, and nothing more."""

from __future__ import annotations

import subprocess

import pytest

from fsbench.core.inventory import load_inventory
from fsbench.tools.mdtest.adapter import ssh_agent_args
from tests.conftest import require

pytestmark = pytest.mark.e2e


def test_mpirun_gives_the_agent_exactly_the_inventory_options(tmp_path):
    mpirun = require("mpirun")
    log = tmp_path / "argv.txt"
    agent = tmp_path / "agent.sh"
    # stands in for ssh: records its argv one item a line, then fails so mpirun gives up at once
    agent.write_text(f"#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > {log}\nexit 1\n")
    agent.chmod(0o755)
    inv = tmp_path / "inv.yaml"
    inv.write_text("defaults: {user: bench, port: 2222, key_file: keys/id+lab@1, known_hosts: lab_hosts}\n"
                   "hosts:\n  h1: {address: fsbench-nohost1}\n")
    args = ssh_agent_args(load_inventory(inv)["h1"])
    subprocess.run([mpirun, "--allow-run-as-root", "--mca", "plm_rsh_agent", str(agent), "--mca", "plm_rsh_args",
                    args, "-H", "fsbench-nohost1", "-np", "1", "true"], capture_output=True, timeout=60)
    argv = log.read_text().splitlines()
    host = argv.index("fsbench-nohost1")
    assert argv[:host] == ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-p", "2222",
                           "-i", f"{tmp_path}/keys/id+lab@1", "-o", f"UserKnownHostsFile={tmp_path}/lab_hosts",
                           "-l", "bench"]
    # the remote orted gets the same text inside "..." on a shell line: nothing there for a shell to expand
    forwarded = argv[argv.index("plm_rsh_args") + 1]
    assert forwarded == f'"{args}"' and not set(args) & set("$`\\\"'!")
