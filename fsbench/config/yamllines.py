"""Load YAML into plain Python data while remembering the line of every key and item."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from fsbench.config.files import read_text_bounded
from fsbench.core.errors import Issue, ScenarioError

# the C loader is several times faster when libyaml is present
_Loader: type = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader

Path_ = tuple  # a key path: ("workloads", "big-write", "options", "bs") or with list indexes


@dataclass
class LineMap:
    """Line numbers (1-based) by key path, for error messages."""

    file: str
    lines: dict[tuple, int] = field(default_factory=dict)

    def line(self, path: tuple) -> int | None:
        """The line of path, or of its nearest ancestor that has one."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.lines.get((), None)

    def issue(self, path: tuple, message: str, hint: str = "") -> Issue:
        """An Issue located at path."""
        return Issue(self.file, self.line(path), dotted(path), message, hint)


def dotted(path: tuple) -> str:
    """('workloads', 'w', 'sweep', 'product', 'numjobs', 2) -> 'workloads.w.sweep.product.numjobs[2]'."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


#: a scenario or inventory is a page of YAML: bigger files, or anchors that expand into more values
#: or more text than this (an "alias bomb": 800 bytes can expand to billions), are refused before
#: they cost memory; MAX_CHARS also bounds what variables expand to (fsbench.scenario.variables)
MAX_BYTES = 2 * 2**20
MAX_VALUES = 200_000
MAX_CHARS = 8 * 2**20


MAX_DEPTH = 64
_OPEN = (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken, yaml.BlockSequenceStartToken,
         yaml.BlockMappingStartToken)
_CLOSE = (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken, yaml.BlockEndToken)


def _check_depth(text: str, file: str) -> None:
    """Refuse deep nesting before composing: libyaml's composer recurses and crashes the process on it."""
    depth = 0
    try:
        for token in yaml.scan(text, Loader=_Loader):
            if isinstance(token, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _too_deep(file, token.start_mark.line + 1)
            elif isinstance(token, _CLOSE):
                depth -= 1
    except yaml.YAMLError as exc:
        # the libyaml in PyYAML 6.0.4's wheels has a nesting limit of its own, met while its scanner
        # looks ahead, before the token that goes past MAX_DEPTH comes out: the same error, said once
        if "nesting depth" not in str(exc):
            raise
        mark = exc.problem_mark if isinstance(exc, yaml.MarkedYAMLError) else None
        raise _too_deep(file, mark.line + 1 if mark else None) from None


def _too_deep(file: str, line: int | None) -> ScenarioError:
    return ScenarioError([Issue(file, line, "", f"the YAML is nested more than {MAX_DEPTH} levels deep",
                                "a scenario needs a few levels of nesting, not hundreds")])


class _TooBig(Exception):
    """The document expands to more values than MAX_VALUES, or more text than MAX_CHARS."""


class YamlSyntaxError(ScenarioError):
    """The text is not YAML (as opposed to YAML that is too big or too deep)."""


@dataclass
class _Budget:
    values: int = MAX_VALUES
    chars: int = MAX_CHARS


def load_yaml(text: str, file: str, *, max_bytes: int = MAX_BYTES) -> tuple[object, LineMap]:
    """Parse text; YAML syntax errors, duplicate keys and oversized documents become a ScenarioError."""
    lm = LineMap(file)
    if len(text) > max_bytes:
        raise ScenarioError([Issue(file, None, "", f"the file is {len(text) / 2**20:.1f} MiB; a scenario or "
                                   f"inventory may be at most {max_bytes / 2**20:g} MiB",
                                   "is this the right file? keep data (job files, outputs) in files of their own")])
    try:
        _check_depth(text, file)
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        marked = exc if isinstance(exc, yaml.MarkedYAMLError) else None
        line = marked.problem_mark.line + 1 if marked is not None and marked.problem_mark else None
        problem = (marked.problem if marked is not None else None) or str(exc)
        raise YamlSyntaxError([Issue(file, line, "", f"YAML syntax error: {problem}",
                                     "check indentation and quoting around this line")]) from None
    if node is None:
        return {}, lm
    loader = _Loader("")
    issues: list[Issue] = []
    budget = _Budget()
    try:
        data = _build(node, (), lm, loader, issues, budget)
    except _TooBig:
        what = (f"more than {MAX_VALUES:,} values" if budget.values < 0
                else f"more than {MAX_CHARS // 2**20} MiB of text")
        raise ScenarioError([Issue(file, None, "", f"the YAML expands to {what} "
                                   "(anchors and aliases nested into each other, or a big value repeated?)",
                                   "write the values out, or use fewer aliases")]) from None
    except RecursionError:
        raise ScenarioError([Issue(file, None, "", "the YAML is nested too deeply",
                                   "a scenario needs a few levels of nesting, not hundreds")]) from None
    if issues:
        raise ScenarioError(issues)
    return data, lm


def load_data(path: str | os.PathLike) -> Any:
    """Plain data of a YAML file fsbench wrote itself (a run's scenario.yaml), with the same bounds as
    a scenario: a hand-edited or planted file cannot exhaust memory or the stack (ScenarioError)."""
    try:
        text = read_text_bounded(path, MAX_CHARS)
    except OSError as exc:
        raise ScenarioError([Issue(str(path), None, "", f"cannot read it: {exc.strerror}")]) from None
    return load_yaml(text, str(path), max_bytes=MAX_CHARS)[0]


def _build(node: yaml.Node, path: tuple, lm: LineMap, loader, issues: list[Issue], budget: _Budget) -> object:
    budget.values -= 1
    if budget.values < 0:
        raise _TooBig()
    lm.lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict = {}
        merged: dict = {}
        for knode, vnode in node.value:
            if knode.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor`: defaults that explicit keys override
                sources = vnode.value if isinstance(vnode, yaml.SequenceNode) else [vnode]
                for src in sources:
                    value = _build(src, path, lm, loader, issues, budget)
                    if isinstance(value, dict):
                        merged.update({k: v for k, v in value.items() if k not in merged})
                    else:
                        issues.append(Issue(lm.file, vnode.start_mark.line + 1, dotted(path),
                                            "`<<` must merge a mapping"))
                continue
            try:
                key = _scalar(knode, loader, budget) if isinstance(knode, yaml.ScalarNode) else None
            except yaml.YAMLError as exc:
                issues.append(Issue(lm.file, knode.start_mark.line + 1, dotted(path), f"bad key: {exc}"))
                continue
            if key is None or isinstance(key, (dict, list)):
                issues.append(Issue(lm.file, knode.start_mark.line + 1, dotted(path), "a key must be a plain value"))
                continue
            key = str(key) if not isinstance(key, str) else key
            if key in out:
                issues.append(Issue(lm.file, knode.start_mark.line + 1, dotted(path + (key,)),
                                    f"duplicate key {key!r} (first on line {lm.lines[path + (key,)]})",
                                    "remove one of them"))
                continue
            lm.lines[path + (key,)] = knode.start_mark.line + 1
            out[key] = _build(vnode, path + (key,), lm, loader, issues, budget)
        return {**{k: v for k, v in merged.items() if k not in out}, **out}
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, path + (i,), lm, loader, issues, budget) for i, item in enumerate(node.value)]
    try:
        return _scalar(node, loader, budget)
    except yaml.YAMLError as exc:
        issues.append(Issue(lm.file, node.start_mark.line + 1, dotted(path), f"cannot read this value: {exc}"))
        return None


def _scalar(node: yaml.Node, loader, budget: _Budget) -> object:
    """A scalar's value, its text counted: an alias of a big value costs its size each time it is used."""
    value = loader.construct_object(node, deep=True)
    budget.chars -= len(value) if isinstance(value, (str, bytes)) else 8
    if budget.chars < 0:
        raise _TooBig()
    return value
