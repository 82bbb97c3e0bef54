"""Masking: URL passwords (with '@' in them), known values, files of any size, binary files, tables."""

from __future__ import annotations

import pandas as pd
import pytest

from fsbench.core import secret_files, secret_known
from fsbench.core.secrets import (
    redact,
    redact_data,
    redact_file,
    redact_frame,
    redact_rows,
    remember,
    remember_written,
    split_url_password,
)


@pytest.fixture(autouse=True)
def known():
    """Each test starts and ends with no known secrets (the set is process-wide)."""
    saved, whole = set(secret_known._KNOWN), set(secret_known._WHOLE)
    secret_known._KNOWN.clear()
    secret_known._WHOLE.clear()
    yield secret_known._KNOWN
    secret_known._KNOWN.clear()
    secret_known._KNOWN.update(saved)
    secret_known._WHOLE.clear()
    secret_known._WHOLE.update(whole)


@pytest.mark.parametrize("text, masked", [
    ("mysql://jfs:p@ss@word@(127.0.0.1:3306)/jfs", "mysql://jfs:****@(127.0.0.1:3306)/jfs"),
    ("redis://:pw123@127.0.0.1:6379/1", "redis://:****@127.0.0.1:6379/1"),
    ("postgres://u:se:cret@db/x?sslmode=disable&k=a@b", "postgres://u:****@db/x?sslmode=disable&k=a@b"),
    ("meta 'tikv://u:pa@ss@h:2379/p' and https://AK:SK@s3.example/b done",
     "meta 'tikv://u:****@h:2379/p' and https://AK:****@s3.example/b done"),
    ("http://host:80/path and redis://127.0.0.1:6379/1", "http://host:80/path and redis://127.0.0.1:6379/1"),
    ("see http://a/?next=http://u:secret@h/x", "see http://a/?next=http://u:****@h/x"),
    ("no url user:pass@host", "no url user:pass@host"),
])
def test_url_passwords_are_masked_up_to_the_last_at_of_the_authority(text, masked):
    assert redact(text) == masked


@pytest.mark.parametrize("url, plain, password", [
    ("mysql://jfs:p@ss@word@(127.0.0.1:3306)/jfs", "mysql://jfs@(127.0.0.1:3306)/jfs", "p@ss@word"),
    ("redis://:pw@127.0.0.1:6379/1", "redis://127.0.0.1:6379/1", "pw"),
    ("redis://user:pw@h:1/2", "redis://user@h:1/2", "pw"),
    ("redis://127.0.0.1:6379/1", "redis://127.0.0.1:6379/1", ""),
    ("sqlite3:///var/tmp/x.db", "sqlite3:///var/tmp/x.db", ""),
])
def test_split_url_password(url, plain, password):
    assert split_url_password(url) == (plain, password)


def test_known_values_longest_first_and_short_values_never(known):
    remember("abc")
    remember("abcdef-long")
    remember("xy")
    assert redact("abcdef-long and abc, xy") == "**** and ****, xy"
    assert known == {"abc", "abcdef-long"}


def test_a_text_file_is_masked_in_a_stream_across_piece_boundaries(tmp_path, monkeypatch):
    monkeypatch.setattr(secret_files, "CHUNK", 4096)
    monkeypatch.setattr(secret_files, "OVERLAP", 64)
    remember("S3cretValue-with-some-length")
    f = tmp_path / "big.log"
    lines = []
    for i in range(3000):  # secrets and URLs land on every offset relative to the 4 KiB pieces
        lines.append(f"line {i} " + "x" * (i % 97) + (" S3cretValue-with-some-length" if i % 7 == 0 else "")
                     + (" mysql://jfs:p@ss@word@(db:3306)/jfs" if i % 11 == 0 else ""))
    text = "\n".join(lines) + "\n"
    f.write_text(text)
    f.chmod(0o640)
    assert redact_file(f)
    out = f.read_text()
    assert out == text.replace("S3cretValue-with-some-length", "****").replace("p@ss@word", "****")
    assert f.stat().st_mode & 0o777 == 0o640
    assert not redact_file(f)  # nothing left: read only, not rewritten
    assert [p.name for p in tmp_path.iterdir()] == ["big.log"]


def test_a_file_bigger_than_a_piece_with_one_huge_line(tmp_path, monkeypatch):
    monkeypatch.setattr(secret_files, "CHUNK", 1000)
    monkeypatch.setattr(secret_files, "OVERLAP", 50)
    remember("needle-secret")
    f = tmp_path / "one-line"
    f.write_bytes(b"y" * 5003 + b"needle-secret" + b"z" * 3000 + b"needle-secret")
    assert redact_file(f)
    assert f.read_bytes() == b"y" * 5003 + b"****" + b"z" * 3000 + b"****"


def test_binary_files_keep_their_layout(tmp_path):
    remember("binary-secret")
    f = tmp_path / "results.bin"
    f.write_bytes(b"PAR1\0\0\x07binary-secret\0mysql://u:pw@h/x\0")
    assert redact_file(f)
    assert f.read_bytes() == b"PAR1\0\0\x07" + b"*" * 13 + b"\0mysql://u:pw@h/x\0"


def test_tables_are_masked_cell_by_cell():
    remember("tbl-secret")
    df = pd.DataFrame({"reason": ["ok", "token tbl-secret", None], "value": [1.0, 2.0, 3.0],
                       "source": ["redis://:pw@h/1", "x", "y"]})
    out = redact_frame(df)
    assert list(out["reason"])[:2] == ["ok", "token ****"] and list(out["value"]) == [1.0, 2.0, 3.0]
    assert out["source"][0] == "redis://:****@h/1" and df["reason"][1] == "token tbl-secret"
    assert redact_rows([{"host": "h", "client": "s3fs -o pw=tbl-secret", "cores": 4}]) == [
        {"host": "h", "client": "s3fs -o pw=****", "cores": 4}]


# -- secrets written in a scenario ---------------------------------------------------------------------------

def test_literal_secrets_and_url_passwords_are_remembered_when_the_scenario_loads(known):
    import textwrap

    import yaml

    from fsbench.core.secrets import is_secret_key
    from fsbench.scenario.load import load_scenario_text

    text = textwrap.dedent("""\
        name: sec
        variables: {dbpw: changeme}
        secrets: {ak: {env: FSB_AK}}
        targets:
          jfs:
            kind: juicefs
            path: /srv/bench/jfs
            juicefs:
              meta: "mysql://jfs:${dbpw}@(127.0.0.1:3306)/jfs"
              storage: s3
              bucket: http://127.0.0.1:9000/b
              access_key: ${secrets.ak}
              secret_key: literalSecretKey123
        workloads:
          w: {tool: fio, options: {rw: write, size: 1m}}
        """)
    sc = load_scenario_text(text, "s.yaml", overrides=["dbpw=p@ss@fromSet99"])
    assert known == {"literalSecretKey123", "p@ss@fromSet99"}  # the reference is no value: nothing of it
    (warning,) = sc.warnings
    assert warning.startswith("s.yaml:13: targets.jfs.juicefs.secret_key: a secret is written in the scenario")
    written = yaml.safe_dump(redact_data(sc.resolved))  # as the run directory's scenario.yaml
    assert "literalSecretKey123" not in written and "fromSet99" not in written
    assert yaml.safe_load(written)["variables"]["dbpw"] == "****"
    assert "secret_key: '****'" in written and "${secrets.ak}" in written
    assert [k for k in ("secret_key", "fs.s3a.secret.key", "password", "db-password", "token", "access_key_env",
                        "keyring", "tokens") if is_secret_key(k)] == [
        "secret_key", "fs.s3a.secret.key", "password", "db-password", "token"]


def test_a_short_password_written_in_the_scenario_is_masked_whole_and_in_urls_not_inside_words():
    # meta-engines' lab database: mysql://jfs:jfs@... ; masking every 'jfs' would mangle kinds and paths
    remember_written("jfs")
    remember_written("juicefs")
    assert redact("mysql://jfs:jfs@(127.0.0.1:3306)/juicefs") == "mysql://jfs:****@(127.0.0.1:3306)/juicefs"
    assert redact("kind: jfs, etcd://h:2379/jfs") == "kind: jfs, etcd://h:2379/jfs"
    # whole values are masked where a secret stands (variables, keys naming secrets), not as a kind
    assert redact_data({"variables": {"dbpw": "jfs"}, "t": {"kind": "jfs", "secret_key": "juicefs",
                                                           "path": "/mnt/jfs"}}) == {
        "variables": {"dbpw": "****"}, "t": {"kind": "jfs", "secret_key": "****", "path": "/mnt/jfs"}}
    # long enough to be only itself: masked inside any text, as a declared secret is
    remember_written("s3cr3t-Pa55")
    assert redact("echo s3cr3t-Pa55 > x") == "echo **** > x"
