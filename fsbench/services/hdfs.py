"""HDFS as a service kind: a real NameNode and one or more real DataNodes on one host, started as JVMs from
the jar cache (fsbench/hadoop: Hadoop 3.3.6 from Maven Central, no tarball, no MiniDFSCluster), or an
existing cluster (`managed: false`) whose NameNode URL targets then use; an HA nameservice
(hdfs://NAMESERVICE) is probed with the client settings of the section's `properties`.

A managed HDFS gets its configuration rendered into ${service.dir} (core-site.xml, hdfs-site.xml,
log4j.properties), its NameNode formatted there on the first start, the NameNode's RPC port as the
service's port (`auto` by default) and its HTTP port as ${service.port_http}; the DataNodes listen on
ports the kernel chooses (port 0, as MiniDFSCluster does). It is ready when the NameNode is out of safe
mode and every DataNode is live (the NameNode's JMX over HTTP); stopping kills the JVMs (TERM, then KILL)
and the logs are kept in services/<name>/<host>/logs/. Targets use ${services.NAME.url} (hdfs://host:port).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from fsbench import hadoop
from fsbench.api.sections import Section
from fsbench.api.services import ServiceKind, ServicePlan, ServiceSpec
from fsbench.config import schema as s
from fsbench.config.schema import option

NAMENODE = "org.apache.hadoop.hdfs.server.namenode.NameNode"
DATANODE = "org.apache.hadoop.hdfs.server.datanode.DataNode"
DFSADMIN = "org.apache.hadoop.hdfs.tools.DFSAdmin"
HEAP_RULE = r"^[1-9][0-9]*[kmgKMG]$"


@dataclass(frozen=True)
class Hdfs:
    """What the scenario says of its HDFS."""

    datanodes: int = option(s.integer(1), 1, doc="DataNode JVMs on the service's host")
    replication: int = option(s.integer(1), 1, doc="dfs.replication (at most datanodes)")
    namenode_heap: str = option(s.matches(HEAP_RULE, "a JVM heap size such as 512m or 2g"), "1g")
    datanode_heap: str = option(s.matches(HEAP_RULE, "a JVM heap size such as 512m or 2g"), "512m")
    handlers: int | None = option(s.integer(1), None, doc="dfs.namenode.handler.count: RPC handler threads "
                                                          "(default: Hadoop's, 10)")
    properties: dict = option(s.mapping_of(s.scalar, name_rule=False, what="property"), factory=dict, convert=dict,
                              doc="managed: more hdfs-site.xml properties, e.g. {dfs.namenode.handler.count: 64}; "
                                  "managed: false: the client settings of the probe, e.g. an HA nameservice's "
                                  "dfs.nameservices, dfs.ha.namenodes.NS, dfs.namenode.rpc-address.NS.NN, "
                                  "dfs.client.failover.proxy.provider.NS")
    jars: str = option(s.line_text, "", doc="the jar cache (default: FSBENCH_HADOOP_HOME or "
                                            f"{hadoop.DEFAULT_HOME}, filled by install.sh)")
    namenode: str = option(s.line_text, "", doc="managed: false: the cluster's URL, e.g. hdfs://nn1:8020 or "
                                                "hdfs://NAMESERVICE (default hdfs://HOST:PORT of the service)")


SECTION = Section(Hdfs, "hdfs settings")

#: the NameNode's JMX beans that say whether it serves: live DataNodes, safe mode
_JMX = "http://${service.host}:${service.port_http}/jmx?qry=Hadoop:service=NameNode,name="


def hdfs_site(spec: Hdfs) -> dict[str, str]:
    """hdfs-site.xml of a single-host HDFS whose NameNode and DataNodes listen on the service's address.

    Stock Hadoop otherwise (seed 002 measured a stock cluster): only where it lives, and how soon it leaves
    safe mode after its start, differ from Hadoop's defaults; a server setting that changes what the
    benchmark measures is the scenario's to write, under `properties`, where the run's copy of this file
    shows it (services/<name>/<host>/hdfs-site.xml)."""
    site = {
        "dfs.namenode.name.dir": "file://${service.dir}/data/name",
        "dfs.namenode.rpc-address": "${service.host}:${service.port}",
        "dfs.namenode.http-address": "${service.host}:${service.port_http}",
        "dfs.replication": str(spec.replication),
        # DataNodes: ports the kernel picks, announced under the service's address
        "dfs.datanode.address": "${service.host}:0",
        "dfs.datanode.http.address": "${service.host}:0",
        "dfs.datanode.ipc.address": "${service.host}:0",
        "dfs.datanode.hostname": "${service.host}",
        "dfs.namenode.datanode.registration.ip-hostname-check": "false",
        # start-up only: out of safe mode as soon as the blocks (none at first) are reported, no 30 s extension
        "dfs.namenode.safemode.extension": "0",
        "dfs.namenode.safemode.min.datanodes": "0",
    }
    if spec.handlers is not None:  # Hadoop's own 10 unless the scenario asks
        site["dfs.namenode.handler.count"] = str(spec.handlers)
    return {**site, **{str(k): str(v) for k, v in spec.properties.items()}}


def _java(main: str, args: list[str], spec: Hdfs, heap: str, jars: str, brief: bool = False) -> str:
    return shlex.join(hadoop.java(main, args, jars=jars, heap=heap, conf_dirs=("${service.dir}",), brief=brief))


def start_script(spec: Hdfs) -> str:
    """Format once, start the NameNode and the DataNodes in the background, each with its pid and log."""
    jars = hadoop.home(spec.jars)
    lines = ["#!/bin/sh", "# written by fsbench: a single-host HDFS from the jar cache", "set -e",
             'cd "${service.dir}"', hadoop.check_jars_sh(jars).rstrip(), "mkdir -p logs data",
             "if [ ! -d data/name/current ]; then",
             f"  {_java(NAMENODE, ['-format', '-force', '-nonInteractive'], spec, '256m', jars, brief=True)} "
             "> logs/namenode-format.log 2>&1 || { tail -20 logs/namenode-format.log >&2; exit 1; }",
             "fi",
             f"nohup {_java(NAMENODE, [], spec, spec.namenode_heap, jars)} > logs/namenode.log 2>&1 &",
             "echo $! > namenode.pid"]
    for i in range(1, spec.datanodes + 1):
        data = ["-D", f"dfs.datanode.data.dir=file://${{service.dir}}/data/datanode-{i}"]
        lines += [f"nohup {_java(DATANODE, data, spec, spec.datanode_heap, jars)} > logs/datanode-{i}.log 2>&1 &",
                  f"echo $! > datanode-{i}.pid"]
    return "\n".join(lines) + "\n"


def ready_script(spec: Hdfs) -> str:
    """Every JVM alive (else its log's end), the NameNode out of safe mode with every DataNode live."""
    return f"""#!/bin/sh
# written by fsbench: is the HDFS ready? (its JVMs alive, out of safe mode, {spec.datanodes} live DataNode(s))
cd "${{service.dir}}"
for pidfile in namenode.pid datanode-*.pid; do
  name=${{pidfile%.pid}}
  if ! kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null; then
    echo "the $name JVM exited; the end of its log (logs/$name.log):" >&2
    grep -v '^\\s*at ' "logs/$name.log" 2>/dev/null | tail -5 >&2
    exit 1
  fi
done
state=$(curl -sf '{_JMX}FSNamesystemState') || {{ echo "the NameNode's HTTP server does not answer yet" >&2; exit 1; }}
live=$(echo "$state" | sed -n 's/.*"NumLiveDataNodes" *: *\\([0-9]*\\).*/\\1/p')
[ "${{live:-0}}" -ge {spec.datanodes} ] || {{ echo "${{live:-0}} of {spec.datanodes} DataNode(s) live" >&2; exit 1; }}
curl -sf '{_JMX}NameNodeInfo' | grep -q '"Safemode" *: *""' || {{ echo "the NameNode is in safe mode" >&2; exit 1; }}
"""


STOP = """#!/bin/sh
# written by fsbench: stop the HDFS JVMs (TERM, then KILL after 15 s)
cd "${service.dir}" 2>/dev/null || exit 0
for pidfile in datanode-*.pid namenode.pid; do
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || { rm -f "$pidfile"; continue; }
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $i -lt 60 ]; do sleep 0.25; i=$((i + 1)); done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
done
"""


class HdfsKind:
    """A single-host HDFS fsbench starts, or an existing cluster (managed: false)."""

    name = "hdfs"
    section = SECTION
    exports: tuple[str, ...] = ("url",)

    def settings(self, checked: dict | None) -> Hdfs:
        return SECTION.build(checked) or SECTION.default()  # every key has a default: the section may be left out

    def plan(self, service: ServiceSpec[Hdfs]) -> ServicePlan:
        spec = service.settings or SECTION.default()
        if not service.managed:
            return self._existing(spec)
        url = "hdfs://${service.host}:${service.port}"
        core = {"fs.defaultFS": url, "hadoop.tmp.dir": "${service.dir}/data/tmp"}
        return ServicePlan(
            files={"core-site.xml": hadoop.site_xml(core, "written by fsbench"),
                   "hdfs-site.xml": hadoop.site_xml(hdfs_site(spec), "written by fsbench"),
                   "log4j.properties": hadoop.log4j_properties(
                       "WARN", ("org.apache.hadoop.hdfs.server.namenode.NameNode",
                                "org.apache.hadoop.hdfs.server.datanode.DataNode",
                                "org.apache.hadoop.hdfs.StateChange.safemode")),
                   "start-hdfs.sh": start_script(spec), "ready-hdfs.sh": ready_script(spec), "stop-hdfs.sh": STOP},
            start=["sh ${service.dir}/start-hdfs.sh"],
            ready="sh ${service.dir}/ready-hdfs.sh",
            stop=["sh ${service.dir}/stop-hdfs.sh"],
            exports={"url": url}, default_port="auto", ports=("http",),
            logs={"${service.dir}/logs": "logs"})

    def _existing(self, spec: Hdfs) -> ServicePlan:
        """A cluster that runs already: ready when `dfsadmin -safemode get` says OFF (from the jar cache).

        The section's `properties` go to the probe as -D options: an HA nameservice (hdfs://NS) is only
        a name until the client knows its NameNodes and failover provider."""
        url = spec.namenode or "hdfs://${service.host}:${service.port}"
        jars = hadoop.home(spec.jars)
        client = {str(k): str(v) for k, v in spec.properties.items()}
        probe = shlex.join(hadoop.java(DFSADMIN, ["-fs", url, "-safemode", "get"], jars=jars, heap="256m",
                                       properties=client, brief=True))
        return ServicePlan(ready=f"{hadoop.check_jars_sh(jars)}{probe} 2>&1 | grep -q 'Safe mode is OFF'",
                           exports={"url": url}, default_port=None if spec.namenode else "8020")


PLUGIN: ServiceKind[Hdfs] = HdfsKind()
