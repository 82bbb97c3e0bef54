"""etcd as a service kind: one etcd member with its data in the service's folder that serves clients over
TLS and only those with a client certificate signed by a certificate authority made up per run (the keys
0600 in ${service.dir}/tls, never in the run directory); or an existing server (`etcd: {existing: {url:
etcd://HOST:PORT}}`), only probed. (TiKV, the seed's transactional engine, has no build in the package
registries this machine reaches: etcd stands in for it.)

Why certificates and not a password: JuiceFS (1.4) does not read META_PASSWORD for etcd, so a password
would have to stand in the meta URL, in the argv of every juicefs command. Targets use
`meta: ${services.etcd.url}/PREFIX${services.etcd.tls}` (the certificates as URL parameters, JuiceFS's
form) or `${services.etcd.meta}` (prefix jfs). The peer port is ${service.port_peer}. The certificates
are files on the service's host: JuiceFS clients on other hosts need `etcd: {auth: none}` (no
authentication; the server listens on the service's address only).
"""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.api.sections import Section
from fsbench.api.services import ServiceKind, ServicePlan, ServiceSpec
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.services.engines import Existing, existing_option, stop_own


@dataclass(frozen=True)
class Etcd:
    """What the scenario says of its etcd."""

    auth: str = option(s.one_of("tls", "none"), "tls",
                       doc="tls: clients need the run's client certificate, which lives on the service's host only; "
                           "none: no authentication (for JuiceFS clients on other hosts, which cannot read it)")
    existing: Existing | None = existing_option("etcd", "etcd://10.0.0.5:2379")


SECTION = Section(Etcd, "etcd settings")

START = """#!/bin/sh
# written by fsbench: a certificate authority, server and client certificates for this run, then one etcd
# member that serves only clients holding the client certificate
set -e
cd "${service.dir}"
command -v etcd >/dev/null 2>&1 || {
  echo "etcd is not on $(hostname) (install.sh installs etcd-server)" >&2; exit 127; }
if [ "$FSBENCH_AUTH" = none ]; then
  nohup etcd --name fsbench --data-dir "${service.dir}/data" \\
    --listen-client-urls http://${service.host}:${service.port} \\
    --advertise-client-urls http://${service.host}:${service.port} \\
    --listen-peer-urls http://${service.host}:${service.port_peer} \\
    --initial-advertise-peer-urls http://${service.host}:${service.port_peer} \\
    --initial-cluster fsbench=http://${service.host}:${service.port_peer} > etcd.log 2>&1 &
  echo $! > etcd.pid
  exit 0
fi
umask 077
mkdir -p tls
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tls/ca.key -out tls/ca.crt \\
  -days 7 -subj "/CN=fsbench ${run.id} etcd CA" 2>> tls.log
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tls/server.key -out tls/server.csr \\
  -subj /CN=fsbench-etcd 2>> tls.log
case "${service.host}" in *[!0-9.]*) san=DNS ;; *) san=IP ;; esac
printf 'subjectAltName=%s:%s\\n' "$san" "${service.host}" > tls/server.ext
openssl x509 -req -in tls/server.csr -CA tls/ca.crt -CAkey tls/ca.key -CAcreateserial -out tls/server.crt \\
  -days 7 -extfile tls/server.ext 2>> tls.log
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tls/client.key -out tls/client.csr \\
  -subj /CN=root 2>> tls.log
openssl x509 -req -in tls/client.csr -CA tls/ca.crt -CAkey tls/ca.key -CAcreateserial -out tls/client.crt \\
  -days 7 2>> tls.log
nohup etcd --name fsbench --data-dir "${service.dir}/data" \\
  --listen-client-urls https://${service.host}:${service.port} \\
  --advertise-client-urls https://${service.host}:${service.port} \\
  --client-cert-auth --trusted-ca-file tls/ca.crt --cert-file tls/server.crt --key-file tls/server.key \\
  --listen-peer-urls http://${service.host}:${service.port_peer} \\
  --initial-advertise-peer-urls http://${service.host}:${service.port_peer} \\
  --initial-cluster fsbench=http://${service.host}:${service.port_peer} > etcd.log 2>&1 &
echo $! > etcd.pid
"""

#: TLS with the run's client certificate
TLS = ("--cacert ${service.dir}/tls/ca.crt --cert ${service.dir}/tls/client.crt "
       "--key ${service.dir}/tls/client.key")
PING = "ETCDCTL_API=3 {auth}etcdctl --endpoints={scheme}://{host}:{port} {tls} endpoint health > /dev/null"
#: the certificates as JuiceFS's etcd client takes them
QUERY = "?cacert=${service.dir}/tls/ca.crt&cert=${service.dir}/tls/client.crt&key=${service.dir}/tls/client.key"


class EtcdKind:
    """An etcd member fsbench starts, or an existing one it only probes."""

    name = "etcd"
    section = SECTION
    exports: tuple[str, ...] = ("url", "tls", "meta", "password")

    def settings(self, checked: dict | None) -> Etcd:
        return SECTION.build(checked) or SECTION.default()  # every key has a default: the section may be left out

    def plan(self, service: ServiceSpec[Etcd]) -> ServicePlan:
        spec = service.settings or SECTION.default()
        if spec.existing:
            e, password = spec.existing.parts(), spec.existing.password()
            auth = f"ETCDCTL_USER={e['user'] or 'root'}:{password} " if password else ""
            url = spec.existing.with_password()
            return ServicePlan(managed=False, ready=PING.format(auth=auth, scheme="http", host=e["host"],
                                                                port=e["port"], tls=""),
                               exports={"url": url, "tls": "", "password": password,
                                        "meta": url + "/jfs"})
        tls = spec.auth == "tls"
        return ServicePlan(
            files={"start-etcd.sh": START},
            start=[f"FSBENCH_AUTH={spec.auth} sh ${{service.dir}}/start-etcd.sh"],
            ready=PING.format(auth="", scheme="https" if tls else "http", host="${service.host}",
                              port="${service.port}", tls=TLS if tls else ""),
            stop=[stop_own("etcd.pid")],
            exports={"url": "etcd://${service.host}:${service.port}", "tls": QUERY if tls else "", "password": "",
                     "meta": "etcd://${service.host}:${service.port}/jfs" + (QUERY if tls else "")},
            default_port="auto", ports=("peer",),
            logs={"${service.dir}/etcd.log": "etcd.log"}, processes=("etcd",),
            clients_local_only=("its TLS client certificates are made per run as files on the etcd host, which "
                                "JuiceFS clients on other hosts cannot read; `etcd: {auth: none}` serves them "
                                "without authentication") if tls else "")


PLUGIN: ServiceKind[Etcd] = EtcdKind()
