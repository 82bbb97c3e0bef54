"""An S3 server on a host of the scenario: fsbench-s3 (a Go server fsbench builds at install time on the
gofakes3 library) or, where it is missing, moto's server. The buckets are created at start, the keys
are generated per run and masked like every secret; targets reach it through
${services.NAME.endpoint|bucket|region|access_key|secret_key}.

Both are lab servers: multipart uploads are held in RAM until they complete (fsbench-s3's bolt store,
on disk, also caps an object at 2 GiB), so objects of many GiB need a real store.

Neither server checks signatures: clients may sign with any key. The generated keys still matter: a
client is configured exactly as it would be against a real store, and the keys are a realistic test
of fsbench's masking (they never reach argv, the run directory or the report)."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.api.sections import Section
from fsbench.api.services import ServiceKind, ServicePlan, ServiceSpec
from fsbench.config import schema as s
from fsbench.config.schema import option

BUCKET_RULE = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"


@dataclass(frozen=True)
class S3Server:
    """What the scenario says of its S3 server."""

    buckets: tuple[str, ...] = option(s.list_of(s.matches(BUCKET_RULE, "an S3 bucket name: 3-63 of a-z, 0-9, "
                                                                        "'.', '-'")), ("fsbench",), convert=tuple,
                                      doc="buckets created at start; the first is ${services.NAME.bucket}")
    server: str = option(s.one_of("auto", "fsbench-s3", "moto"), "auto",
                         doc="auto: fsbench-s3 where installed (install.sh builds it), else moto_server")
    backend: str = option(s.one_of("mem", "bolt"), "mem",
                          doc="fsbench-s3's store: mem (RAM, fastest) or bolt (one file in the service's folder, "
                              "objects up to 2 GiB); either way a multipart upload is held in RAM until complete")
    region: str = option(s.line_text, "us-east-1")


SECTION = Section(S3Server, "s3 server settings")

START = """#!/bin/sh
# written by fsbench: start the S3 server in the background, record its pid and which server it is
set -e
cd {dir}
server={server}
if [ "$server" = auto ]; then
  if command -v fsbench-s3 >/dev/null 2>&1; then server=fsbench-s3
  elif command -v moto_server >/dev/null 2>&1; then server=moto
  else echo "neither fsbench-s3 nor moto_server is on $(hostname) (install.sh builds fsbench-s3)" >&2; exit 127
  fi
fi
echo "$server" > server
if [ "$server" = fsbench-s3 ]; then
  nohup fsbench-s3 -addr {host}:{port} -backend {backend} -db {dir}/s3.db {bucket_flags} > s3.log 2>&1 &
  echo $! > s3.pid
else
  nohup moto_server -H {host} -p {port} > s3.log 2>&1 &
  echo $! > s3.pid
  i=0
  until curl -s -o /dev/null http://{host}:{port}/; do
    i=$((i + 1)); [ $i -lt 300 ] || {{ echo "moto_server did not answer on {host}:{port}" >&2; exit 1; }}
    kill -0 "$(cat s3.pid)" 2>/dev/null || {{ cat s3.log >&2; exit 1; }}
    sleep 0.2
  done
  for b in {buckets}; do curl -sf -o /dev/null -X PUT "http://{host}:{port}/$b"; done
fi
"""

#: the server's process name per `server:` (auto: whichever is installed, so either)
SERVERS = {"auto": ("fsbench-s3", "moto_server"), "fsbench-s3": ("fsbench-s3",), "moto": ("moto_server",)}


class S3ServerKind:
    """An S3 endpoint with the scenario's buckets, for FUSE clients, S3A and JuiceFS on S3."""

    name = "s3"
    section = SECTION
    exports: tuple[str, ...] = ("endpoint", "bucket", "region", "access_key", "secret_key")

    def settings(self, checked: dict | None) -> S3Server:
        return SECTION.build(checked) or SECTION.default()  # every key has a default: the section may be left out

    def plan(self, service: ServiceSpec[S3Server]) -> ServicePlan:
        spec = service.settings or SECTION.default()
        start = START.format(dir="${service.dir}", host="${service.host}", port="${service.port}",
                             server=spec.server, backend=spec.backend,
                             bucket_flags=" ".join(f"-bucket {b}" for b in spec.buckets),
                             buckets=" ".join(spec.buckets))
        url = "http://${service.host}:${service.port}"
        return ServicePlan(
            files={"start-s3.sh": start},
            start=["sh ${service.dir}/start-s3.sh"],
            # the first bucket answers 200 once the server listens and the buckets exist
            ready=f"curl -s -o /dev/null -w '%{{http_code}}' {url}/{spec.buckets[0]} | grep -qx 200",
            stop=["kill $(cat ${service.dir}/s3.pid) 2>/dev/null || true"],
            exports={"endpoint": url, "bucket": spec.buckets[0], "region": spec.region,
                     "access_key": "${service.access_key}", "secret_key": "${service.secret_key}"},
            generated={"access_key": 20, "secret_key": 40}, default_port="auto",
            processes=SERVERS[spec.server])


PLUGIN: ServiceKind[S3Server] = S3ServerKind()
