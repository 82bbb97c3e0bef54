"""MySQL-protocol servers as a service kind: MariaDB (mariadbd) or MySQL (mysqld), whichever is installed,
with its data in the service's folder, the scenario's databases created at start and one user with a
password made up per run; or an existing server (`mysql: {existing: {url: mysql://USER@(HOST:PORT),
secret: NAME}}`), only probed.

The server's root account logs in only through the unix socket in the service's folder as the OS user
root (MariaDB's default); targets use the user over TCP: ${services.NAME.url} is
`mysql://fsbench:PASSWORD@(HOST:PORT)`, JuiceFS's form, with a database after it:
`meta: ${services.mariadb.url}/juicefs`."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.api.sections import Section
from fsbench.api.services import ServiceKind, ServicePlan, ServiceSpec
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.services.engines import PASSWORD_LENGTH, Existing, existing_option, stop_own

_DB_RULE = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"


@dataclass(frozen=True)
class Mysql:
    """What the scenario says of its MySQL or MariaDB."""

    databases: tuple[str, ...] = option(s.list_of(s.matches(_DB_RULE, "a database name: letters, digits and _")),
                                        ("juicefs",), convert=tuple, doc="created at start, owned by `user`")
    user: str = option(s.matches(_DB_RULE, "a user name: letters, digits and _"), "fsbench",
                       doc="the account targets use (over TCP, with the run's password)")
    server: str = option(s.one_of("auto", "mariadb", "mysql"), "auto",
                         doc="auto: mariadbd where installed, else mysqld")
    existing: Existing | None = existing_option("mysql", "mysql://jfs@(10.0.0.5:3306)")


SECTION = Section(Mysql, "mysql settings")

START = """#!/bin/sh
# written by fsbench: a MySQL-protocol server in the service's folder, its databases and user
set -e
cd "${{service.dir}}"
server={server}
if [ "$server" = auto ]; then
  if command -v mariadbd >/dev/null 2>&1; then server=mariadb
  elif command -v mysqld >/dev/null 2>&1; then server=mysql
  else echo "neither mariadbd nor mysqld is on $(hostname) (install.sh installs mariadb-server)" >&2; exit 127
  fi
fi
echo "$server" > server
if [ "$server" = mariadb ]; then
  mariadb-install-db --no-defaults --datadir="${{service.dir}}/data" --user=root --skip-test-db > install.log 2>&1 \\
    || {{ tail -20 install.log >&2; exit 1; }}
  daemon=mariadbd client=mariadb
else
  mysqld --no-defaults --initialize-insecure --datadir="${{service.dir}}/data" --user=root > install.log 2>&1 \\
    || {{ tail -20 install.log >&2; exit 1; }}
  daemon=mysqld client=mysql
fi
echo "$client" > client
nohup "$daemon" --no-defaults --datadir="${{service.dir}}/data" --user=root --bind-address=${{service.host}} \\
  --port=${{service.port}} --socket="${{service.dir}}/sock" --pid-file="${{service.dir}}/pid" \\
  --log-error="${{service.dir}}/err.log" > /dev/null 2>&1 &
i=0
until "$client" --no-defaults -uroot --socket="${{service.dir}}/sock" -e 'select 1' > /dev/null 2>&1; do
  i=$((i + 1)); [ $i -lt 600 ] || {{ tail -20 err.log >&2; exit 1; }}
  sleep 0.2
done
# the password comes from the environment and goes to the client's stdin, never into argv
{{
  printf "CREATE USER '{user}'@'%%' IDENTIFIED BY '%s';\\n" "$FSBENCH_PASSWORD"
  for db in {databases}; do printf "CREATE DATABASE %s; GRANT ALL ON %s.* TO '{user}'@'%%';\\n" "$db" "$db"; done
}} | "$client" --no-defaults -uroot --socket="${{service.dir}}/sock"
"""

#: the daemon's process name per `server:` (auto: whichever is installed, so either)
SERVERS = {"auto": ("mariadbd", "mysqld"), "mariadb": ("mariadbd",), "mysql": ("mysqld",)}

#: the user logs in over TCP, its password in MYSQL_PWD (the clients read it there), never in argv
PING = ("{auth}\"$(command -v mariadb || command -v mysql)\" --no-defaults --protocol=tcp -h {host} -P {port} "
        "-u {user} -e 'select 1' > /dev/null")


class MysqlKind:
    """A MariaDB or MySQL server fsbench starts, or an existing one it only probes."""

    name = "mysql"
    section = SECTION
    exports: tuple[str, ...] = ("url", "meta", "user", "password")

    def settings(self, checked: dict | None) -> Mysql:
        return SECTION.build(checked) or SECTION.default()  # every key has a default: the section may be left out

    def plan(self, service: ServiceSpec[Mysql]) -> ServicePlan:
        spec = service.settings or SECTION.default()
        if spec.existing:
            e, password = spec.existing.parts(), spec.existing.password()
            auth = f"MYSQL_PWD={password} " if password else ""
            url = spec.existing.with_password()
            return ServicePlan(managed=False, ready=PING.format(auth=auth, host=e["host"],
                                                 port=e["port"], user=e["user"] or "root"),
                               exports={"url": url, "meta": url + "/juicefs",
                                        "user": e["user"], "password": password})
        start = START.format(server=spec.server, user=spec.user, databases=" ".join(spec.databases))
        url = f"mysql://{spec.user}:${{service.password}}@(${{service.host}}:${{service.port}})"
        return ServicePlan(
            files={"start-mysql.sh": start},
            start=["FSBENCH_PASSWORD=${service.password} sh ${service.dir}/start-mysql.sh"],
            ready=PING.format(auth="MYSQL_PWD=${service.password} ", host="${service.host}", port="${service.port}",
                              user=spec.user),
            stop=[stop_own("pid", wait_s=60)],
            exports={"url": url, "meta": f"{url}/{spec.databases[0]}" if spec.databases else url,
                     "user": spec.user, "password": "${service.password}"},
            generated={"password": PASSWORD_LENGTH}, default_port="auto", logs={"${service.dir}/err.log": "err.log"},
            processes=SERVERS[spec.server])


PLUGIN: ServiceKind[Mysql] = MysqlKind()
