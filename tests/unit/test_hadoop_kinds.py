"""HDFS, S3A and JuiceFS through Hadoop as pure plans: the hdfs service's files and commands, the URL target
kinds' setup and teardown, NNBench's command line and order; no key in argv or in a file."""

from __future__ import annotations

import shlex
import textwrap
from dataclasses import dataclass, field

import pytest

from fsbench import hadoop
from fsbench.api.tools import BuildContext, CheckContext
from fsbench.core.errors import FsbenchError, ScenarioError
from fsbench.core.shell import render
from fsbench.kinds import KINDS
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.scenario.load import load_scenario_text
from fsbench.services import SERVICE_KINDS
from fsbench.tools import get_tool
from fsbench.tools.nnbench import sequence

SCENARIO = """\
name: hadoop
hosts: {local: {transport: local}}
services:
  hdfs:
    kind: hdfs
    hosts: [local]
    hdfs: {datanodes: 2, replication: 2, properties: {dfs.namenode.handler.count: 64}}
  cluster:
    kind: hdfs
    managed: false
    hdfs: {namenode: "hdfs://nn1.example:8020"}
  s3: {kind: s3, hosts: [local]}
  redis:
    start: ["redis-server --port ${service.port}"]
    ready: redis-cli -p ${service.port} ping
    port: auto
targets:
  hdfs:
    kind: hdfs
    path: /bench
    services: [hdfs]
    hdfs: {namenode: "${services.hdfs.url}"}
  s3a:
    kind: s3a
    path: /bench
    services: [s3]
    s3a:
      endpoint: ${services.s3.endpoint}
      bucket: ${services.s3.bucket}
      access_key: ${services.s3.access_key}
      secret_key: ${services.s3.secret_key}
  jfs:
    kind: jfs
    path: /bench
    services: [redis, s3]
    jfs:
      meta: redis://:${secrets.redis_pw}@${services.redis.host}:${services.redis.port}/1
      storage: s3
      bucket: ${services.s3.endpoint}/${services.s3.bucket}
      access_key: ${services.s3.access_key}
      secret_key: ${services.s3.secret_key}
      downgrade_for_sdk: true
secrets:
  redis_pw: {env: FSB_TEST_REDIS_PW}
workloads:
  nn:
    tool: nnbench
    options: {files_per_map: 3, operations: [delete, create_write]}
    sweep: {product: {maps: [1, 20]}}
"""

VALUES = {"services.s3.access_key": "AKFSBENCHHADOOP00001", "services.s3.secret_key": "h" * 40,
          "services.s3.endpoint": "http://127.0.0.1:9000", "services.s3.bucket": "bench",
          "services.hdfs.url": "hdfs://127.0.0.1:8020", "services.redis.host": "127.0.0.1",
          "services.redis.port": "6379", "secrets.redis_pw": "redis-pw-hadoop", "run.id": "r1",
          "run.scratch": "/var/tmp/fsbench/r1", "target.name": "jfs", "target.path": "/bench", "host.name": "local"}
SECRETS = (VALUES["services.s3.access_key"], VALUES["services.s3.secret_key"], VALUES["secrets.redis_pw"])


@pytest.fixture(scope="module")
def scenario():
    return load_scenario_text(SCENARIO, "hadoop.yaml")


def _plan(sc, name: str):
    t = sc.targets[name]
    return KINDS.get(t.kind).plan(t, {**VALUES, "target.name": name}, VALUES["run.scratch"])


def _no_secret(words) -> None:
    text = " ".join(words)
    assert not [s for s in SECRETS if s in text], text


def test_the_hdfs_service_renders_its_daemons_on_the_services_ports(scenario):
    svc = scenario.services["hdfs"]
    plan = SERVICE_KINDS.get("hdfs").plan(svc)
    assert plan.ports == ("http",) and plan.default_port == "auto" and plan.exports["url"].startswith("hdfs://")
    site = plan.files["hdfs-site.xml"]
    assert "<name>dfs.namenode.rpc-address</name><value>${service.host}:${service.port}</value>" in site
    assert "<name>dfs.namenode.http-address</name><value>${service.host}:${service.port_http}</value>" in site
    assert "<name>dfs.replication</name><value>2</value>" in site
    assert "<name>dfs.namenode.handler.count</name><value>64</value>" in site  # the scenario's property wins
    start = plan.files["start-hdfs.sh"]
    assert start.count("org.apache.hadoop.hdfs.server.datanode.DataNode") == 2
    assert "datanode-2.pid" in start and "-format" in start and "data/name/current" in start
    assert "@/usr/local/share/fsbench/hadoop/jvm.args" in start and "webapps" not in start  # the jar cache's
    assert "2 DataNode(s) live" in plan.files["ready-hdfs.sh"].replace("${live:-0} of ", "")
    assert plan.logs == {"${service.dir}/logs": "logs"}
    values = {"service.dir": "/d", "service.host": "127.0.0.1", "service.port": "1", "service.port_http": "2",
              "service.name": "hdfs"}
    assert "127.0.0.1:2/jmx" in render(plan.files["ready-hdfs.sh"], values, quote=False)


def test_an_existing_cluster_is_only_probed(scenario):
    plan = SERVICE_KINDS.get("hdfs").plan(scenario.services["cluster"])
    assert not plan.start and not plan.stop and plan.exports == {"url": "hdfs://nn1.example:8020"}
    assert "DFSAdmin -fs hdfs://nn1.example:8020 -safemode get" in plan.ready and "Safe mode is OFF" in plan.ready


def test_an_existing_ha_nameservice_is_probed_with_its_client_settings():
    """hdfs://NS resolves only through dfs.nameservices & co.: the section's properties reach the probe."""
    ha = {"dfs.nameservices": "ns1", "dfs.ha.namenodes.ns1": "nn1,nn2",
          "dfs.namenode.rpc-address.ns1.nn1": "m1.example:8020", "dfs.namenode.rpc-address.ns1.nn2": "m2.example:8020",
          "dfs.client.failover.proxy.provider.ns1":
              "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider"}
    kind = SERVICE_KINDS.get("hdfs")
    svc = load_scenario_text(textwrap.dedent(f"""\
        name: ha
        services:
          hdfs:
            kind: hdfs
            managed: false
            hdfs: {{namenode: "hdfs://ns1", properties: {ha}}}
        targets: {{t: {{kind: hdfs, path: /b, services: [hdfs], hdfs: {{namenode: "${{services.hdfs.url}}",
                        properties: {ha}}}}}}}
        workloads: {{w: {{tool: nnbench, options: {{maps: 1}}}}}}
        """), "ha.yaml").services["hdfs"]
    plan = kind.plan(svc)
    assert plan.exports == {"url": "hdfs://ns1"}
    argv = shlex.split(plan.ready.splitlines()[-1].split(" 2>&1")[0])
    main = argv.index("org.apache.hadoop.hdfs.tools.DFSAdmin")
    generic = argv[main + 1:argv.index("-fs")]
    assert generic == [w for k, v in ha.items() for w in ("-D", f"{k}={v}")]  # Hadoop's generic options, in order
    assert argv[argv.index("-fs") + 1:] == ["hdfs://ns1", "-safemode", "get"]


def test_an_hdfs_target_makes_and_removes_its_run_folder_through_the_client(scenario):
    plan = _plan(scenario, "hdfs")
    assert plan.once[-1][-3:] == ["-mkdir", "-p", "hdfs://127.0.0.1:8020/bench/fsbench-r1"]
    assert plan.after[0][-5:] == ["-rm", "-r", "-f", "-skipTrash", "hdfs://127.0.0.1:8020/bench/fsbench-r1"]
    assert hadoop.FS_SHELL in plan.once[-1] and not plan.mount and not plan.env
    assert plan.version[-1] == hadoop.VERSION_INFO


def test_s3a_keys_travel_in_the_environment_only(scenario):
    plan = _plan(scenario, "s3a")
    assert plan.env == {"AWS_ACCESS_KEY_ID": SECRETS[0], "AWS_SECRET_ACCESS_KEY": SECRETS[1]}
    argv = plan.once[-1]
    assert argv[-1] == "s3a://bench/bench/fsbench-r1"
    assert "fs.s3a.endpoint=http://127.0.0.1:9000" in argv and "fs.s3a.path.style.access=true" in argv
    assert "fs.s3a.aws.credentials.provider=com.amazonaws.auth.EnvironmentVariableCredentialsProvider" in argv
    for cmd in plan.once + plan.after + [plan.shown]:
        _no_secret(cmd)


def test_jfs_formats_then_downgrades_a_new_volume_for_the_1_0_sdk(scenario):
    plan = _plan(scenario, "jfs")
    fmt = next(c for c in plan.once if c[:2] == ["juicefs", "format"])
    assert fmt[-2:] == ["redis://127.0.0.1:6379/1", "jfs"] and "--trash-days" in fmt
    script = [c for c in plan.once if c[0] == "/bin/sh"][-1][-1]  # after the empty-meta check
    assert "dump" in script and "destroy --yes" in script and "load" in script and "MinClientVersion" in script
    assert "not empty" in script  # never a volume with files
    assert plan.env["META_PASSWORD"] == "redis-pw-hadoop" and plan.env["SECRET_KEY"] == SECRETS[1]
    assert plan.once[-1][-1] == "jfs://jfs/bench/fsbench-r1"
    assert "juicefs.meta=redis://127.0.0.1:6379/1" in plan.once[-1]
    for cmd in plan.once + plan.after:
        _no_secret(cmd)
    # tools get the same volume, named after the target, with the password left to META_PASSWORD
    session = TargetSession(scenario.targets["jfs"], {}, "r1", lambda e: None,
                            service_values={k: v for k, v in VALUES.items() if k.startswith("services.")},
                            secrets={"redis_pw": VALUES["secrets.redis_pw"]}, scratch=VALUES["run.scratch"])
    fs = session.tool_settings("local")
    assert fs.url("/bench") == "jfs://jfs/bench" and fs.client_env() == {"META_PASSWORD": "redis-pw-hadoop"}
    assert fs.client_conf()["juicefs.cache-dir"] == "/var/tmp/fsbench/r1/jfs-cache/jfs"
    _no_secret(list(fs.client_conf().values()))


def test_url_targets_refuse_urls_and_the_root_as_path():
    bad = SCENARIO.replace("    kind: s3a\n    path: /bench", "    kind: s3a\n    path: s3a://bench/x").replace(
        "    kind: hdfs\n    path: /bench", "    kind: hdfs\n    path: /")
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(bad, "bad.yaml")
    text = str(err.value)
    assert "targets.s3a.path" in text and "a folder inside the file system" in text
    assert "targets.hdfs.path" in text and "must not be the file system's root" in text


def test_written_keys_are_refused():
    bad = SCENARIO.replace("access_key: ${services.s3.access_key}\n      secret_key: ${services.s3.secret_key}\n"
                           "  jfs:", "access_key: AKIAWRITTEN\n      secret_key: ${services.s3.secret_key}\n  jfs:")
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(bad, "bad.yaml")
    assert "targets.s3a.s3a.access_key" in str(err.value) and "references" in str(err.value)


@pytest.mark.parametrize("measured, runs", [
    (["create_write", "open_read", "rename", "delete"],
     ["create_write", "open_read", "rename", "create_write:setup", "delete"]),
    (["delete", "rename"], ["create_write:setup", "rename", "create_write:setup", "delete"]),
    (["delete", "create_write"], ["create_write", "delete"]),
    (["open_read"], ["create_write:setup", "open_read"]),
])
def test_nnbench_runs_operations_in_an_order_that_works(measured, runs):
    assert sequence(measured) == runs


@dataclass
class _Case:
    case_id: str
    options: dict = field(default_factory=dict)


def test_nnbench_command_configuration_and_secrets(scenario):
    session = TargetSession(scenario.targets["s3a"], {}, "r1", lambda e: None,
                            service_values={k: v for k, v in VALUES.items() if k.startswith("services.")})
    ctx = BuildContext(target_kind="s3a", address="url", target_settings=session.tool_settings("local"), run_id="r1")
    inv = get_tool("nnbench").build(_Case("s3a__nn__maps=20__r1", {"maps": 20, "files_per_map": 3}), "/bench", ctx)
    argv = inv.argv
    assert argv[0] == "java" and hadoop.NNBENCH_RUNS in argv and argv[argv.index("-cp") + 1].startswith(".:")
    assert argv[argv.index("-baseDir") + 1] == "s3a://bench/bench/fsbench-r1/s3a__nn__maps=20__r1"
    assert argv[argv.index("-runs") + 1] == "create_write,open_read,rename,create_write:setup,delete"
    assert argv[argv.index("-maps") + 1] == "20" and argv[argv.index("-numberOfFiles") + 1] == "3"
    assert "-startTime" not in argv and "-operation" not in argv  # the runner sets both per run
    assert argv[argv.index("-barrierMs") + 1] == "1500" and "-firstBarrierMs" not in argv  # the runner's: as later runs
    quick = get_tool("nnbench").build(_Case("c", {"maps": 20, "barrier_ms": 750, "first_barrier_ms": 3000}), "/b",
                                      ctx).argv
    assert quick[quick.index("-barrierMs") + 1] == "750" and quick[quick.index("-firstBarrierMs") + 1] == "3000"
    assert "<name>mapreduce.local.map.tasks.maximum</name><value>20</value>" in inv.files["mapred-site.xml"]
    assert "<name>mapreduce.task.io.sort.mb</name><value>1</value>" in inv.files["mapred-site.xml"]
    # the job client sees each job's end within 100 ms (its default: a second)
    assert "<name>mapreduce.client.progressmonitor.pollinterval</name><value>100</value>" in inv.files["mapred-site.xml"]
    assert "<name>fs.s3a.endpoint</name><value>http://127.0.0.1:9000</value>" in inv.files["core-site.xml"]
    # S3A's connection pool fits every map's open control file and its own requests
    inv100 = get_tool("nnbench").build(_Case("c", {"maps": 100}), "/bench", ctx)
    assert "<name>fs.s3a.connection.maximum</name><value>216</value>" in inv100.files["core-site.xml"]
    assert inv.env == {"AWS_ACCESS_KEY_ID": SECRETS[0], "AWS_SECRET_ACCESS_KEY": SECRETS[1]}
    assert inv.outputs == ["NNBench_results.log"]
    _no_secret(argv + list(inv.files.values()))


def test_nnbench_refuses_other_targets_and_bad_options(scenario):
    with pytest.raises(FsbenchError, match="Hadoop file system target"):
        get_tool("nnbench").build(_Case("x"), "/tmp/x", BuildContext())
    tool = get_tool("nnbench")
    issues = tool.check_options({"maps": 0, "operations": ["mkdir"], "block_size": 1000, "heap": "lots",
                                 "files": 3}, None, {}, CheckContext())
    text = " ".join(f"{i.path}: {i.message}" for i in issues)
    for part in ("maps must be a whole number", "unknown NNBench operation", "multiple of 512", "heap",
                 "unknown nnbench option 'files'"):
        assert part in text, text
    bad = textwrap.dedent("""\
        name: x
        targets: {d: {path: /var/tmp/fsbench-x}}
        workloads: {n: {tool: nnbench}}
        """)
    with pytest.raises(ScenarioError, match="nnbench cannot run on target d"):
        load_scenario_text(bad, "x.yaml")


def test_the_java_command_quotes_nothing_secret_and_uses_the_jar_cache():
    argv = hadoop.java("Main", ["a"], jars="/opt/j", heap="1g", conf_dirs=("/c",), properties={"k": "v"})
    assert shlex.join(argv) == "java @/opt/j/jvm.args -Xmx1g -cp '/c:/opt/j/web:/opt/j/fsbench-hadoop.jar:/opt/j/lib/*' Main -D k=v a"
    assert hadoop.site_xml({"a<b": "x&y"}).count("<property>") == 1 and "a&lt;b" in hadoop.site_xml({"a<b": "1"})


def test_only_fsbench_s_own_helper_jvms_start_brief(scenario):
    """A folder made or removed, a probe, a version, the NameNode's format: the first JIT tier only. The
    NameNode, the DataNodes and NNBench, whose speed a scenario measures, start as Hadoop would."""
    brief = list(hadoop.BRIEF_JVM)

    def is_brief(argv: list[str]) -> bool:
        return argv[2:2 + len(brief)] == brief

    for name in ("hdfs", "s3a", "jfs"):
        plan = _plan(scenario, name)
        assert all(is_brief(a) for a in (plan.once[-1], *plan.after, plan.version)), name
    probe = SERVICE_KINDS.get("hdfs").plan(scenario.services["cluster"]).ready
    assert " ".join(brief) in probe
    start = SERVICE_KINDS.get("hdfs").plan(scenario.services["hdfs"]).files["start-hdfs.sh"]
    jvms = [line for line in start.splitlines() if "java @" in line]
    assert [" ".join(brief) in line for line in jvms] == [True, False, False, False]  # format; NN, 2 DNs
    assert is_brief(get_tool("nnbench").version_argv())
    session = TargetSession(scenario.targets["hdfs"], {}, "r1", lambda e: None,
                            service_values={k: v for k, v in VALUES.items() if k.startswith("services.")})
    ctx = BuildContext(target_kind="hdfs", address="url", target_settings=session.tool_settings("local"), run_id="r1")
    measured = get_tool("nnbench").build(_Case("hdfs__nn__maps=1__r1", {"maps": 1}), "/bench", ctx).argv
    assert not set(brief) & set(measured)


def test_nnbench_estimate_counts_the_start_barriers():
    """Most of a small NNBench case is its maps waiting at each run's start barrier, so the plan's estimate
    counts them (barrier_ms + 20 ms a map, first_barrier_ms once) and lands within what seed 002's cases took
    here (docs/benchmarks.md, session 21: 10-14 s and 14-19 s at smoke scale, 6.4-10.3 s and 14.4-22.2 s at
    quick scale)."""
    est = get_tool("nnbench").estimate_seconds
    quick = {"files_per_map": 2, "barrier_ms": 750, "operations": ["create_write", "open_read", "rename"]}
    for options, low, high in (({"maps": 1, "files_per_map": 2}, 10, 14.5), ({"maps": 20, "files_per_map": 2}, 14, 19),
                               ({**quick, "maps": 20}, 6.4, 10.3), ({**quick, "maps": 100}, 14.4, 22.2)):
        assert low <= est(options, None, {}) <= high, options
    base = {"maps": 20, "files_per_map": 2}
    more = est({**base, "barrier_ms": 2500}, None, {}) - est(base, None, {})
    assert more == pytest.approx(5.0)  # five runs, 1 s more each
    first = est({**base, "first_barrier_ms": 6000}, None, {}) - est(base, None, {})
    assert first == pytest.approx(6.0 - 1.9)  # the first run's barrier only
