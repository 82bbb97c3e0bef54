"""The entry points of fsbench's plug-in groups, read from the installed packages' own files.

importlib.metadata reads them too, but its import (email, zipfile, csv...) and its pass over every
distribution were the larger part of `fsbench validate`'s time; the plug-in groups need only this: an
installed package's entry points are the `entry_points.txt` of its `NAME-VERSION.dist-info` (or
`NAME.egg-info`) folder in a folder of sys.path, INI sections named after groups with `name = module:attr`
lines. As importlib.metadata does, a package found in two folders counts once: the first on sys.path.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from dataclasses import dataclass
from operator import attrgetter

_METADATA_DIR = (".dist-info", ".egg-info")


@dataclass(frozen=True)
class PluginEntry:
    """One entry point: its name, its `module:attr` value and its group."""

    name: str
    value: str
    group: str

    def load(self) -> object:
        """The object the value names: the module imported, then its attribute (dotted), if any."""
        module, _, attrs = self.value.split("[", 1)[0].partition(":")  # `[extras]` name no object
        found = importlib.import_module(module.strip())
        return attrgetter(attrs.strip())(found) if attrs.strip() else found


def installed_entry_points(path: list[str] | None = None) -> list[PluginEntry]:
    """Every entry point of the packages installed in the folders of path (sys.path), in path order."""
    out: list[PluginEntry] = []
    seen: set[str] = set()
    for folder in sys.path if path is None else path:
        try:
            names = sorted(e.name for e in os.scandir(folder or ".") if e.name.endswith(_METADATA_DIR))
        except OSError:
            continue  # a zip, a path hook's name, a folder gone
        for name in names:
            package = re.sub(r"[-_.]+", "_", name.rsplit(".", 1)[0].split("-", 1)[0]).lower()
            if package in seen:
                continue
            seen.add(package)
            try:
                with open(os.path.join(folder or ".", name, "entry_points.txt"), encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                continue  # a package without entry points
            out += parse_entry_points(text)
    return out


def parse_entry_points(text: str) -> list[PluginEntry]:
    """The entries of one entry_points.txt: `[group]` lines, then `name = value` lines (comments: # and ;)."""
    out: list[PluginEntry] = []
    group = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
        elif "=" in line and group:
            name, value = (part.strip() for part in line.split("=", 1))
            out.append(PluginEntry(name, value, group))
    return out
