"""Real juicefs format given a bucket URL with keys: fsbench passes them in ACCESS_KEY/SECRET_KEY (juicefs
1.4 ignores a URL's user info) and leaves them off the command line, where ps would show them."""

from __future__ import annotations

import http.server
import os
import subprocess
import threading
import time

import pytest

from fsbench.kinds import KINDS
from fsbench.scenario.load import load_scenario_text
from tests.conftest import require

pytestmark = pytest.mark.e2e

AK, SK = "AKIAFSBENCHURL0001", "url/secret+key"


def test_url_keys_reach_the_store_through_the_environment(tmp_path):
    require("juicefs")
    seen: list[str] = []

    class Store(http.server.BaseHTTPRequestHandler):
        """An S3 endpoint that notes each request's Authorization header and refuses it."""

        def _any(self) -> None:
            seen.append(str(self.headers.get("Authorization")))
            self.send_response(403)
            self.end_headers()

        do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = _any

        def log_message(self, *args) -> None:  # noqa: ANN002
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Store)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sc = load_scenario_text(f"""\
name: k
targets:
  t:
    kind: juicefs
    path: {tmp_path}/mnt
    juicefs: {{meta: "sqlite3://{tmp_path}/meta.db", storage: s3,
               bucket: "http://{AK}:{SK.replace('/', '%2F')}@127.0.0.1:{server.server_port}/b"}}
workloads:
  w: {{tool: fio, options: {{rw: write, size: 1m}}}}
""", "k.yaml")
    t = sc.targets["t"]
    plan = KINDS.get("juicefs").plan(t, {"target.path": t.path}, str(tmp_path / "scratch"))
    check, fmt = plan.once  # juicefs status first: format only a meta that holds no volume (docs/safety.md)
    assert fmt[1] == "format" and not [w for w in check if AK in w or SK in w]
    assert not [w for w in fmt if AK in w or SK in w or "url%2Fsecret" in w]
    assert f"http://127.0.0.1:{server.server_port}/b" in fmt
    proc = subprocess.Popen(fmt, env={**os.environ, **plan.env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not seen and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()
        server.shutdown()
    assert seen and f"Credential={AK}/" in seen[0]  # the key from the environment signed the request
