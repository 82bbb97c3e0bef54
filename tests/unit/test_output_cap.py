"""A command's captured output is capped: its head and its tail are kept, one line says what was left out."""

from __future__ import annotations

from fsbench.transport.capture import MIN_CAP, CappedOutput
from fsbench.transport.local import LocalTransport


def test_output_under_the_cap_is_kept_whole(tmp_path):
    out = CappedOutput(tmp_path / "stdout", keep=False, cap=MIN_CAP)
    data = bytes(range(256)) * (MIN_CAP // 256)  # exactly the cap
    for i in range(0, len(data), 1000):
        out.write(data[i:i + 1000])
    out.close()
    assert (tmp_path / "stdout").read_bytes() == data
    assert not out.capped and out.note() == ""


def test_output_over_the_cap_keeps_head_and_tail_with_a_marker_line(tmp_path):
    out = CappedOutput(tmp_path / "stdout", keep=False, cap=MIN_CAP, name="stdout")
    lines = [f"line {i:07d}\n".encode() for i in range(100_000)]  # 1.3 MB in 13-byte lines
    for line in lines:
        out.write(line)
    out.close()
    kept = (tmp_path / "stdout").read_bytes()
    head, marker, tail = kept.partition(b"\n[fsbench: ")
    whole = b"".join(lines)
    assert whole.startswith(head) and len(head) == MIN_CAP - MIN_CAP // 2
    rest = tail.partition(b"]\n")[2]
    assert whole.endswith(rest) and len(rest) == MIN_CAP // 2
    left_out = len(whole) - len(head) - len(rest)
    assert tail.startswith(f"{left_out} bytes of stdout left out here".encode())
    assert out.capped and "stdout: 1.2 MiB printed, over the cap of 0.1 MiB" in out.note()
    assert out.tail().endswith(b"line 0099999\n")


def test_kept_in_memory_the_same_way():
    out = CappedOutput(None, keep=True, cap=MIN_CAP)
    for _ in range(10):
        out.write(b"x" * MIN_CAP)
    out.close()
    assert len(out.data()) < MIN_CAP + 200 and out.data().startswith(b"x" * 1000) and out.capped


def test_the_local_transport_caps_a_firehose_into_its_file(tmp_path):
    tr = LocalTransport()
    tr.output_cap = MIN_CAP
    r = tr.run(["sh", "-c", "yes | head -c 5000000; echo END; yes e | head -c 3000000 >&2"], timeout=60,
               stdout_path=tmp_path / "out", stderr_path=tmp_path / "err")
    assert r.ok
    out, err = (tmp_path / "out").read_bytes(), (tmp_path / "err").read_bytes()
    assert len(out) < MIN_CAP + 200 and out.endswith(b"y\nEND\n") and b"[fsbench: " in out
    assert len(err) < MIN_CAP + 200 and r.stdout_tail.endswith("END\n")
    assert [n.split(":")[0] for n in r.extra["capped"]] == ["stdout", "stderr"]
