"""Where a secret comes from (an environment variable or a file) and how it travels to a command: by name."""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path

from fsbench.core.secret_known import remember

ENV_PREFIX = "FSBENCH_SECRET_"


@dataclass(frozen=True)
class SecretRef:
    """Where one secret comes from: an environment variable or a file (its first line)."""

    name: str
    env: str = ""
    file: str = ""

    def resolve(self) -> str:
        """The value; raises LookupError saying where it was looked for."""
        if self.env:
            value = os.environ.get(self.env)
            if value is None:
                raise LookupError(f"secret {self.name}: the environment variable {self.env} is not set")
        else:
            value = _first_line(self.name, Path(self.file).expanduser())
        remember(value)
        return value


#: a secret is a line: its file is read this far at most (a device such as /dev/zero is refused)
SECRET_FILE_BYTES = 64 * 2**10


def _first_line(name: str, path: Path) -> str:
    """The first line of a small regular file; LookupError saying why not."""
    from fsbench.config.files import read_bytes_bounded

    try:  # a FIFO is refused without waiting for a writer, /dev/zero without reading it
        data = read_bytes_bounded(path, SECRET_FILE_BYTES)
    except OSError as exc:
        wrong_kind = exc.errno in (errno.EINVAL, errno.EISDIR)
        why = f"is {exc.strerror}" if wrong_kind else f"cannot be read: {exc.strerror or exc}"
        raise LookupError(f"secret {name}: {path} {why}: put the secret on the first line of a regular file "
                          f"(the scenario's secrets.{name}.file)") from None
    line, newline, _ = data.partition(b"\n")
    if not newline and len(data) > SECRET_FILE_BYTES:
        raise LookupError(f"secret {name}: the first line of {path} is longer than {SECRET_FILE_BYTES // 1024} KiB; "
                          "a secret is one line")
    return line.rstrip(b"\r").decode("utf-8", errors="replace")


def env_name(secret: str) -> str:
    """The environment variable a secret travels in: FSBENCH_SECRET_<NAME>."""
    return ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", secret).upper()


#: run-time placeholders whose last part is one of these are secrets too (a service's generated keys)
SECRET_WORDS = ("access_key", "secret_key", "password", "token")


def is_secret_placeholder(key: str) -> bool:
    """Whether a run-time placeholder (`secrets.db`, `services.s3.secret_key`) holds a secret."""
    return key.startswith("secrets.") or key.rsplit(".", 1)[-1] in SECRET_WORDS


def placeholder_env(key: str) -> str:
    """The environment variable a secret placeholder's value travels in."""
    return env_name(key.split(".", 1)[1]) if key.startswith("secrets.") else env_name(key)


def secret_env(values: dict[str, str]) -> dict[str, str]:
    """The environment that carries every secret placeholder of values (shell text refers to it)."""
    return {placeholder_env(k): str(v) for k, v in values.items() if is_secret_placeholder(k)}


_KEY_SEPARATORS = re.compile(r"[.\-\s]")


def is_secret_key(key: object) -> bool:
    """Whether a key names a secret: it ends with one of SECRET_WORDS (`.` and `-` read as `_`)."""
    word = _KEY_SEPARATORS.sub("_", str(key).lower())
    return any(word == w or word.endswith("_" + w) for w in SECRET_WORDS)
