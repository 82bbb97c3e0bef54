"""The metadata-engine service kinds without servers: their plans keep passwords out of argv and files, the
`existing:` form is only probed, and a password written into an existing server's URL is refused."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import pytest

from fsbench.core.errors import ScenarioError
from fsbench.core.shell import render, sh
from fsbench.scenario.load import load_scenario_text
from fsbench.services import SERVICE_KINDS

KINDS = ("redis", "mysql", "postgres", "etcd")


def _scenario(service: str, more: str = "") -> str:
    return textwrap.dedent(f"""\
        name: kinds
        {more}
        services:
          db: {service}
        targets:
          t: {{path: /tmp/fsbench-kinds-unit, services: [db]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)


def _plan(kind: str, section: dict | None = None):
    plugin = SERVICE_KINDS.get(kind)
    return plugin.plan(SimpleNamespace(settings=plugin.settings(section), managed=True))


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_loads_with_defaults_and_exports_a_url(kind):
    sc = load_scenario_text(_scenario(f"{{kind: {kind}}}"), "s.yaml")
    plan = SERVICE_KINDS.get(kind).plan(sc.services["db"])
    assert plan.start and plan.ready and plan.stop and plan.default_port == "auto" and plan.managed
    assert plan.exports["url"].startswith(f"{kind}://")


@pytest.mark.parametrize("kind", ("redis", "mysql", "postgres"))
def test_the_password_is_made_up_per_run_and_travels_in_the_environment_only(kind):
    plan = _plan(kind)
    assert plan.generated == {"password": 24}
    values = {"service.password": "S3cretValue", "service.host": "127.0.0.1", "service.port": "4242",
              "service.dir": "/var/tmp/x", "service.port_peer": "4243", "run.id": "r"}
    for text in (*plan.start, plan.ready, *plan.stop):
        argv = sh(render(text, values))
        assert "S3cretValue" not in " ".join(argv), text  # a reference to FSBENCH_SECRET_SERVICE_PASSWORD instead
    for body in plan.files.values():
        assert "${service.password}" not in body  # files get it from the environment at start, never rendered in


def test_redis_options_become_its_configuration():
    conf = _plan("redis", {"appendonly": True, "appendfsync": "always", "config": {"maxmemory": "1gb"}}).files[
        "redis.conf"]
    assert "appendonly yes\n" in conf and "appendfsync always\n" in conf and "maxmemory 1gb\n" in conf


def test_a_wrong_appendfsync_is_refused_where_it_stands():
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(_scenario("{kind: redis, redis: {appendfsync: sometimes}}"), "s.yaml")
    assert "s.yaml:4" in str(err.value) and "appendfsync" in str(err.value)


@pytest.mark.parametrize("kind,url", [("redis", "redis://10.0.0.5:6379"), ("mysql", "mysql://jfs@(10.0.0.5:3306)"),
                                      ("postgres", "postgres://jfs@10.0.0.5:5432/jfs"), ("etcd", "etcd://10.0.0.5:2379")])
def test_an_existing_server_is_only_probed_and_its_password_comes_from_a_secret(kind, url):
    sc = load_scenario_text(_scenario(f"{{kind: {kind}, {kind}: {{existing: {{url: \"{url}\", secret: pw}}}}}}",
                                      "secrets: {pw: {env: FSB_UNIT_PW}}"), "s.yaml")
    svc = sc.services["db"]
    plan = SERVICE_KINDS.get(kind).plan(svc)
    assert not plan.managed and not plan.start and not plan.stop and not plan.files and not plan.generated
    assert "10.0.0.5" in plan.ready and "${secrets.pw}" in plan.exports["url"]
    assert "${secrets.pw}" not in render(plan.ready, {"secrets.pw": "x"}).replace('"$FSBENCH_SECRET_PW"', "")


def test_a_password_in_an_existing_servers_url_is_refused():
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(_scenario('{kind: mysql, mysql: {existing: {url: "mysql://jfs:hunter2@(db:3306)"}}}'),
                           "s.yaml")
    assert "holds a password" in str(err.value) and "secret:" in str(err.value)


def test_an_existing_url_of_another_engine_is_refused():
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(_scenario('{kind: redis, redis: {existing: {url: "mysql://jfs@(db:3306)"}}}'), "s.yaml")
    assert "is not a redis:// URL" in str(err.value)


def test_etcd_without_authentication_for_clients_on_other_hosts_has_no_certificates_in_its_urls():
    tls, none = _plan("etcd"), _plan("etcd", {"auth": "none"})
    assert "cacert=" in tls.exports["meta"] and "https://" in tls.ready and "FSBENCH_AUTH=tls" in tls.start[0]
    assert none.exports["tls"] == "" and "cacert" not in none.exports["meta"] and "http://" in none.ready
    assert "FSBENCH_AUTH=none" in none.start[0]


def _two_hosts(auth: str) -> str:
    return textwrap.dedent(f"""\
        name: etcd-hosts
        hosts:
          meta: {{transport: local}}
          client: {{transport: local}}
        services:
          etcd: {{kind: etcd, hosts: [meta], etcd: {{auth: {auth}}}}}
        targets:
          t: {{path: /tmp/fsbench-kinds-unit, hosts: [client], services: [etcd]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)


def test_etcd_with_client_certificates_is_refused_for_a_target_on_another_host():
    """Its certificates are files on the etcd host: every case on another host would fail at mount time."""
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(_two_hosts("tls"), "s.yaml")
    text = str(err.value)
    assert "s.yaml:6" in text and "target 't' runs on client" in text and "auth: none" in text, text
    sc = load_scenario_text(_two_hosts("none"), "s.yaml")  # without authentication, any host may be a client
    assert sc.targets["t"].services == ("etcd",)
