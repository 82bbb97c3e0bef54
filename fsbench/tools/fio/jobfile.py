"""fio job files: read (ini with bare flags), apply overrides, render."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class JobFile:
    """Ordered sections of `key=value` or bare `flag` lines; [global] first when present."""

    sections: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)

    def section(self, name: str) -> dict[str, str | None]:
        """The named section, created at the end (global at the front) when missing."""
        for n, opts in self.sections:
            if n == name:
                return opts
        opts: dict[str, str | None] = {}
        if name == "global":
            self.sections.insert(0, (name, opts))
        else:
            self.sections.append((name, opts))
        return opts

    def job_names(self) -> list[str]:
        """Names of the job sections (not global)."""
        return [n for n, _ in self.sections if n != "global"]

    def override(self, options: dict[str, object]) -> None:
        """Set options in [global] and drop them from job sections, so the override wins everywhere."""
        glob = self.section("global")
        for key, value in options.items():
            for name, opts in self.sections:
                if name != "global":
                    opts.pop(key, None)
            set_option(glob, key, value)

    def render(self) -> str:
        """The job file text fio reads."""
        lines: list[str] = []
        for name, opts in self.sections:
            lines.append(f"[{name}]")
            lines.extend(k if v is None else f"{k}={v}" for k, v in opts.items())
            lines.append("")
        return "\n".join(lines)


def set_option(opts: dict[str, str | None], key: str, value: object) -> None:
    """YAML value -> fio text: true is a bare flag, false removes the option."""
    if value is True:
        opts[key] = None
    elif value is False or value is None:
        opts.pop(key, None)
    else:
        opts[key] = str(value)


def parse_jobfile(text: str) -> JobFile:
    """Parse a job file; comments (#, ;) and blank lines are dropped; options before any section go to global."""
    jf = JobFile()
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = jf.section(line[1:-1].strip())
            continue
        if current is None:
            current = jf.section("global")
        key, sep, value = line.partition("=")
        current[key.strip()] = value.strip() if sep else None
    return jf
