"""objbench's keys of another store come from the scenario's secrets through the build context, never from
this machine's environment, and only into the command's environment."""

from __future__ import annotations

import pytest

from fsbench.api.tools import BuildContext
from fsbench.core.errors import FsbenchError, ScenarioError
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool

KEY, SECRET = "AKIA-objbench-test-1", "objbench-secret-value-2"
OTHER_STORE = {"storage": "s3", "bucket": "http://127.0.0.1:9/b", "access_key": "${secrets.ak}",
               "secret_key": "${secrets.sk}"}


def _case(options: dict) -> Case:
    return Case("c", 1, "t", "w", "juicefs-objbench", 1, {}, options, {}, None, ("local",), 1.0, 60.0)


def test_keys_of_another_store_come_from_the_build_context_into_the_environment(monkeypatch):
    monkeypatch.setenv("AK", "from-the-controller-environment")  # the old way: never read
    inv = get_tool("juicefs-objbench").build(_case(OTHER_STORE), "/mnt/x",
                                             BuildContext(secrets={"ak": KEY, "sk": SECRET}))
    assert inv.env == {"ACCESS_KEY": KEY, "SECRET_KEY": SECRET}
    assert inv.argv[-1] == "http://127.0.0.1:9/b" and not {KEY, SECRET} & set(" ".join(inv.argv).split())
    with pytest.raises(FsbenchError, match="the secret 'sk' was not resolved"):
        get_tool("juicefs-objbench").build(_case(OTHER_STORE), "/mnt/x", BuildContext(secrets={"ak": KEY}))


SCENARIO = """\
name: k
secrets:
  ak: {env: FSB_AK}
targets:
  plain: {path: /srv/x}
workloads:
"""


def _issues(options: str) -> str:
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(SCENARIO + f"  ob: {{tool: juicefs-objbench, options: {options}}}\n", "k.yaml")
    return "\n".join(str(i) for i in err.value.issues)


def test_a_key_written_into_the_options_is_refused_without_repeating_it():
    text = _issues(f"{{storage: s3, bucket: 'http://h/b', access_key: {KEY}}}")
    assert "k.yaml:7: workloads.ob.options.access_key: access_key must refer to a secret of the scenario" in text
    assert KEY not in text and "${secrets.NAME}" in text


def test_a_key_naming_an_undeclared_secret_or_the_old_variable_names_are_refused():
    text = _issues("{storage: s3, bucket: 'http://h/b', access_key: '${secrets.ak}', secret_key: '${secrets.nope}'}")
    assert "secret_key refers to the secret 'nope', which `secrets:` does not declare (declared: ak)" in text
    assert "access_key:" not in text  # the declared one is fine
    text = _issues("{storage: s3, bucket: 'http://h/b', access_key_env: AK}")
    assert "access_key_env is no longer read" in text and "give `access_key: ${secrets.NAME}`" in text


def test_keys_without_another_store_are_refused():
    text = _issues("{access_key: '${secrets.ak}'}")
    assert "access_key is for another store than the target's" in text
