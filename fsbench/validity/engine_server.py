"""The metadata engine's own count of the requests it served: the second witness beside the client's count.

JuiceFS's `.stats` says what the client asked its engine (fsbench.validity.juicefs); the engine counts what it
served, on its own. fsbench reads both just before and just after each tool, with the object counters:

- Redis: `redis-cli -h H -p P INFO commandstats`, the calls of every command but INFO, AUTH and HELLO
  (fsbench's own reads);
- MySQL, MariaDB: `mysql ... -e "SHOW GLOBAL STATUS LIKE 'Questions'"`, the statements clients sent;
- PostgreSQL: `psql ... -c "select sum(calls) from pg_stat_statements"`, the statements executed
  (pg_stat_statements, which fsbench's own servers load: pg_stat_database's counts reach shared memory up to
  10 s late, after the window);
- etcd: `curl http://H:P/metrics`, `grpc_server_handled_total` of the unary calls (Range, Txn, Put...).

Passwords travel in the environment (REDISCLI_AUTH, MYSQL_PWD, PGPASSWORD), never in argv. Each count is a
Snapshot of one operation, `engine_served` (requests, no bytes): a backend row of its own per window, and the
check "the engine did not see the client's requests" (fsbench.validity.engine) compares it with the client's.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from fsbench.core.secret_urls import split_url_password
from fsbench.validity.counters import OpCount, Snapshot

#: the operation of an engine's own count in its Snapshot and in the backend rows
ENGINE_SERVED = "engine_served"
_REDIS = re.compile(r"^cmdstat_([a-z_|-]+):calls=(\d+)", re.MULTILINE)
#: fsbench's own reads of the counters (and the connection's hand-shake), not the client's requests
_REDIS_OWN = {"info", "auth", "hello"}
_ETCD = re.compile(r'^grpc_server_handled_total\{([^}]*)\}\s+(\S+)$', re.MULTILINE)
_NUMBER = re.compile(r"^\s*(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class EngineCounter:
    """How to read one engine's count: the command, its environment (the password), its parser, what it is."""

    engine: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    what: str = ""

    def parse(self, text: str) -> Snapshot | None:
        """The engine's count in the command's output, None when there is none."""
        return PARSERS[self.engine](text)


#: said after what an engine counter reads: the server counts every client's requests, not only this case's
#: (another JuiceFS client of the same server, fsbench's own probe of a mounted target), so its count can only
#: be larger than the case's: a witness that the requests arrived, not an exact count of them
ALL_CLIENTS = ", every client of the server"


def counter_for(meta_url: str) -> EngineCounter | None:
    """The engine counter of a JuiceFS metadata URL (its password out of argv), None for an engine without one
    fsbench reads (SQLite, TiKV, Badger...) or a URL it cannot read."""
    url, password = split_url_password(meta_url)
    scheme = url.split("://", 1)[0].lower()
    if scheme in ("redis", "rediss"):
        u = urlsplit(url)
        if not u.hostname:
            return None
        return EngineCounter("redis", ["redis-cli", "-h", u.hostname, "-p", str(u.port or 6379), "--no-auth-warning",
                                       "INFO", "commandstats"], {"REDISCLI_AUTH": password} if password else {},
                             f"Redis {u.hostname}:{u.port or 6379} INFO commandstats" + ALL_CLIENTS)
    if scheme == "mysql":
        m = re.match(r"mysql://(?:([^@]*)@)?\(([^:)]+)(?::(\d+))?\)/", url)
        if not m:
            return None
        user, host, port = unquote(m.group(1) or "root"), m.group(2), m.group(3) or "3306"
        return EngineCounter("mysql", ["mysql", "--no-defaults", "--protocol=tcp", "-h", host, "-P", port, "-u", user,
                                       "-N", "-B", "-e", "SHOW GLOBAL STATUS LIKE 'Questions'"],
                             {"MYSQL_PWD": password} if password else {},
                             f"MySQL {host}:{port} Questions" + ALL_CLIENTS)
    if scheme in ("postgres", "postgresql"):
        u = urlsplit(url)
        if not u.hostname:
            return None
        db = u.path.lstrip("/") or "postgres"
        return EngineCounter("postgres", ["psql", "-X", "-A", "-t", "-q", "-h", u.hostname, "-p", str(u.port or 5432),
                                          "-U", unquote(u.username or "postgres"), "-d", db, "-c",
                                          "select coalesce(sum(calls), 0) from pg_stat_statements"],
                             {"PGPASSWORD": password} if password else {},
                             f"PostgreSQL {u.hostname}:{u.port or 5432} pg_stat_statements" + ALL_CLIENTS)
    if scheme == "etcd":
        u = urlsplit(url)
        host = (u.netloc.rsplit("@", 1)[-1].split(",", 1)[0])
        if not host:
            return None
        return EngineCounter("etcd", ["curl", "-s", "--max-time", "5", f"http://{host}/metrics"], {},
                             f"etcd {host} /metrics grpc_server_handled_total" + ALL_CLIENTS)
    return None


def _snapshot(n: int) -> Snapshot:
    return Snapshot(time.time(), {ENGINE_SERVED: OpCount(n)})


def parse_redis(text: str) -> Snapshot | None:
    """INFO commandstats: every command's calls but fsbench's own reads."""
    found = _REDIS.findall(text)
    if not found:
        return None
    return _snapshot(sum(int(n) for name, n in found if name not in _REDIS_OWN))


def parse_number(text: str) -> Snapshot | None:
    """A single count: psql's sum, or mysql's `Questions<TAB>N`."""
    m = re.search(r"^Questions\s+(\d+)\s*$", text, re.MULTILINE) or _NUMBER.search(text)
    return _snapshot(int(m.group(1))) if m else None


def parse_etcd(text: str) -> Snapshot | None:
    """etcd's /metrics: the unary gRPC calls it handled (every KV, lease and auth request)."""
    total, seen = 0, False
    for labels, value in _ETCD.findall(text):
        if 'grpc_type="unary"' not in labels:
            continue
        seen = True
        try:
            total += int(float(value))
        except ValueError:
            continue
    return _snapshot(total) if seen else None


PARSERS = {"redis": parse_redis, "mysql": parse_number, "postgres": parse_number, "etcd": parse_etcd}
