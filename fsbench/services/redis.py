"""Redis as a service kind: a redis-server with its data and logs in the service's folder, a password
made up per run, AOF on by default (`redis: {appendfsync: always}` as the seed's baseline), or an
existing server (`redis: {existing: {url: redis://HOST:PORT, secret: NAME}}`), only probed.

Targets use ${services.NAME.url} (`redis://:PASSWORD@HOST:PORT`) with a database number after it:
`meta: ${services.redis.url}/1`. A target's setup may still change a setting at run time:
`REDISCLI_AUTH=${services.redis.password} redis-cli -h ${services.redis.host} -p ${services.redis.port}
config set appendfsync everysec` (the password travels in the environment, never in argv)."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.api.sections import Section
from fsbench.api.services import ServiceKind, ServicePlan, ServiceSpec
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.services.engines import PASSWORD_LENGTH, Existing, existing_option, stop_own

_DIRECTIVE = r"^[a-z][a-z0-9-]*$"


@dataclass(frozen=True)
class Redis:
    """What the scenario says of its Redis."""

    appendonly: bool = option(s.boolean, True, doc="the append-only file (AOF), as JuiceFS recommends")
    appendfsync: str = option(s.one_of("always", "everysec", "no"), "everysec",
                              doc="when the AOF is fsynced: always (each write), everysec (Redis's default), no")
    config: dict = option(s.mapping_of(s.scalar, name_rule=False, what="directive"), factory=dict, convert=dict,
                          doc="more redis.conf directives, e.g. {maxmemory: 2gb}")
    existing: Existing | None = existing_option("redis", "redis://10.0.0.5:6379")


SECTION = Section(Redis, "redis settings")

CONF = """# written by fsbench
bind ${service.host}
port ${service.port}
daemonize yes
pidfile ${service.dir}/redis.pid
logfile ${service.dir}/redis.log
dir ${service.dir}
save ""
include ${service.dir}/auth.conf
"""

START = """#!/bin/sh
# written by fsbench: start redis-server with the run's password (from the environment, into a 0600 file)
set -e
cd "${service.dir}"
umask 077
printf 'requirepass %s\\n' "$FSBENCH_PASSWORD" > auth.conf
exec redis-server "${service.dir}/redis.conf"
"""

#: ping with the password in the environment (redis-cli reads REDISCLI_AUTH), never in argv
PING = "{auth}redis-cli --no-auth-warning -h {host} -p {port} ping | grep -q PONG"


def _auth(password: str) -> str:
    """redis-cli's password from the environment, or nothing for a server without one."""
    return f"REDISCLI_AUTH={password} " if password else ""


class RedisKind:
    """A redis-server fsbench starts, or an existing one it only probes."""

    name = "redis"
    section = SECTION
    exports: tuple[str, ...] = ("url", "meta", "password")

    def settings(self, checked: dict | None) -> Redis:
        return SECTION.build(checked) or SECTION.default()  # every key has a default: the section may be left out

    def plan(self, service: ServiceSpec[Redis]) -> ServicePlan:
        spec = service.settings or SECTION.default()
        if spec.existing:
            e = spec.existing.parts()
            url = spec.existing.with_password()
            return ServicePlan(managed=False, ready=PING.format(auth=_auth(spec.existing.password()), host=e["host"],
                                                 port=e["port"]),
                               exports={"url": url, "meta": url + "/1",
                                        "password": spec.existing.password()})
        more = {"appendonly": "yes" if spec.appendonly else "no", "appendfsync": spec.appendfsync,
                **{str(k): str(v) for k, v in spec.config.items()}}
        conf = CONF + "".join(f"{k} {v}\n" for k, v in more.items())
        return ServicePlan(
            files={"redis.conf": conf, "start-redis.sh": START},
            start=["FSBENCH_PASSWORD=${service.password} sh ${service.dir}/start-redis.sh"],
            ready=PING.format(auth=_auth("${service.password}"), host="${service.host}", port="${service.port}"),
            stop=[stop_own("redis.pid")],
            exports={"url": "redis://:${service.password}@${service.host}:${service.port}",
                     "meta": "redis://:${service.password}@${service.host}:${service.port}/1",
                     "password": "${service.password}"},
            generated={"password": PASSWORD_LENGTH}, default_port="auto",
            logs={"${service.dir}/redis.log": "redis.log"}, processes=("redis-server",))


PLUGIN: ServiceKind[Redis] = RedisKind()
