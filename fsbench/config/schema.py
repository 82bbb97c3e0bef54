"""A small declarative checker for scenario data: types, allowed values, unknown keys, with line numbers.

The scenario's model and every plug-in's settings declare their keys with these names (`s.Struct`,
`s.option`...): this module is that contract; the checkers live by concern in shapes (mappings, lists,
choices), values (single values) and declared (dataclass fields that are keys).
"""

from __future__ import annotations

from fsbench.config.declared import Part, build, doc_of, option, part, struct_of
from fsbench.config.shapes import (
    MAX_NAME,
    Check,
    Flag,
    Key,
    PluginKeys,
    Struct,
    choices_of,
    is_shell,
    list_of,
    mapping_of,
    one_of,
    shell,
)
from fsbench.config.values import (
    address,
    anything,
    boolean,
    command,
    command_line,
    duration,
    integer,
    line_text,
    matches,
    name,
    pause,
    scalar,
    scalar_or_list,
    size,
    string,
)
from fsbench.core.errors import Issue

__all__ = [
    "MAX_NAME", "Check", "Flag", "Issue", "Key", "Part", "PluginKeys", "Struct", "address", "anything", "boolean",
    "build", "choices_of", "command", "command_line", "doc_of", "duration", "integer", "is_shell", "line_text",
    "list_of", "mapping_of", "matches", "name", "one_of", "option", "part", "pause", "scalar", "scalar_or_list",
    "shell", "size", "string", "struct_of",
]
