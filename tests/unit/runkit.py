"""A run pipeline on fake hosts (fsbench.transport.fake), for the unit tests of Runner, CaseRun and sessions."""

from __future__ import annotations

import csv
import json
import textwrap
import threading
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.core.events import Event
from fsbench.run.leftovers import Leftovers
from fsbench.run.runner import Runner, RunOutcome
from fsbench.run.store import RunDir
from fsbench.scenario import load_scenario, plan_cases
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case
from fsbench.transport.fake import Call, FakeTransport, fake_hosts, result
from tests.paths import REPO

#: what fio writes with --output=fio.json (a real fio 3.33 output of one write job)
FIO_JSON = (REPO / "tests/golden/fio/inputs/fio-3.33_json_on_one_line_write_libaio.json").read_bytes()
#: the folder every test target lives in on the fake hosts
DATA = "/data"


def answer_like_a_host(host: FakeTransport) -> None:
    """The answers every host gives: paths resolve to themselves, fio writes its JSON into its work folder."""

    host.on(lambda argv: argv[-2:-1] == ["fsbench-resolve"],
            then=lambda call: result(call, stdout=f"/root\0/root\0realpath -m\0{call.argv[-1]}"))
    host.on(["fio", "--output-format=json"], then=lambda call: fio_writes(host, call))
    # a service's port check: the host's clock, and no listener on its ports
    host.on(lambda argv: argv[3:5] == ["fsbench-service", "ports"], stdout="now 1000\n")
    host.dirs.add(DATA)


def fio_writes(host: FakeTransport, call: Call, data: bytes = FIO_JSON) -> None:
    """fio's output file, in the folder it ran in."""
    host.files[f"{call.cwd}/fio.json"] = data


@dataclass
class Lab:
    """A scenario planned onto fake hosts, and a run directory for it."""

    sc: Scenario
    cases: list[Case]
    rd: RunDir
    hosts: dict[str, FakeTransport]
    controller: FakeTransport
    events: list[Event] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def leftovers(self) -> Leftovers:
        return Leftovers(self.rd.path / "leftovers.json")

    def runner(self, rd: RunDir | None = None) -> Runner:
        """A Runner over the fake hosts (host facts given: no probing)."""
        facts = [{"host": h, "fio_version": "fio-3.33"} for h in self.hosts]
        return Runner(self.sc, self.cases, rd or self.rd, listener=self.events.append, cancel=self.cancel,
                      transports=dict(self.hosts), host_facts=facts, controller=self.controller,
                      leftovers=Leftovers((rd or self.rd).path / "leftovers.json"))

    def run(self) -> RunOutcome:
        return self.runner().run()

    def records(self) -> dict[str, dict]:
        """cases.csv by case id."""
        with (self.rd.path / "cases.csv").open(newline="") as fh:
            return {r["case_id"]: r for r in csv.DictReader(fh)}

    def manifest(self) -> dict:
        return json.loads((self.rd.path / "manifest.json").read_text())


def lab(tmp_path: Path, body: str, hosts: tuple[str, ...] = ("local",)) -> Lab:
    """The scenario body (dedented; `name` and `monitor` added) on fake hosts answering like real ones."""
    text = "name: fake\nmonitor: {enabled: false}\n" + textwrap.dedent(body)
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "scenario.yaml").write_text(text)
    sc = load_scenario(tmp_path / "scenario.yaml")
    fakes = fake_hosts(*hosts, "controller")
    for h in hosts:
        answer_like_a_host(fakes[h])
    controller = fakes.pop("controller")
    rd = RunDir.create(tmp_path / "runs", sc.name, sc.resolved)
    return Lab(sc, plan_cases(sc), rd, fakes, controller)


def said(argv: list[str]) -> str:
    """A scenario's command as written (the text after `/bin/sh -e -c`, however wrapped), else the command line."""
    for i in range(len(argv) - 3):
        if argv[i:i + 3] == ["/bin/sh", "-e", "-c"]:
            return argv[i + 3]
    return " ".join(argv)
