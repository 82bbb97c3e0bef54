"""Values put into shell text inside the command's own quotes: escaped for those quotes, run by a real sh."""

from __future__ import annotations

import os
import subprocess
import textwrap

import pytest

from fsbench.core import shellquote
from fsbench.core.errors import ScenarioError
from fsbench.core.secrets import placeholder_env
from fsbench.core.shell import render
from fsbench.scenario.load import load_scenario_text

NASTY = ["plain", "a b", "$(touch {m})", "`touch {m}`", "it's", 'say "hi"', "back\\slash", "$HOME",
         "line\nbreak", "' ; touch {m} ; '", '" ; touch {m} ; "', "", "*"]


def _sh(script: str, env: dict | None = None) -> str:
    return subprocess.run(["/bin/sh", "-e", "-c", script], capture_output=True, text=True, check=True,
                          env={**os.environ, **(env or {})}).stdout


def _scenario(setup: str, variables: str = "p: x") -> str:
    return textwrap.dedent("""\
        name: q
        variables:
          {variables}
        targets:
          t: {{path: /srv/bench/t, setup: [{setup}]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 64k}}}}
        """).format(variables=variables, setup=setup)


def test_each_reference_knows_the_quotes_it_stands_in():
    text = """a ${p} "b ${q} $(c ${r} "${s}")" 'd ${t}' `e ${u}` "\\"${v}" ( f ${w} ) # g ${x}"""
    found = {text[i:text.index("}", i) + 1]: where for i, where in shellquote.reference_contexts(text).items()}
    assert found == {"${p}": "", "${q}": '"', "${r}": "", "${s}": '"', "${t}": "'", "${u}": "`", "${v}": '"',
                     "${w}": "", "${x}": "#"}


@pytest.mark.parametrize("value", NASTY)
@pytest.mark.parametrize(("template", "before", "after"), [
    ("printf %s ${target.path}", "", ""),
    ('printf %s "<${target.path}>"', "<", ">"),
    ("printf %s '<${target.path}>'", "<", ">"),
    ('printf %s "$(printf %s ${target.path})"', "", ""),
])
def test_a_run_time_value_reaches_the_command_as_data_in_every_context(tmp_path, value, template, before, after):
    value = value.format(m=tmp_path / "PWNED")
    if not value and template.startswith('printf %s "$('):
        value = "-"  # printf with no argument at all prints nothing either way; keep the check meaningful
    assert _sh(render(template, {"target.path": value})) == before + value + after
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("value", NASTY)
@pytest.mark.parametrize(("setup", "before", "after"), [
    ('"printf %s ${p}"', "", ""),
    ("'printf %s \"<${p}>\"'", "<", ">"),
    ("\"printf %s '<${p}>'\"", "<", ">"),
])
def test_a_set_value_in_the_commands_quotes_is_data(tmp_path, value, setup, before, after):
    value = value.format(m=tmp_path / "PWNED")
    sc = load_scenario_text(_scenario(setup), "q.yaml", overrides={"p": value})
    (command,) = sc.targets["t"].setup
    assert _sh(render(command, {})) == before + value + after
    assert not (tmp_path / "PWNED").exists()


def test_a_value_holding_a_run_time_placeholder_keeps_it_for_the_run_inside_quotes(tmp_path):
    sc = load_scenario_text(_scenario("'printf %s \"<${p}>\"'"), "q.yaml", overrides={"p": "${target.path}/a\"b"})
    (command,) = sc.targets["t"].setup
    assert command == 'printf %s "<${target.path}/a\\"b>"'
    assert _sh(render(command, {"target.path": "/x $(id)"})) == '</x $(id)/a"b>'


@pytest.mark.parametrize("template", ['printf %s ${secrets.k}', 'printf %s "<${secrets.k}>"',
                                      "printf %s '<${secrets.k}>'",
                                      'x=`printf %s ${secrets.k}`; printf %s "$x"'])
def test_a_secret_is_one_word_from_the_environment_in_every_context(template):
    secret = "s3 cr$t'\"x"
    out = _sh(render(template, {"secrets.k": secret}), env={placeholder_env("secrets.k"): secret})
    assert out.strip("<>") == secret and secret not in render(template, {"secrets.k": secret})


@pytest.mark.parametrize(("setup", "said"), [
    ('"echo `ls ${p}`"', "${p} in backquotes"),
    ('"true # made from ${p}"', "${p} in a comment"),
    ('"echo `ls ${target.path}`"', "${target.path} in backquotes"),
])
def test_backquotes_and_comments_are_refused_with_file_and_line(setup, said):
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(_scenario(setup), "q.yaml")
    text = str(info.value)
    assert f"q.yaml:5: targets.t.setup[0]: {said}" in text and "write ${var} without quotes: fsbench quotes it" in text
