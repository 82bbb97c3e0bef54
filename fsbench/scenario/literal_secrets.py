"""Secrets written into a scenario itself: masked from the moment it is loaded, with a warning.

A key that names a secret (`secret_key`, `access_key`, `password`, `token`, also `fs.s3a.secret.key`)
under a target or a service, with a literal value rather than `${secrets.NAME}`, and the password
of any URL anywhere (a meta URL with `--set dbpw=...` in it) or of a parameter named like a secret
(`?password=...` in a postgres URL), are remembered as secrets before
anything is written: scenario.yaml (its `variables:` included), cases.csv, the report and every
message then show `****` in their place.
"""

from __future__ import annotations

from fsbench.config.yamllines import LineMap
from fsbench.core.secrets import is_secret_key, remember_written, secret_param_spans, url_password_spans


def remember_literal_secrets(data: dict, lm: LineMap) -> list[str]:
    """Remember every literal secret of loaded scenario data; a warning for each secret key."""
    warnings: list[str] = []
    for path, text in _texts(data, ()):
        if path[:1] == ("variables",):
            continue  # the raw declarations: their values are checked where they are used
        spans = [(s, e) for _, s, e in url_password_spans(text)] + secret_param_spans(text)
        for start, end in spans:
            if "${" not in text[start:end]:
                remember_written(text[start:end])
        if path[:1] in (("targets",), ("services",)) and is_secret_key(path[-1]) and text and "${" not in text:
            remember_written(text)
            warnings.append(str(lm.issue(path, "a secret is written in the scenario (here or through a variable): "
                                               "it is masked in everything fsbench writes, but a reference keeps "
                                               "it out of the file",
                                         "secrets: {NAME: {env: VARIABLE}} and ${secrets.NAME} here")))
    return warnings


def _texts(value: object, path: tuple):
    """(key path, text) of every text in value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _texts(v, path + (i,))
    elif isinstance(value, str):
        yield path, value
