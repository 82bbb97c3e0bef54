"""Secrets that leaked before: plan --show, a bucket URL's keys on juicefs's argv, ?password= in URLs,
and secret or inventory files that are devices."""

from __future__ import annotations

import time

import pytest

from fsbench.core import secret_known
from fsbench.core.errors import ScenarioError
from fsbench.core.inventory import load_inventory
from fsbench.core.secrets import SecretRef, redact, secret_param_spans
from fsbench.kinds import KINDS
from fsbench.scenario.load import load_scenario_text
from tests.conftest import run_cli, write_scenario


@pytest.fixture(autouse=True)
def known():
    """Each test starts and ends with no known secrets (the set is process-wide)."""
    saved, whole = set(secret_known._KNOWN), set(secret_known._WHOLE)
    secret_known._KNOWN.clear()
    secret_known._WHOLE.clear()
    yield
    secret_known._KNOWN.clear()
    secret_known._KNOWN.update(saved)
    secret_known._WHOLE.clear()
    secret_known._WHOLE.update(whole)


@pytest.mark.parametrize(("text", "masked"), [
    ("postgres://jfs@127.0.0.1/db?sslmode=disable&password=queryPw777",
     "postgres://jfs@127.0.0.1/db?sslmode=disable&password=****"),
    ("postgres://u@h/db?sslpassword=kp1&sslmode=verify-full", "postgres://u@h/db?sslpassword=****&sslmode=verify-full"),
    ("host=db user=jfs password=pw9 dbname=jfs", "host=db user=jfs password=**** dbname=jfs"),
    ("mysql://jfs@(h:3306)/jfs?Password=x;y", "mysql://jfs@(h:3306)/jfs?Password=****;y"),
    ("tool --token=abc --api_key=k2 'secret_key=s3'", "tool --token=**** --api_key=**** 'secret_key=****'"),
    ("UID=u;DBPWD=z1", "UID=u;DBPWD=****"),
    ("PWD=/root OLDPWD=/tmp cd pwd=x", "PWD=/root OLDPWD=/tmp cd pwd=****"),
    ("bw=1024KiB/s iops=3 keyword=v", "bw=1024KiB/s iops=3 keyword=v"),
])
def test_parameters_named_like_secrets_are_masked(text, masked):
    assert redact(text) == masked
    assert secret_param_spans(text.encode()) == secret_param_spans(text)  # files are masked as bytes alike


def test_masking_parameters_keeps_a_big_log_fast():
    log = ("fio: write: bw=123KiB/s iops=30 lat=(usec): min=1 max=2\n" * 200_000)  # 11 MB, 1.2 M '='
    start = time.monotonic()
    assert redact(log) == log
    assert time.monotonic() - start < 3


SCENARIO = """\
name: leaks
variables:
  pw: varPw12345
  dbpw: fromSet
targets:
  jfs:
    kind: juicefs
    path: /srv/bench/mnt
    setup: ["echo ${pw} > /dev/null", "echo mysql://u:${dbpw}@db/x > /dev/null"]
    juicefs:
      meta: "postgres://jfs@127.0.0.1:5432/db?sslmode=disable&password=queryPw777"
      storage: s3
      bucket: "https://AKIAURLKEY0001:SeCrEt%2FKeYinurl@s3.example.com/b"
      secret_key: ${pw}
workloads:
  w: {tool: fio, options: {rw: write, size: 1m, bs: 64k}}
"""
LEAKS = ("varPw12345", "setPassword55", "queryPw777", "SeCrEt", "AKIAURLKEY0001")


def test_plan_show_masks_variables_set_values_url_keys_and_query_passwords(tmp_path):
    scenario = write_scenario(tmp_path, SCENARIO)
    proc = run_cli("plan", "--show", str(scenario), "--set", "dbpw=setPassword55")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    assert [leak for leak in LEAKS if leak in out] == []
    assert "echo **** > /dev/null" in out and "mysql://u:****@db/x" in out
    assert "--bucket https://s3.example.com/b " in out


def test_a_query_password_is_remembered_at_load():
    load_scenario_text(SCENARIO, "leaks.yaml")
    assert redact("connecting with queryPw777") == "connecting with ****"


def test_bucket_url_keys_go_to_juicefs_in_its_environment_not_its_argv():
    sc = load_scenario_text(SCENARIO.replace("      secret_key: ${pw}\n", ""), "leaks.yaml")
    t = sc.targets["jfs"]
    plan = KINDS.get("juicefs").plan(t, {"target.path": t.path}, "/var/tmp/fsbench/r")
    argv = " ".join(" ".join(a) for a in plan.once + plan.mount)
    assert "--bucket https://s3.example.com/b " in argv and "SeCrEt" not in argv and "AKIAURLKEY0001" not in argv
    assert plan.env["ACCESS_KEY"] == "AKIAURLKEY0001" and plan.env["SECRET_KEY"] == "SeCrEt/KeYinurl"
    assert plan.store.bucket == "https://s3.example.com/b" and plan.store.env["SECRET_KEY"] == "SeCrEt/KeYinurl"
    assert redact("SeCrEt/KeYinurl AKIAURLKEY0001") == "**** ****"


def test_explicit_keys_win_over_the_url_s():
    sc = load_scenario_text(SCENARIO, "leaks.yaml")
    t = sc.targets["jfs"]
    plan = KINDS.get("juicefs").plan(t, {"target.path": t.path}, "/var/tmp/fsbench/r")
    assert plan.env["SECRET_KEY"] == "varPw12345" and plan.env["ACCESS_KEY"] == "AKIAURLKEY0001"


def test_a_secret_file_that_is_a_device_or_one_huge_line_is_refused_at_once(tmp_path):
    start = time.monotonic()
    with pytest.raises(LookupError, match="secret k: /dev/zero is not a regular file"):
        SecretRef("k", file="/dev/zero").resolve()
    huge = tmp_path / "huge"
    huge.write_bytes(b"x" * (200 * 2**10))
    with pytest.raises(LookupError, match="longer than 64 KiB"):
        SecretRef("k", file=str(huge)).resolve()
    assert time.monotonic() - start < 2
    good = tmp_path / "good"
    good.write_text("s3cr3t-line\r\nsecond line\n")
    assert SecretRef("k", file=str(good)).resolve() == "s3cr3t-line"
    assert redact("x s3cr3t-line") == "x ****"


def test_an_inventory_that_is_a_device_or_huge_is_refused_at_once(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"hosts: {}\n" + b"#" * (5 * 2**20))
    for path, said in (("/dev/zero", "not a regular file"), (str(big), "larger than 4 MiB")):
        with pytest.raises(ScenarioError) as err:
            load_inventory(path)
        assert f"{path}: <top>: cannot read the inventory: {said}" in str(err.value)


def test_ingest_refuses_a_device_naming_it(tmp_path):
    proc = run_cli("ingest", "fio", "/dev/zero", "-o", str(tmp_path / "o.csv"), timeout=30)
    assert proc.returncode == 1 and "error: fio output /dev/zero: not a regular file" in proc.stderr
    proc = run_cli("ingest", "fio", "/dev/zero", "--run-dir", str(tmp_path / "r"), "--no-report", timeout=30)
    assert proc.returncode == 1 and "error: fio output /dev/zero: not a regular file" in proc.stderr
    assert "not a regular file" in (tmp_path / "r" / "cases.csv").read_text()
