"""The metadata engine's own count of what it served, the second witness beside the client's: the commands
that read it (passwords out of argv), their parsers, and the check that compares it with the client's count."""

from __future__ import annotations

from fsbench.tools.juicefs_bench.store_check import CLIENT_COUNTS_AGREE
from fsbench.validity import engine_server
from fsbench.validity.engine import ENGINE_SAW_CLIENT
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence


def test_each_engines_url_gives_a_command_with_the_password_in_the_environment_only() -> None:
    redis = engine_server.counter_for("redis://:s3cret@127.0.0.1:6390/1")
    assert redis is not None and redis.argv[:5] == ["redis-cli", "-h", "127.0.0.1", "-p", "6390"]
    assert redis.env == {"REDISCLI_AUTH": "s3cret"}
    mysql = engine_server.counter_for("mysql://jfs:p@ss@(127.0.0.1:3307)/juicefs")
    assert mysql is not None and mysql.env == {"MYSQL_PWD": "p@ss"} and "-P" in mysql.argv and "3307" in mysql.argv
    pg = engine_server.counter_for("postgres://fsbench:pw@127.0.0.1:5433/juicefs?sslmode=disable")
    assert pg is not None and pg.env == {"PGPASSWORD": "pw"} and pg.argv[pg.argv.index("-d") + 1] == "juicefs"
    etcd = engine_server.counter_for("etcd://127.0.0.1:2379/jfs")
    assert etcd is not None and etcd.argv[-1] == "http://127.0.0.1:2379/metrics"
    for c in (redis, mysql, pg, etcd):
        assert not any(secret in " ".join(c.argv) for secret in ("s3cret", "p@ss", "pw@"))
    assert engine_server.counter_for("sqlite3:///tmp/meta.db") is None  # a file the client writes: no server
    assert engine_server.counter_for("tikv://127.0.0.1:2379/jfs") is None


def test_the_parsers_read_each_engines_own_count() -> None:
    redis = engine_server.parse_redis("# Commandstats\r\ncmdstat_get:calls=10,usec=5\r\n"
                                      "cmdstat_info:calls=7,usec=1\r\ncmdstat_evalsha:calls=3,usec=9\r\n")
    assert redis is not None and redis.ops[engine_server.ENGINE_SERVED].requests == 13  # INFO is fsbench's own
    mysql = engine_server.parse_number("Questions\t4242\n")
    assert mysql is not None and mysql.ops[engine_server.ENGINE_SERVED].requests == 4242
    pg = engine_server.parse_number("28535\n")
    assert pg is not None and pg.ops[engine_server.ENGINE_SERVED].requests == 28535
    etcd = engine_server.parse_etcd(
        '# TYPE grpc_server_handled_total counter\n'
        'grpc_server_handled_total{grpc_code="OK",grpc_method="Range",grpc_service="etcdserverpb.KV",'
        'grpc_type="unary"} 120\n'
        'grpc_server_handled_total{grpc_code="OK",grpc_method="Txn",grpc_service="etcdserverpb.KV",'
        'grpc_type="unary"} 30\n'
        'grpc_server_handled_total{grpc_code="OK",grpc_method="Watch",grpc_service="etcdserverpb.Watch",'
        'grpc_type="bidi_stream"} 2\n')
    assert etcd is not None and etcd.ops[engine_server.ENGINE_SERVED].requests == 150
    for parse in (engine_server.parse_redis, engine_server.parse_number, engine_server.parse_etcd):
        assert parse("ERROR: relation \"pg_stat_statements\" does not exist\n") is None


def _seen(served: int | None, asked: int) -> Evidence:
    return Evidence(("jfs",), 0, 0, 0, 0, 1.0, None, 1.0, True, engine_served=served, engine_asked=asked,
                    engine_what="Redis 127.0.0.1:6390 INFO commandstats")


CALLS = [{"tool": "metabench", "operation": op, "metric": "engine_requests_per_call", "value": 1.0}
         for op in ("lookup", "getattr")] + [{"tool": "metabench", "operation": "lookup", "metric": "latency_mean"}]


def test_the_engines_count_vouches_for_the_clients_and_flags_a_client_that_counts_more_than_it_served() -> None:
    held = ENGINE_SAW_CLIENT.judge("metabench", CALLS, _seen(36417, 6626), Thresholds())
    assert [(v.operation, v.ok) for v in held] == [("getattr", True), ("lookup", True)]
    assert "the engine itself counted 36417 requests while the client asked 6626 (5.50 per request" in held[0].detail
    short = ENGINE_SAW_CLIENT.judge("metabench", CALLS, _seen(100, 6626), Thresholds())
    assert {v.ok for v in short} == {False} and "not the engine's" in short[0].detail
    assert ENGINE_SAW_CLIENT.judge("metabench", CALLS, _seen(None, 6626), Thresholds()) == []  # SQLite: no server
    assert ENGINE_SAW_CLIENT.judge("fio", CALLS, _seen(5, 6626), Thresholds()) == []  # not a metadata tool


def test_juicefs_benchs_metadata_transactions_are_judged_by_the_engines_own_count() -> None:
    rows = [{"tool": "juicefs-bench", "operation": "update_meta", "metric": "ops", "value": 400.0}]
    seen = _seen(2200, 500)
    verdict = next(v for v in CLIENT_COUNTS_AGREE.judge("juicefs-bench", rows, seen, Thresholds())
                   if v.operation == "update_meta")
    assert verdict.ok is True and "the metadata engine itself counted 2200 requests" in verdict.detail
    alone = next(v for v in CLIENT_COUNTS_AGREE.judge("juicefs-bench", rows, _seen(None, 0), Thresholds())
                 if v.operation == "update_meta")
    assert alone.ok is None and "not SQLite's" in alone.detail


def test_nnbench_through_the_hadoop_sdk_is_judged_by_the_engines_own_count() -> None:
    from fsbench.validity.namenode import REACHED_ENGINE

    rows = [{"tool": "nnbench", "operation": "create_write", "metric": "ops", "value": 200.0},
            {"tool": "nnbench", "operation": "create", "metric": "latency_mean", "value": 0.01}]
    held = REACHED_ENGINE.judge("nnbench", rows, _seen(1500, 0), Thresholds())
    assert [(v.operation, v.ok) for v in held] == [("create_write", True), ("create", True)]
    assert "the metadata engine itself counted 1500 requests while nnbench ran 200 operations" in held[0].detail
    short = REACHED_ENGINE.judge("nnbench", rows, _seen(20, 0), Thresholds())
    assert {v.ok for v in short} == {False} and "some never reached it" in short[0].detail
    assert REACHED_ENGINE.judge("nnbench", rows, _seen(None, 0), Thresholds()) == []


def test_the_hadoop_sdk_kind_reads_its_engines_count() -> None:
    from types import SimpleNamespace

    from fsbench.kinds.jfs import PLUGIN as JFS
    from fsbench.kinds.jfs import JfsTarget

    target = SimpleNamespace(name="juicefs", path="/fsbench", settings=JfsTarget(meta="${services.r.url}/1"))
    (engine,) = JFS.counters(target, {"services.r.url": "redis://:pw@10.0.0.5:6390"})
    assert engine.role == "engine" and engine.env == {"REDISCLI_AUTH": "pw"} and "10.0.0.5" in engine.argv
    sqlite = SimpleNamespace(name="j", path="/f", settings=JfsTarget(meta="sqlite3:///tmp/m.db"))
    assert JFS.counters(sqlite, {}) == []


def test_metabenchs_concurrency_mode_is_judged_by_the_clients_count_over_the_case() -> None:
    from fsbench.validity.engine import OPS_REACHED_ENGINE

    rows = [{"tool": "metabench", "operation": op, "metric": "ops", "value": 40.0, "host": "local"}
            for op in ("create_write", "open_read", "rename", "delete")]
    seen = Evidence(("s3",), 0, 0, 0, 0, 1.0, None, 1.0, True, requests={"meta_Create": 253, "meta_Lookup": 200,
                                                                           "put_object": 40})
    held = OPS_REACHED_ENGINE.judge("metabench", rows, seen, Thresholds())
    assert {v.ok for v in held} == {True} and len(held) == 4
    assert "453 requests while metabench did 160 operations (2.83 per operation" in held[0].detail
    cached = Evidence(("s3",), 0, 0, 0, 0, 1.0, None, 1.0, True, requests={"meta_Lookup": 20})
    assert {v.ok for v in OPS_REACHED_ENGINE.judge("metabench", rows, cached, Thresholds())} == {False}
    # calls mode counts each operation on its own: not judged here
    counted = rows + [{"tool": "metabench", "operation": "lookup", "metric": "engine_requests_per_call", "value": 1.0}]
    assert OPS_REACHED_ENGINE.judge("metabench", counted, seen, Thresholds()) == []
    # the engine's own count vouches for the client's there too
    witness = ENGINE_SAW_CLIENT.judge("metabench", rows, _seen(1500, 453), Thresholds())
    assert [v.operation for v in witness] == ["create_write", "delete", "open_read", "rename"]
