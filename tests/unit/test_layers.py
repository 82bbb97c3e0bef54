"""Dependencies go one way: entry points -> presentation -> runtime -> scenario -> plug-ins -> base.

Every import counts: those inside functions (they would only hide a cycle) and those under
`if TYPE_CHECKING:` (an annotation that names a higher layer's type is an arrow running back up too).
No module imports itself back through others: the import graph has no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import REPO

PACKAGE = REPO / "fsbench"
#: lowest first; a module belongs to the first layer with a matching prefix
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("fsbench.core", "fsbench.config")),
    ("contracts", ("fsbench.api",)),
    ("host", ("fsbench.host", "fsbench.monitor", "fsbench.validity", "fsbench.hadoop")),
    ("plug-ins", ("fsbench.tools", "fsbench.kinds", "fsbench.services", "fsbench.transport", "fsbench.collectors")),
    ("scenario", ("fsbench.scenario",)),
    ("runtime", ("fsbench.run",)),
    ("presentation", ("fsbench.analysis", "fsbench.report", "fsbench.compare", "fsbench.ingest")),
    ("entry points", ("fsbench.campaign", "fsbench.cli", "fsbench.__main__", "fsbench")),
]


def layer_of(module: str) -> int:
    """The index of the layer a module belongs to (the most specific prefix wins)."""
    best, best_len = len(LAYERS) - 1, -1
    for i, (_name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every fsbench import: at module level, in a function, or for type checking only."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("fsbench")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("fsbench"):
            names = [f"{node.module}.{a.name}" for a in node.names]
            out += [(node.lineno, n if _is_module(n) else node.module) for n in names]
    return out


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (REPO / rel).with_suffix(".py").exists() or (REPO / rel / "__init__.py").exists()


def test_no_module_imports_from_a_higher_layer():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        mine = layer_of(module)
        for line, target in _imports(path):
            theirs = layer_of(target)
            if theirs > mine:
                wrong.append(f"{path.relative_to(REPO)}:{line}: {module} ({LAYERS[mine][0]}) imports {target} "
                             f"({LAYERS[theirs][0]})")
    assert not wrong, "\n".join(wrong)


def tool_package_of(module: str) -> str:
    """The tool package a module is in or names (fsbench.tools.fio for fsbench.tools.fio.jobfile), '' for none:
    fsbench.tools itself (the registry, common helpers, the generic placement) is no tool's package."""
    parts = module.split(".")
    if len(parts) < 3 or parts[:2] != ["fsbench", "tools"] or not (PACKAGE / "tools" / parts[2]).is_dir():
        return ""
    return ".".join(parts[:3])


def test_tool_package_of_names_the_package_of_one_tool_only():
    assert tool_package_of("fsbench.tools.fio.jobfile") == "fsbench.tools.fio"
    assert tool_package_of("fsbench.tools.mdtest") == "fsbench.tools.mdtest"
    assert tool_package_of("fsbench.tools") == tool_package_of("fsbench.tools.placement") == ""
    assert tool_package_of("fsbench.scenario.inputs") == ""


def test_no_module_imports_a_tool_package_from_outside_it():
    """What a tool knows stays in its package: the core reaches a tool only through the registry and the
    plug-in contract (fsbench.api), so a third-party tool can do all a built-in one does."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        mine = tool_package_of(module)
        for line, target in _imports(path):
            theirs = tool_package_of(target)
            if theirs and theirs != mine:
                wrong.append(f"{path.relative_to(REPO)}:{line}: {module} imports {target} (tool package {theirs})")
    assert not wrong, "\n".join(wrong)


def _graph() -> dict[str, set[str]]:
    """module -> the fsbench modules it imports (itself left out)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        graph[module] = {target for _line, target in _imports(path) if target != module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle as its modules in order, first repeated at the end ([] when there is none)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return []


def test_find_cycle_finds_one_and_only_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_import_graph_has_no_cycle():
    cycle = find_cycle(_graph())
    assert not cycle, "an import circle: " + " -> ".join(cycle)


def test_plug_ins_are_packages_of_their_own_and_registered_by_name():
    from fsbench.kinds import KINDS
    from fsbench.services import SERVICE_KINDS
    from fsbench.tools import TOOLS
    from fsbench.transport.registry import TRANSPORTS

    assert TOOLS.names() == ["fio", "juicefs-bench", "juicefs-objbench", "mdtest", "metabench", "nnbench", "vdbench"]
    assert KINDS.names() == ["cephfs", "device", "directory", "fuse", "hdfs", "jfs", "juicefs", "rbd", "rbd-image",
                             "rclone", "s3a", "s3fs"]
    assert SERVICE_KINDS.names() == ["ceph-lab", "command", "etcd", "hdfs", "mysql", "postgres", "redis", "s3"] and TRANSPORTS.names() == ["local", "ssh", "ssh-relay"]
    for tool in TOOLS:
        for attr in ("accepts", "metrics", "operations", "primary_metrics", "packages", "bring_your_own"):
            assert hasattr(tool, attr), f"{tool.name} does not declare {attr}"


def test_a_plug_in_lacking_part_of_its_protocol_is_refused_by_name_and_entry_point(monkeypatch):
    import pytest

    import fsbench.api.registry
    from fsbench.api.registry import PluginError, Registry
    from fsbench.api.tools import ToolAdapter

    class Half:
        name = "half"
        accepts = ("directory",)

        def build(self, case, test_dir, ctx=None):
            return None

    class EntryPoint:
        name, value = "half", "fsbench_half:PLUGIN"

        def load(self):
            return Half()

    monkeypatch.setattr(fsbench.api.registry, "_entry_points", lambda group: [EntryPoint()])
    registry: Registry = Registry("tool", "fsbench.tools", (), ToolAdapter)
    with pytest.raises(PluginError) as err:
        registry.names()
    message = str(err.value)
    assert message.startswith("the tool plug-in 'half' (entry point half = fsbench_half:PLUGIN in fsbench.tools) "
                              "lacks bring_your_own, metrics, operations, primary_metrics, packages, check_options, "
                              "estimate_seconds, parse_outputs, parse_file, version_argv")
    assert "fsbench.api.tools.ToolAdapter" in message


def _doc_layers() -> dict[str, str]:
    """{layer name: its text} from docs/architecture.md's layer table (continuation lines joined)."""
    text = (REPO / "docs" / "architecture.md").read_text()
    block = text.split("Folders are layers.", 1)[1].split("```", 2)[1]
    names = [n for n, _ in LAYERS]
    out: dict[str, str] = {}
    current = ""
    for line in block.splitlines():
        head = next((n for n in names if line.startswith(n + " ")), None)
        if head:
            current = head
        if current:
            out[current] = out.get(current, "") + " " + line
    return out


def test_architecture_md_names_the_same_layers_and_folders_as_this_test():
    """The doc's layer table is this test's LAYERS: same layers in the same order, each folder on its line."""
    doc = _doc_layers()
    assert list(doc) == [n for n, _ in reversed(LAYERS)], "docs/architecture.md lists the layers top first"
    for name, prefixes in LAYERS:
        for p in prefixes:
            if p == "fsbench" or p.startswith("fsbench.__") or p == "fsbench.cli":
                continue  # the package itself and its entry modules: cli.py is named as a file
            folder = p.removeprefix("fsbench.").replace(".", "/") + "/"
            assert folder in doc[name], f"{folder} ({name}) is not on the {name} line of docs/architecture.md"


def test_every_folder_of_the_package_belongs_to_a_named_layer():
    """A new folder must be placed in a layer on purpose: only top-level modules fall to the package's own."""
    loose = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        prefix = max((p for _, ps in LAYERS for p in ps if module == p or module.startswith(p + ".")), key=len)
        if prefix == "fsbench" and path.parent != PACKAGE:
            loose.append(module)
    assert not loose, f"modules in folders no layer names: {loose}; add the folder to LAYERS and the doc's table"
