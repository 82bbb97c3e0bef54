"""Inventory key_file/known_hosts paths that Open MPI's plm_rsh_args would split or a remote shell expand."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsbench.core.errors import ScenarioError
from fsbench.core.inventory import HostSpec, load_inventory
from fsbench.tools.mdtest.adapter import ssh_agent_args


def _inventory(folder: Path, settings: str) -> Path:
    path = folder / "inv.yaml"
    path.write_text("defaults:\n  user: bench\n" + settings + "hosts:\n  h1: {address: 10.0.0.1}\n"
                    "  h2: {address: 10.0.0.2, key_file: /keys/h2}\n")
    return path


@pytest.mark.parametrize(("value", "said"), [
    ("/tmp/k -oProxyCommand=touch${IFS}/tmp/PWNED -ik2", "holds space '$' '{' '}'"),
    ("/root/My Keys/id_ed25519", "holds space"),
    ("/root/keys/$(id)", "holds '$' '(' ')'"),
    ("/root/keys/a\"b`c\\d", "holds '\"' '\\\\' '`'"),
    ("-oProxyCommand=touch/tmp/x", "starts with '-'"),
])
def test_paths_mpirun_would_split_are_refused_at_load(tmp_path, value, said):
    inv = _inventory(tmp_path, "  key_file: '" + value.replace("'", "''") + "'\n")
    with pytest.raises(ScenarioError) as info:
        load_inventory(inv)
    text = str(info.value)
    assert f"{inv}:3: defaults.key_file: " in text and said in text
    assert "symlink" in text and "plm_rsh_args" in text


def test_a_host_own_known_hosts_is_refused_on_its_line(tmp_path):
    inv = tmp_path / "inv.yaml"
    inv.write_text("hosts:\n  web1:\n    address: 10.0.0.1\n    known_hosts: 'lab known hosts'\n")
    with pytest.raises(ScenarioError) as info:
        load_inventory(inv)
    assert f"{inv}:4: hosts.web1.known_hosts: 'lab known hosts' holds space" in str(info.value)


def test_a_plain_relative_key_in_a_folder_with_spaces_is_refused_naming_the_host(tmp_path):
    folder = tmp_path / "My Lab"
    folder.mkdir()
    inv = folder / "inv.yaml"
    inv.write_text("hosts:\n  web1:\n    address: 10.0.0.1\n    key_file: id_lab\n")
    with pytest.raises(ScenarioError) as info:
        load_inventory(inv)
    text = str(info.value)
    assert f"{inv}:4: hosts.web1.key_file: key_file of web1 resolves to '{folder}/id_lab', which holds space" in text


def test_an_address_or_login_starting_with_a_dash_is_refused(tmp_path):
    inv = tmp_path / "inv.yaml"
    inv.write_text("hosts:\n  web1:\n    address: -G\n    user: -v\n")
    with pytest.raises(ScenarioError) as info:
        load_inventory(inv)
    text = str(info.value)
    assert f"{inv}:3: hosts.web1.address: '-G' starts with '-'" in text
    assert f"{inv}:4: hosts.web1.user: '-v' starts with '-'" in text


def test_plain_paths_load_and_reach_the_agent_as_single_words(tmp_path):
    inv = _inventory(tmp_path, "  key_file: keys/id_ed25519\n  known_hosts: ~/.ssh/lab_hosts\n")
    hosts = load_inventory(inv)
    assert hosts["h1"].key_file == f"{tmp_path}/keys/id_ed25519" and hosts["h2"].key_file == "/keys/h2"
    args = ssh_agent_args(hosts["h1"])
    # Open MPI cuts at single spaces and keeps every other character: no quotes may be added
    assert args.split(" ") == ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-i",
                               f"{tmp_path}/keys/id_ed25519", "-o",
                               f"UserKnownHostsFile={Path('~/.ssh/lab_hosts').expanduser()}", "-l", "bench"]


def test_the_agent_refuses_a_spec_that_did_not_come_through_the_inventory(monkeypatch):
    monkeypatch.setenv("HOME", "/home/my user")
    with pytest.raises(ValueError, match="plm_rsh_args"):
        ssh_agent_args(HostSpec(name="h", key_file="~/.ssh/id"))
