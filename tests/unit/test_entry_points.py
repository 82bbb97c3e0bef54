"""fsbench's reading of installed packages' entry points agrees with importlib.metadata's."""

from __future__ import annotations

import importlib.metadata
import sys

from fsbench.api.entry_points import PluginEntry, installed_entry_points, parse_entry_points


def test_an_entry_points_file_gives_its_groups_names_and_values():
    text = "# a comment\n[fsbench.tools]\ndd = fsbench_dd:PLUGIN\n; another\n\n[console_scripts]\nx=pkg.cli:main [cli]\n"
    assert parse_entry_points(text) == [PluginEntry("dd", "fsbench_dd:PLUGIN", "fsbench.tools"),
                                        PluginEntry("x", "pkg.cli:main [cli]", "console_scripts")]


def test_a_package_found_twice_counts_once_the_first_on_the_path(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for folder, value in ((first, "one:PLUGIN"), (second, "two:PLUGIN")):
        info = folder / "fsbench_dd-0.1.dist-info"
        info.mkdir(parents=True)
        (info / "entry_points.txt").write_text(f"[fsbench.tools]\ndd = {value}\n")
    (second / "Other.Pkg.egg-info").mkdir()
    (second / "Other.Pkg.egg-info" / "entry_points.txt").write_text("[fsbench.tools]\nother = other_pkg\n")
    (second / "no_entries-1.0.dist-info").mkdir()
    found = installed_entry_points([str(first), str(second), str(tmp_path / "gone")])
    assert found == [PluginEntry("dd", "one:PLUGIN", "fsbench.tools"), PluginEntry("other", "other_pkg", "fsbench.tools")]


def test_an_entry_point_loads_the_object_its_value_names():
    assert PluginEntry("p", "fsbench.api.entry_points:PluginEntry.load", "g").load() is PluginEntry.load
    assert PluginEntry("p", "fsbench.api.entry_points", "g").load() is sys.modules["fsbench.api.entry_points"]


def test_this_python_s_entry_points_are_importlib_metadata_s():
    groups = {ep.group for dist in importlib.metadata.distributions() for ep in dist.entry_points}
    theirs = {(ep.group, ep.name, ep.value) for g in groups for ep in importlib.metadata.entry_points(group=g)}
    mine = {(ep.group, ep.name, ep.value) for ep in installed_entry_points()}
    assert mine and mine == theirs
