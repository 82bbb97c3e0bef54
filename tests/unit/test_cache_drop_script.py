"""The cache drop asks a host once: the figures before, the drop, the figures after, in one shell."""

from __future__ import annotations

import subprocess

from fsbench.run.targets.cache import drop_script, figures


def test_one_shell_reads_the_figures_around_the_drop_and_exits_with_the_drops_status():
    script = drop_script(1)
    before, drop, after = script.split("; echo @@; ")
    assert drop == "sync && echo 1 > /proc/sys/vm/drop_caches; rc=$?"
    assert before == after.removesuffix("; exit $rc") and "/proc/meminfo" in before and "dentry-state" in before
    # the figures as the kernel prints them, read by the same parser the drop uses
    out = subprocess.run(["sh", "-c", before], capture_output=True, text=True, check=True).stdout
    cached, names = figures(out)
    assert cached is not None and cached > 0 and names is not None and names > 0


def test_figures_that_are_not_there_are_none():
    assert figures("") == (None, None)
    assert figures("Cached:       2048 kB\n") == (2048 * 1024, None)
    assert figures("cat: /proc/sys/fs/dentry-state: No such file\n") == (None, None)


def test_one_cat_reads_both_figures_each_time():
    # the figures are read before and after the drop in every case that drops: one cat for the two files (not
    # grep: what runs after the drop is read from disk again, and the case's next commands run cat anyway)
    before = drop_script(3).split("; echo @@; ")[0]
    assert before.startswith("cat ") and before.count("cat ") == 1 and ";" not in before and "|" not in before
    out = subprocess.run(["sh", "-c", before], capture_output=True, text=True, check=True).stdout
    cached, names = figures(out)
    # the page cache is meminfo's Cached line, not SwapCached's; the dentries the one line with a digit first
    (line,) = [x for x in out.splitlines() if x.startswith("Cached:")]
    assert cached == int(line.split()[1]) * 1024
    (dentries,) = [x for x in out.splitlines() if x[:1].isdigit()]
    assert names == int(dentries.split()[0]) and "SwapCached:" in out
