"""Benchmark: ingesting N fio JSON files costs at most 2x what json alone takes to decode them (issue 25; 3x:
issue 3), the whole `fsbench ingest` under 1 s, and memory grows linearly with the rows.

    python bench/ingest_speed.py [--files 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from fsbench.ingest import ingest_files

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "fio"


def make_files(folder: Path, n: int) -> list[str]:
    sources = sorted(p for p in FIXTURES.glob("json_*.json") if "error" not in p.name)
    out = []
    for i in range(n):
        dst = folder / f"run{i:05d}.json"
        shutil.copyfile(sources[i % len(sources)], dst)
        out.append(str(dst))
    return out


def json_only(files: list[str]) -> float:
    """Read and decode every file with the json module (the raw_decode of the first object)."""
    start = time.perf_counter()
    dec = json.JSONDecoder()
    for f in files:
        text = Path(f).read_text()
        i = text.find("\n{") + 1 if not text.startswith("{") else 0
        dec.raw_decode(text, i)
    return time.perf_counter() - start


def json_every_object(files: list[str]) -> float:
    """Read and decode every top-level object of every file with the json module: what a reader needs when
    a file holds several (fio's --status-interval prints one per interval, and the last complete one is the
    result; 182 of the 1,000 files here hold two or three)."""
    start = time.perf_counter()
    dec = json.JSONDecoder()
    for f in files:
        text = Path(f).read_text()
        i = 0 if text.startswith("{") else text.find("\n{") + 1
        while i >= 0 and i < len(text):
            _, end = dec.raw_decode(text, i)
            nxt = text.find("\n{", end)
            i = nxt + 1 if nxt >= 0 else -1
    return time.perf_counter() - start


def fsbench_ingest(files: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    rows, errors = ingest_files("fio", files)
    assert not errors
    return time.perf_counter() - start, len(rows)


def peak_memory(files: list[str]) -> tuple[int, int]:
    tracemalloc.start()
    rows, _ = ingest_files("fio", files)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return len(rows), peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = make_files(Path(tmp), args.files)
        fsbench_ingest(files[:50])  # warm imports and caches
        ratios, decode, ingest, every = [], [], [], []
        for _ in range(args.repeat):
            d = json_only(files)
            t, nrows = fsbench_ingest(files)
            decode.append(d)
            ingest.append(t)
            ratios.append(t / d)
            every.append(t / json_every_object(files))
        print(f"{args.files} fio JSON files, {nrows} rows: json decode {statistics.median(decode) * 1000:.0f} ms, "
              f"fsbench ingest {statistics.median(ingest) * 1000:.0f} ms, "
              f"ratio {statistics.median(ratios):.2f}x (target <= 2x)")
        print(f"  against json decoding every object of each file (not only the first): "
              f"{statistics.median(every):.2f}x")
        out = Path(tmp) / "rows.parquet"
        start = time.perf_counter()
        import subprocess
        import sys

        subprocess.run([sys.executable, "-m", "fsbench", "ingest", "fio", *files, "-o", str(out)], check=True)
        cli = time.perf_counter() - start
        print(f"  whole CLI (python start-up, pandas import, Parquet writing): {cli * 1000:.0f} ms (target < 1000 ms)")
        for n in (args.files // 4, args.files // 2, args.files):
            rows, peak = peak_memory(files[:n])
            print(f"  {n:>5} files: {rows:>6} rows, peak {peak / 2**20:6.1f} MiB, {peak / rows:7.0f} B/row")


if __name__ == "__main__":
    main()
