"""fsbench reads a job file as the real fio does: `fio --showcmd` (what fio parsed) and a real run agree
with fsbench's reader on sections, repeats, later globals, aliases, comments, includes and ${VAR}; and
every engine this fio has is one fsbench's containment knows."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from fsbench.tools.fio.containment import engine_kind
from fsbench.tools.fio.jobfile import JobFile, canonical, parse_jobfile

JOB = """\
; a job file with everything fio reads its own way
# a comment line
[global]
include common.fio
size=${SZ}
bs=4k  # blocks
[a]
rw=randread ; random
[globalx]
blocksize=64k
[b]
rw=write
[a]
readwrite=randwrite
iodepth=16
[GLOBAL]
"""


def _showcmd(jf: JobFile) -> str:
    """What `fio --showcmd` prints for a job file fsbench read: each job's name and own options; at each
    global section every global option so far (fio prints its accumulated list there); aliases by their option."""
    words: list[str] = []
    defaults: list[str] = []
    for s in jf.sections:
        own = [f"--{canonical(k)}" if v is None else f"--{canonical(k)}={v}" for k, v in s.options.items()]
        if s.is_global:
            defaults += own
            words += defaults
        else:
            words += [f"--name={s.name}", *own]
    return " ".join(["fio", *words])


def _write(tmp_path: Path) -> Path:
    (tmp_path / "common.fio").write_text("ioengine=null\ndirect=0 ; not used\n")
    path = tmp_path / "t.fio"
    path.write_text(JOB)
    return path


def test_showcmd_prints_what_fsbench_read(tmp_path, fio):
    path = _write(tmp_path)
    env = {**os.environ, "SZ": "1m"}
    shown = subprocess.run([fio, "--showcmd", str(path)], capture_output=True, text=True, env=env, check=True,
                           timeout=30).stdout.strip()
    jf = parse_jobfile(path.read_text(), str(path), env={"SZ": "1m"})
    assert jf.problems == []
    assert shown == _showcmd(jf)
    assert jf.job_names() == ["a", "b", "a", "GLOBAL"]  # four jobs: none merged, none lost


def test_a_real_run_gives_each_job_the_options_fsbench_reads(tmp_path, fio):
    path = _write(tmp_path)
    out = subprocess.run([fio, "--output-format=json", str(path)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "SZ": "1m"}, check=True, timeout=60).stdout
    jobs = json.loads(out[out.index("{"):])["jobs"]
    jf = parse_jobfile(path.read_text(), str(path), env={"SZ": "1m"})
    expected = [(name, opts.get("rw") or "read", 2**20 // int(opts["bs"].rstrip("k")) // 1024)
                for name, opts in jf.jobs()]
    # fio's JSON names an alias by its option too (readwrite=randwrite is "rw": "randwrite")
    ran = [(j["jobname"], j.get("job options", {}).get("rw", "read"), j["read"]["total_ios"] + j["write"]["total_ios"])
           for j in jobs]
    assert ran == expected
    assert expected == [("a", "randread", 256), ("b", "write", 16), ("a", "randwrite", 16), ("GLOBAL", "read", 16)]


def test_every_engine_of_this_fio_is_classified(fio):
    listed = subprocess.run([fio, "--enghelp"], capture_output=True, text=True, check=True, timeout=30).stdout
    engines = [line.strip() for line in listed.splitlines()[1:] if line.strip()]
    assert "gfapi" in engines and "psync" in engines, listed
    kinds = {e: engine_kind(e) for e in engines}
    assert "unknown" not in kinds.values(), kinds
    assert kinds["gfapi"] == kinds["gfapi_async"] == "remote" and kinds["sg"] == "device" and kinds["exec"] == "code"


def test_fio_cuts_a_path_at_hash_and_semicolon_as_fsbench_says(tmp_path):
    """The premise of refusing '#' and ';' in target paths: real fio writes into the folder before them."""
    from fsbench.tools.fio.jobfile import value_change

    for char in "#;":
        base = tmp_path / f"c{ord(char)}"
        (base / f"victim{char}t").mkdir(parents=True)
        (base / "victim").mkdir()
        job = base / "job.fio"
        job.write_text(f"[w]\ndirectory={base}/victim{char}t\nrw=write\nsize=64k\nfilename=data\n")
        subprocess.run(["fio", "--output-format=json", str(job)], check=True, capture_output=True, cwd=base)
        assert f"would read {str(base / 'victim')!r}" in value_change(f"{base}/victim{char}t")
        assert (base / "victim" / "data").stat().st_size == 64 * 1024  # outside the folder named
        assert not (base / f"victim{char}t" / "data").exists()
