"""The S3 service kind and the FUSE client kinds as pure plans: argv, environment, checks, no key in argv."""

from __future__ import annotations

import textwrap

import pytest

from fsbench.core.errors import ScenarioError
from fsbench.core.secrets import is_secret_placeholder, placeholder_env, redact, secret_env
from fsbench.core.shell import render
from fsbench.kinds import KINDS
from fsbench.run.targets.services import ServiceSession, made_up
from fsbench.scenario.load import load_scenario_text
from fsbench.services import SERVICE_KINDS

SCENARIO = """\
name: clients
hosts: {local: {transport: local}}
services:
  s3:
    kind: s3
    hosts: [local]
    s3: {buckets: [bench, other], backend: bolt}
targets:
  s3fs:
    kind: s3fs
    path: /mnt/s3fs
    services: [s3]
    s3fs: &b
      endpoint: ${services.s3.endpoint}
      bucket: ${services.s3.bucket}
      access_key: ${services.s3.access_key}
      secret_key: ${services.s3.secret_key}
      prefix: here
      options: [use_cache=/var/tmp/c]
  rclone:
    kind: rclone
    path: /mnt/rclone
    services: [s3]
    rclone: {<<: *b, options: []}
  any:
    kind: fuse
    path: /mnt/any
    client_process: goofys
    services: [s3]
    fuse:
      mount: goofys --endpoint ${services.s3.endpoint} ${services.s3.bucket} ${target.path}
      version: goofys --version
workloads:
  w: {tool: fio, options: {rw: write, bs: 1m, size: 1m}}
"""

KEYS = {"services.s3.access_key": "AKFSBENCHEXAMPLE0001", "services.s3.secret_key": "s" * 40,
        "services.s3.endpoint": "http://127.0.0.1:9000", "services.s3.bucket": "bench",
        "services.s3.region": "us-east-1", "target.path": "/mnt/x", "run.scratch": "/var/tmp/fsbench/r"}


@pytest.fixture(scope="module")
def scenario():
    return load_scenario_text(SCENARIO, "clients.yaml")


def _plan(sc, name: str):
    t = sc.targets[name]
    return KINDS.get(t.kind).plan(t, {**KEYS, "target.path": t.path}, "/var/tmp/fsbench/r")


def test_s3fs_mounts_path_style_with_the_keys_in_its_environment(scenario):
    plan = _plan(scenario, "s3fs")
    argv = plan.mount[0]
    assert argv[:3] == ["s3fs", "bench:/here", "/mnt/s3fs"]
    assert "url=http://127.0.0.1:9000" in argv and "use_path_request_style" in argv and "use_cache=/var/tmp/c" in argv
    assert plan.env == {"AWS_ACCESS_KEY_ID": KEYS["services.s3.access_key"],
                        "AWS_SECRET_ACCESS_KEY": KEYS["services.s3.secret_key"]}
    assert not [w for w in argv if KEYS["services.s3.secret_key"] in w or KEYS["services.s3.access_key"] in w]
    assert plan.unmount[0][-1].startswith("fusermount3 -u /mnt/s3fs") and "-uz" in plan.force_unmount[0][-1]
    assert plan.after == [["rmdir", "/mnt/s3fs"]] and plan.version == ["s3fs", "--version"]
    assert redact(KEYS["services.s3.secret_key"]) != KEYS["services.s3.secret_key"]  # masked from now on


def test_rclone_is_configured_by_environment_only_and_hands_a_ca_bundle_to_its_own_flag(scenario):
    plan = _plan(scenario, "rclone")
    assert plan.env["RCLONE_CONFIG_FSB_TYPE"] == "s3" and plan.env["RCLONE_CONFIG_FSB_PROVIDER"] == "Other"
    assert plan.env["RCLONE_CONFIG_FSB_SECRET_ACCESS_KEY"] == KEYS["services.s3.secret_key"]
    assert plan.shown[:4] == ["rclone", "mount", "fsb:bench/here", "/mnt/rclone"]
    assert plan.shown[-2:] == ["--vfs-cache-mode", "writes"]  # the default without options
    script = plan.mount[0][-1]
    assert 'export RCLONE_CA_CERT="$AWS_CA_BUNDLE"; unset AWS_CA_BUNDLE' in script and "--daemon" in script
    assert KEYS["services.s3.secret_key"] not in script
    assert plan.client_command() == plan.shown


def test_the_generic_kind_runs_the_scenarios_mount_with_keys_as_environment_references(scenario):
    plan = _plan(scenario, "any")
    script = plan.mount[0][-1]
    assert script == "goofys --endpoint http://127.0.0.1:9000 bench /mnt/any"
    assert plan.version[-1] == "goofys --version" and plan.unmount[0][-1].startswith("fusermount3 -u /mnt/any")


def test_the_generic_kind_needs_its_process_and_every_client_kind_its_section():
    text = SCENARIO.replace("    client_process: goofys\n", "").replace("    rclone: {<<: *b, options: []}\n", "")
    issues = pytest.raises(ScenarioError, load_scenario_text, text, "clients.yaml").value.issues
    messages = " | ".join(str(i) for i in issues)
    assert "targets.any.client_process" in messages and "a fuse target names its client's process" in messages
    assert "a rclone target needs a `rclone:` section" in messages


def test_a_bad_bucket_name_and_server_are_refused_with_their_line():
    text = SCENARIO.replace("buckets: [bench, other], backend: bolt", "buckets: [Bad_Bucket], server: minio")
    issues = pytest.raises(ScenarioError, load_scenario_text, text, "clients.yaml").value.issues
    messages = " | ".join(str(i) for i in issues)
    assert "clients.yaml:7" in messages and "'Bad_Bucket' is not an S3 bucket name" in messages
    assert "expected one of auto, fsbench-s3, moto" in messages


def test_the_s3_service_plans_its_buckets_ports_and_exports(scenario, tmp_path):
    svc = scenario.services["s3"]
    plan = SERVICE_KINDS.get("s3").plan(svc)
    assert plan.default_port == "auto" and set(plan.generated) == {"access_key", "secret_key"}
    assert "-bucket bench -bucket other" in plan.files["start-s3.sh"] and "-backend bolt" in plan.files["start-s3.sh"]
    session = ServiceSession(svc, "local", None, "run1", "/var/tmp/fsbench/r", tmp_path, lambda e: None)  # type: ignore[arg-type]
    session.port = 9000
    exported = session.exported()
    assert exported["services.s3.endpoint"] == "http://127.0.0.1:9000" and exported["services.s3.bucket"] == "bench"
    ak, sk = exported["services.s3.access_key"], exported["services.s3.secret_key"]
    assert len(ak) == 20 and len(sk) == 40 and ak != sk and redact(f"k={sk}") == "k=****"
    # the service's own commands refer to the keys through the environment
    assert set(session.env or {}) == {"FSBENCH_SECRET_SERVICE_ACCESS_KEY", "FSBENCH_SECRET_SERVICE_SECRET_KEY"}


def test_key_placeholders_are_secrets_in_shell_text():
    assert is_secret_placeholder("services.s3.secret_key") and is_secret_placeholder("secrets.x")
    assert not is_secret_placeholder("services.s3.endpoint")
    assert render("x=${services.s3.secret_key} y=${services.s3.bucket}", KEYS) == \
        'x="$FSBENCH_SECRET_SERVICES_S3_SECRET_KEY" y=bench'
    assert placeholder_env("secrets.db") == "FSBENCH_SECRET_DB"
    assert secret_env(KEYS) == {"FSBENCH_SECRET_SERVICES_S3_ACCESS_KEY": KEYS["services.s3.access_key"],
                                "FSBENCH_SECRET_SERVICES_S3_SECRET_KEY": KEYS["services.s3.secret_key"]}


def test_made_up_keys_are_letters_and_digits():
    keys = {made_up(40) for _ in range(20)}
    assert len(keys) == 20 and all(k.isalnum() and len(k) == 40 for k in keys)


def test_the_s3_service_has_a_readiness_probe_and_needs_no_start_commands():
    text = textwrap.dedent("""\
        name: only-s3
        services: {s3: {kind: s3}}
        targets: {t: {path: /srv/x, services: [s3]}}
        workloads: {w: {tool: fio, options: {rw: write, bs: 1m, size: 1m}}}
        """)
    sc = load_scenario_text(text, "only.yaml")
    plan = SERVICE_KINDS.get("s3").plan(sc.services["s3"])
    # ready once the default bucket answers 200: the server listens and the bucket exists
    assert plan.ready.endswith("${service.port}/fsbench | grep -qx 200")
    assert plan.start == ["sh ${service.dir}/start-s3.sh"]


def test_seed_001_scenario_uses_its_own_server_below_full_scale_and_an_existing_store_at_full():
    """s3-fuse-clients: smoke and quick start fsbench-s3; full (100 GiB files: beyond fsbench-s3 and moto,
    which hold multipart uploads in RAM) starts nothing and reads the store's keys from the environment."""
    from fsbench.core.units import parse_size
    from fsbench.scenario.load import load_scenario
    from tests.paths import REPO

    path = REPO / "scenarios" / "s3-fuse-clients.yaml"
    quick, full = load_scenario(path), load_scenario(path, ["scale=full"])
    assert all(t.services == ("s3",) for t in quick.targets.values()) and quick.secrets == {}
    assert all(t.services == () for t in full.targets.values())
    assert {n: r.env for n, r in full.secrets.items()} == {"s3_access_key": "AWS_ACCESS_KEY_ID",
                                                           "s3_secret_key": "AWS_SECRET_ACCESS_KEY"}
    s3fs, cache = full.targets["s3fs"], full.targets["s3fs-cache"]
    assert (s3fs.settings.access_key, s3fs.settings.secret_key) == ("${secrets.s3_access_key}",
                                                                    "${secrets.s3_secret_key}")
    # s3fs's parts: S3 allows 10,000 per object; the default 10 MiB would stop at 97.7 GiB
    big = parse_size(str(full.workloads["seq-write-1m"].options["size"]))
    assert s3fs.settings.options == ("multipart_size=64",) and big / (64 * 2**20) <= 10_000 < big / (10 * 2**20)
    assert "-o multipart_size=64" in cache.settings.mount and "${secrets.s3_access_key}" in cache.settings.mount
    assert quick.targets["s3fs"].settings.options == ("multipart_size=10",)  # s3fs's own default, said aloud
    values = {"secrets.s3_access_key": "AKFULLSCALEEXAMPLE01", "secrets.s3_secret_key": "f" * 40,
              "run.id": "r", "run.scratch": "/var/tmp/fsbench/r"}
    plan = KINDS.get("s3fs").plan(s3fs, {**values, "target.path": s3fs.path}, "/var/tmp/fsbench/r")
    assert plan.env == {"AWS_ACCESS_KEY_ID": "AKFULLSCALEEXAMPLE01", "AWS_SECRET_ACCESS_KEY": "f" * 40}
    argv = " ".join(plan.mount[0])
    assert "url=https://s3.us-east-1.amazonaws.com" in argv and "endpoint=us-east-1" in argv
    assert "AKFULLSCALEEXAMPLE01" not in argv and "f" * 40 not in argv
    # the small files: exactly the seed's 100,000 over 128 threads (two job sections, one reporting group)
    for sc, files, threads in ((quick, 256, 16), (full, 100_000, 128)):
        for name in ("small-files-write", "small-files-read"):
            jobs = list(sc.workloads[name].jobs.values())
            assert sum(j["numjobs"] * j["nrfiles"] for j in jobs) == files and sum(j["numjobs"] for j in jobs) == threads
            assert [j.get("new_group") for j in jobs] == [None, 0]
