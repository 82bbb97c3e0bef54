"""objbench on a local store (storage: file, sqlite3, badger): its bucket is a name in the case folder."""

from __future__ import annotations

import pytest

from fsbench.api.tools import BuildContext
from fsbench.core.errors import FsbenchError, ScenarioError
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool

SCENARIO = """\
name: k
targets:
  plain: {path: /srv/x}
workloads:
"""


def _load(options: str):
    return load_scenario_text(SCENARIO + f"  ob: {{tool: juicefs-objbench, options: {options}}}\n", "k.yaml")


def _case(options: dict) -> Case:
    return Case("c", 1, "plain", "ob", "juicefs-objbench", 1, {}, options, {}, None, ("local",), 1.0, 60.0)


@pytest.mark.parametrize(("storage", "bucket", "why"), [
    ("file", "/etc/", "it is absolute"),
    ("file", "/srv/x/other/", "it is absolute"),
    ("file", "file:///etc/", "it is absolute"),
    ("file", "../../etc/", "it climbs out with '..'"),
    ("sqlite3", "/var/lib/app.db", "it is absolute"),
    ("badger", "''", "the name is empty"),
])
def test_a_local_bucket_outside_the_case_folder_is_refused(storage, bucket, why):
    with pytest.raises(ScenarioError) as err:
        _load(f"{{storage: {storage}, bucket: {bucket}}}")
    text = str(err.value)
    assert "k.yaml:5: workloads.ob.options.bucket: bucket=" in text and f"outside the case folder ({why})" in text
    assert "give a relative name" in text


def test_a_relative_bucket_is_made_in_the_case_folder():
    sc = _load("{storage: file, bucket: objects, threads: 1}")
    opts = sc.workloads["ob"].options
    inv = get_tool("juicefs-objbench").build(_case(opts), "/srv/x/fsbench-r/c", BuildContext())
    assert inv.argv[-1] == "/srv/x/fsbench-r/c/objects/"
    db = get_tool("juicefs-objbench").build(_case({"storage": "sqlite3", "bucket": "o.db"}), "/srv/x/fsbench-r/c",
                                            BuildContext())
    assert db.argv[-1] == "/srv/x/fsbench-r/c/o.db"


def test_a_remote_store_keeps_its_url_and_a_target_without_a_case_folder_fails_the_case():
    inv = get_tool("juicefs-objbench").build(_case({"storage": "s3", "bucket": "http://h:9000/b"}), "/srv/x/c",
                                             BuildContext())
    assert inv.argv[-1] == "http://h:9000/b"
    with pytest.raises(FsbenchError, match="a file bucket is a name in the case folder"):
        get_tool("juicefs-objbench").build(_case({"storage": "file", "bucket": "objects"}), "hdfs://nn/x",
                                           BuildContext(address="url"))
