"""What the metadata-engine kinds (redis, mysql, postgres, etcd) share: the `existing:` form, the generated
password, the server's URL as targets use it, and a stop that signals only the service's own process.

A managed engine gets a password made up per run (`${service.password}`, a secret: masked everywhere,
passed to commands in the environment, never in argv); its URL, `${services.NAME.url}`, carries it
(`redis://:PASSWORD@HOST:PORT`), and JuiceFS's kind moves it to META_PASSWORD before anything runs.
An existing engine (`existing: {url: ..., secret: NAME}`) is only probed: fsbench never starts, stops,
signals or cleans it; its password comes from the scenario's `secrets.NAME` (environment or file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fsbench.config import schema as s
from fsbench.config.schema import option

#: scheme://[user@](host:port) or scheme://[user@]host:port, an optional /path after it
_URL = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:(?P<user>[^:@/()]+)@)?"
                  r"(?P<open>\(?)(?P<host>[^:@/()]+):(?P<port>[0-9]{1,5})(?P<close>\)?)(?P<rest>/[^\s]*)?$")
#: the length of a generated password: letters and digits, safe in URLs, SQL quotes and config files
PASSWORD_LENGTH = 24


@dataclass(frozen=True)
class Existing:
    """A server that runs already: its URL (no password in it) and the scenario secret holding its password."""

    url: str
    secret: str = ""

    def parts(self) -> dict[str, str]:
        """scheme, user, host, port and the rest of the URL (a database, a prefix)."""
        m = _URL.match(self.url)
        if m is None:  # the section's check refused it already
            raise ValueError(f"not a server URL: {self.url!r}")
        return {k: m.group(k) or "" for k in ("scheme", "user", "host", "port", "rest")}

    def password(self) -> str:
        """The password's placeholder (${secrets.NAME}), or '' without one."""
        return f"${{secrets.{self.secret}}}" if self.secret else ""

    def with_password(self) -> str:
        """The URL with the password's placeholder after the user (JuiceFS takes it out again)."""
        if not self.secret:
            return self.url
        m = _URL.match(self.url)
        assert m is not None
        head = f"{m.group('scheme')}://{m.group('user') or ''}:{self.password()}@"
        return head + self.url[m.start("open"):]


def _url_rule(scheme: str):
    """The check of an existing server's URL: the kind's scheme, a host:port, and no password in it."""

    def run(value: object, path: tuple, lm, issues: list) -> object:
        text = s.line_text(value, path, lm, issues)
        if text is None:
            return None
        if re.search(r"://[^/@()]*:[^/@]*@", str(text)):
            issues.append(lm.issue(path, "the URL holds a password: it would be written into the run directory",
                                   "put the password in the scenario's `secrets:` and name it in `secret:`"))
            return None
        m = _URL.match(str(text))
        if m is None or m.group("scheme") != scheme:
            issues.append(lm.issue(path, f"{text!r} is not a {scheme}:// URL with a host and a port",
                                   f"e.g. {scheme}://HOST:PORT (the password goes in `secret:`)"))
            return None
        return text

    return run


def existing_key(scheme: str, example: str) -> s.Key:
    """The `existing:` key of an engine kind's section."""
    return s.Key(s.Struct({
        "url": s.Key(_url_rule(scheme), required=True,
                     doc=f"the server, without a password, e.g. {example}"),
        "secret": s.Key(s.name, default="", doc="the scenario secret (secrets: NAME: {env: ...} or {file: ...}) "
                                                "holding its password; none: no password"),
    }, what="existing server"), doc="a server that runs already: fsbench only probes it, never starts, stops "
                                    "or cleans it")


def existing_of(checked: dict | None) -> Existing | None:
    """The typed `existing:` of a checked section."""
    found = (checked or {}).get("existing")
    return _existing(found) if found else None


def _existing(found: dict) -> Existing | None:
    """An Existing from the checked `existing:` mapping (None when its URL was refused)."""
    return Existing(found["url"], found.get("secret") or "") if found.get("url") else None


def existing_option(scheme: str, example: str) -> Existing | None:
    """The `existing:` field of an engine kind's settings: a server that runs already, or None."""
    key = existing_key(scheme, example)
    return option(key.check, None, convert=_existing, doc=key.text())


def stop_own(pidfile: str, wait_s: int = 20) -> str:
    """Shell text: TERM the pid in pidfile only if that process works in the service's folder, wait for it.

    A pid file outlives its process; after a reboot its number may be anyone's, so the working folder is
    the proof (every engine here runs in ${service.dir} or below it)."""
    return (f'pid=$(cat "${{service.dir}}/{pidfile}" 2>/dev/null) || exit 0; '
            'case "$(readlink /proc/$pid/cwd 2>/dev/null)" in '
            '"${service.dir}"|"${service.dir}"/*) ;; *) exit 0;; esac; '
            # a stopped server (SIGSTOP) takes its TERM only once continued
            f'kill "$pid" 2>/dev/null || exit 0; kill -s CONT "$pid" 2>/dev/null; i=0; '
            f'while kill -0 "$pid" 2>/dev/null && [ $i -lt {wait_s * 5} ]; do sleep 0.2; i=$((i + 1)); done')
