"""PostgreSQL as a service kind: a cluster initialised in the service's folder (run as the OS user
postgres, which must exist: Debian's postgresql package makes it), the scenario's databases created at
start, every login by password (scram-sha-256) with one user whose password is made up per run; or an
existing server (`postgres: {existing: {url: postgres://USER@HOST:PORT, secret: NAME}}`), only probed.

Targets use ${services.NAME.url} (`postgres://fsbench:PASSWORD@HOST:PORT`) with a database after it;
JuiceFS also wants to hear that the server has no TLS: `meta: ${services.pg.url}/juicefs?sslmode=disable`."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.api.sections import Section
from fsbench.api.services import ServiceKind, ServicePlan, ServiceSpec
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.services.engines import PASSWORD_LENGTH, Existing, existing_option

_DB_RULE = r"^[a-z_][a-z0-9_]{0,62}$"

#: the newest installed server's programs: initdb on the PATH, else Debian's versioned folders
BIN = ('bin=$(dirname "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null '
       '| sort -V | tail -n1)")')


@dataclass(frozen=True)
class Postgres:
    """What the scenario says of its PostgreSQL."""

    databases: tuple[str, ...] = option(s.list_of(s.matches(_DB_RULE, "a database name: a-z, 0-9 and _")),
                                        ("juicefs",), convert=tuple, doc="created at start, owned by `user`")
    user: str = option(s.matches(_DB_RULE, "a role name: a-z, 0-9 and _"), "fsbench",
                       doc="the superuser targets log in as (with the run's password)")
    os_user: str = option(s.matches(r"^[a-z_][a-z0-9_-]{0,31}$", "a user name"), "postgres",
                          doc="the OS user the server runs as (PostgreSQL refuses root)")
    existing: Existing | None = existing_option("postgres", "postgres://jfs@10.0.0.5:5432")


SECTION = Section(Postgres, "postgres settings")

START = """#!/bin/sh
# written by fsbench: a PostgreSQL cluster in the service's folder, password logins only, its databases
set -e
cd "${{service.dir}}"
{bin}
[ -x "$bin/initdb" ] || {{ echo "initdb is not on $(hostname) (install.sh installs postgresql)" >&2; exit 127; }}
chown {os_user} "${{service.dir}}"
umask 077
printf '%s\\n' "$FSBENCH_PASSWORD" > pwfile
chown {os_user} pwfile
runuser -u {os_user} -- "$bin/initdb" -D "${{service.dir}}/data" -U {user} --auth=scram-sha-256 \\
  --pwfile="${{service.dir}}/pwfile" > initdb.log 2>&1 || {{ rm -f pwfile; tail -20 initdb.log >&2; exit 1; }}
rm -f pwfile
# clients of other hosts too (a meta node's address), always with the password
echo "host all all 0.0.0.0/0 scram-sha-256" >> data/pg_hba.conf
# pg_stat_statements, where the server has it: its statement counts are the engine's own witness of what a
# client asked (fsbench.validity.engine_server); pg_stat_database's reach shared memory up to 10 s late
stmts=""
lib=$(dirname "$(dirname "$(readlink -f "$bin/initdb")")")/lib  # initdb may be a link on the PATH
[ -f "$lib/pg_stat_statements.so" ] && stmts="-c shared_preload_libraries=pg_stat_statements"
runuser -u {os_user} -- "$bin/pg_ctl" -D "${{service.dir}}/data" -l "${{service.dir}}/pg.log" -w -t 120 \\
  -o "-c listen_addresses=${{service.host}} -p ${{service.port}} -k ${{service.dir}} $stmts" start > /dev/null
for db in {databases}; do
  PGPASSWORD="$FSBENCH_PASSWORD" psql -X -q -h ${{service.host}} -p ${{service.port}} -U {user} -d postgres \\
    -c "CREATE DATABASE $db"
  [ -z "$stmts" ] || PGPASSWORD="$FSBENCH_PASSWORD" psql -X -q -h ${{service.host}} -p ${{service.port}} \\
    -U {user} -d "$db" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
done
"""

STOP = """{bin}; [ -f "${{service.dir}}/data/postmaster.pid" ] || exit 0; \
runuser -u {os_user} -- "$bin/pg_ctl" -D "${{service.dir}}/data" -m fast -w stop > /dev/null"""

#: the password in PGPASSWORD (psql reads it there), never in argv
PING = "{auth}psql -X -q -h {host} -p {port} -U {user} -d {db} -c 'select 1' > /dev/null"


class PostgresKind:
    """A PostgreSQL cluster fsbench starts, or an existing server it only probes."""

    name = "postgres"
    section = SECTION
    exports: tuple[str, ...] = ("url", "meta", "user", "password")

    def settings(self, checked: dict | None) -> Postgres:
        return SECTION.build(checked) or SECTION.default()  # every key has a default: the section may be left out

    def plan(self, service: ServiceSpec[Postgres]) -> ServicePlan:
        spec = service.settings or SECTION.default()
        if spec.existing:
            e, password = spec.existing.parts(), spec.existing.password()
            db = e["rest"].lstrip("/").split("?")[0] or "postgres"
            auth = f"PGPASSWORD={password} " if password else ""
            return ServicePlan(managed=False, ready=PING.format(auth=auth, host=e["host"],
                                                 port=e["port"], user=e["user"] or "postgres", db=db),
                               exports={"url": spec.existing.with_password(), "user": e["user"], "password": password,
                                        "meta": spec.existing.with_password() + "/juicefs?sslmode=disable"})
        url = f"postgres://{spec.user}:${{service.password}}@${{service.host}}:${{service.port}}"
        start = START.format(bin=BIN, os_user=spec.os_user, user=spec.user, databases=" ".join(spec.databases))
        return ServicePlan(
            files={"start-postgres.sh": start},
            start=["FSBENCH_PASSWORD=${service.password} sh ${service.dir}/start-postgres.sh"],
            ready=PING.format(auth="PGPASSWORD=${service.password} ", host="${service.host}", port="${service.port}",
                              user=spec.user, db=spec.databases[0] if spec.databases else "postgres"),
            stop=[STOP.format(bin=BIN, os_user=spec.os_user)],
            exports={"url": url, "meta": f"{url}/{spec.databases[0] if spec.databases else 'postgres'}?sslmode=disable",
                     "user": spec.user, "password": "${service.password}"},
            generated={"password": PASSWORD_LENGTH}, default_port="auto", logs={"${service.dir}/pg.log": "pg.log"},
            processes=("postgres",))


PLUGIN: ServiceKind[Postgres] = PostgresKind()
