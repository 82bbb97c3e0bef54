"""Secrets by reference, never copied: resolved from the environment or a file, masked everywhere.

A scenario names its secrets (`secrets: {db: {env: FSB_DB_PASSWORD}}`) and uses them as
`${secrets.db}`. In shell commands the placeholder becomes a reference to an environment variable
(`"$FSBENCH_SECRET_DB"`) that the transport passes beside the command, so the value is in no argv
(locally: the process environment; over SSH: a 0600 file read and removed by the wrapper). Every
text fsbench writes or prints goes through `redact`: known secret values and the password part of
any URL (`mysql://user:****@host`) are masked.

The set of known values is process-wide on purpose: masking must reach every path out, exception
messages included, and a secret resolved once stays secret for the rest of the process.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

MASK = "****"
#: scheme://user:PASSWORD@  (the password is everything up to the last @ before the host part)
_URL_PASSWORD = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'\"]*:)([^@\s'\"]+)(@)")
_KNOWN: set[str] = set()
ENV_PREFIX = "FSBENCH_SECRET_"
#: text files larger than this are left as they are (tool outputs of that size hold data, not commands)
REDACT_FILE_LIMIT = 64 * 2**20


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
            path = Path(self.file).expanduser()
            try:
                value = path.read_text().splitlines()[0] if path.read_text() else ""
            except (OSError, IndexError) as exc:
                raise LookupError(f"secret {self.name}: cannot read {path}: {exc}") from None
        remember(value)
        return value


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


def remember(value: str) -> None:
    """Mask this value from now on (values shorter than 3 characters would mask ordinary text)."""
    if value and len(value) >= 3:
        _KNOWN.add(value)


def redact(text: str) -> str:
    """text with every known secret and every URL password masked."""
    if not text:
        return text
    out = _URL_PASSWORD.sub(lambda m: m.group(1) + MASK + m.group(3), text)
    for value in sorted(_KNOWN, key=len, reverse=True):
        if value in out:
            out = out.replace(value, MASK)
    return out


def has_secrets() -> bool:
    """Whether any secret value is known (files then need scanning)."""
    return bool(_KNOWN)


def redact_file(path: Path) -> bool:
    """Mask secrets inside a text file in place; True when it changed."""
    try:
        if path.stat().st_size > REDACT_FILE_LIMIT:
            return False
        data = path.read_bytes()
    except OSError:
        return False
    if b"\0" in data[:8192]:
        return False
    text = data.decode("utf-8", errors="surrogateescape")
    masked = redact(text)
    if masked == text:
        return False
    path.write_bytes(masked.encode("utf-8", errors="surrogateescape"))
    return True


def redact_tree(folder: Path) -> int:
    """Mask secrets in every file below folder; the number of files changed."""
    if not folder.is_dir():
        return 0
    return sum(redact_file(p) for p in folder.rglob("*") if p.is_file())


def split_url_password(url: str) -> tuple[str, str]:
    """(url without its password, the password) for a URL with user:password@; (url, '') otherwise."""
    m = _URL_PASSWORD.search(url)
    if not m:
        return url, ""
    user_end = m.start(2) - 1  # the ':' before the password
    if m.group(1).endswith("://:"):  # no user (redis://:pw@host): drop the '@' as well
        return url[:user_end] + url[m.end(3):], m.group(2)
    return url[:user_end] + url[m.end(2):], m.group(2)
