"""A rerun's judgement of a run's statements: contradicted only by an opposite statement as firm, reversed by
the rerun's plain means (what its tables show, significant or not)."""

from __future__ import annotations

from fsbench.compare.contradict import BEST, LAST, RATIO, Statements, contradictions


def _run(claims: dict, plain: dict) -> Statements:
    return Statements("redis", dict(claims), {k: f"{k[0]} {k[1]} {k[2]} {v}" for k, v in claims.items()}, dict(plain))


def test_a_statement_the_rerun_cannot_confirm_is_unconfirmed_but_its_plain_numbers_may_reverse_it() -> None:
    key = ("mdtest", "file_stat", "rate")
    a = _run({(BEST, key, ""): "redis", (LAST, key, ""): "etcd", (RATIO, key, "etcd"): "below 1"},
             {(BEST, key, ""): "redis", (LAST, key, ""): "etcd", (RATIO, key, "etcd"): "below 1"})
    # the rerun states nothing firmly; its means keep the best and the ratio, but put mariadb last
    b = _run({}, {(BEST, key, ""): "redis", (LAST, key, ""): "mariadb", (RATIO, key, "etcd"): "below 1"})
    got = contradictions(a, b)
    assert (got["statements"], got["confirmed"], got["unconfirmed"], got["contradicted"]) == (3, 0, 3, [])
    assert [(r["kind"], r["b_plain"]) for r in got["reversed_by_plain_numbers"]] == [(LAST, "mariadb")]


def test_an_opposite_firm_statement_is_a_contradiction_and_a_reversal() -> None:
    key = ("fio", "write", "bandwidth")
    a = _run({(RATIO, key, "etcd"): "above 1"}, {(RATIO, key, "etcd"): "above 1"})
    b = _run({(RATIO, key, "etcd"): "below 1"}, {(RATIO, key, "etcd"): "below 1"})
    got = contradictions(a, b)
    assert len(got["contradicted"]) == 1 and len(got["reversed_by_plain_numbers"]) == 1
    assert contradictions(a, a)["reversed_by_plain_numbers"] == [] and contradictions(a, a)["confirmed"] == 1
