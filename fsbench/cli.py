"""The command line: a thin shell over the library; its errors meet the user in cli_errors.ErrorBoundary."""

from __future__ import annotations

import shlex
import signal
import sys

import click

from fsbench.cli_errors import ErrorBoundary, cannot_write, os_error, warn
from fsbench.cli_plugins import DeployCommand, IngestCommand
from fsbench.core.cancel import Cancel
from fsbench.core.version import __version__

_set_option = click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
                           help="Override a scenario variable (repeatable), e.g. --set scale=full.")
_inventory_option = click.option("--inventory", type=click.Path(dir_okay=False),
                                 help="Host inventory file (overrides the scenario's `inventory:`).")


@click.group(cls=ErrorBoundary, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fsbench")
def main() -> None:
    """fsbench: storage benchmark campaigns (fio, mdtest, vdbench) from one YAML scenario."""


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@_set_option
@_inventory_option
def validate(scenario: str, sets: tuple[str, ...], inventory: str | None) -> None:
    """Check a scenario file fully (exit 3 when invalid)."""
    from fsbench.scenario.load import load_scenario

    sc = load_scenario(scenario, list(sets), inventory)
    warn(sc.warnings)
    click.echo(f"{scenario}: ok ({len(sc.targets)} targets, {len(sc.workloads)} workloads)")


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@_set_option
@_inventory_option
@click.option("--show", is_flag=True, help="Also print each case's exact commands and job / parameter files, and "
                                           "its target's setup and teardown commands.")
@click.option("--case", "only", metavar="NUMBER_OR_ID", multiple=True,
              help="With --show: only these cases, each a case number or a whole case id; repeatable.")
def plan(scenario: str, sets: tuple[str, ...], inventory: str | None, show: bool, only: tuple[str, ...]) -> None:
    """Print every case, the hosts it runs on and an estimated duration (secrets masked)."""
    from fsbench.core.secrets import redact
    from fsbench.scenario import load_scenario, plan_cases
    from fsbench.scenario.plan import order_text

    sc = load_scenario(scenario, list(sets), inventory)  # not fsbench.campaign's: it imports the runner
    cases = plan_cases(sc)
    warn(sc.warnings)
    if show:
        from fsbench.run.plan_show import describe_case
        from fsbench.run.plan_targets import describe_target
        from fsbench.scenario.select import CaseNotFound, select_cases

        try:
            chosen = select_cases(cases, only)
        except CaseNotFound as exc:
            raise click.BadParameter(str(exc), param_hint="--case") from None
        for name in dict.fromkeys(c.target for c in chosen):
            click.echo(describe_target(sc, name))  # both mask secrets
        for c in chosen:
            click.echo(describe_case(sc, c, tuple(cases)))
    width = max((len(c.case_id) for c in cases), default=10)
    hw = max((len(",".join(c.hosts)) for c in cases), default=5)
    click.echo(f"{'#':>4}  {'case':<{width}}  {'hosts':<{hw}} {'estimate':>9}")
    for c in cases:  # a case id holds the values of its sweep, which a --set may have given
        click.echo(redact(f"{c.index:>4}  {c.case_id:<{width}}  {','.join(c.hosts):<{hw}} {c.estimate_s:>8.0f}s"))
    total = sum(c.estimate_s for c in cases)
    click.echo(f"{len(cases)} cases on {len(sc.targets)} targets; estimated {total / 60:.1f} min "
               f"(baseline: {sc.baseline}){order_text(sc)}")
    from fsbench.run.plan_range import adaptive_range

    if adaptive_range(sc, cases):
        click.echo(adaptive_range(sc, cases))


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", type=click.Path(file_okay=False), help="Root folder for run directories.")
@click.option("--resume", type=click.Path(file_okay=False), help="Rerun only failed or missing cases of RUN_DIR.")
@click.option("--progress", type=click.Choice(["auto", "plain", "none"]), default="auto")
@click.option("--no-report", is_flag=True, help="Skip report.html (build it later with `fsbench report`).")
@_set_option
@_inventory_option
def run(scenario: str, output: str | None, resume: str | None, progress: str, no_report: bool,
        sets: tuple[str, ...], inventory: str | None) -> None:
    """Run a scenario; prints the run directory (exit 1 if a case failed, 130 if interrupted)."""
    from fsbench.campaign import run_scenario
    from fsbench.campaign.progress import Progress
    from fsbench.core import warmup

    cancel = Cancel()

    def stop(signum, frame):  # noqa: ANN001
        if cancel.is_set():  # a second Ctrl-C: the user really wants out
            raise KeyboardInterrupt
        click.echo("\nstopping: the running tool is being stopped; finished cases are kept "
                   "(Ctrl-C again to abort at once)", err=True)
        cancel.set()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        outcome = run_scenario(scenario, sets=list(sets), output_root=output, resume=resume,
                               listener=Progress(mode=progress), cancel=cancel, report=not no_report,
                               inventory=inventory, warm_up=lambda: warmup.start(report=not no_report))
    except KeyboardInterrupt:  # Ctrl-C twice before a run directory existed
        click.echo("interrupted", err=True)
        sys.exit(130)
    click.echo(str(outcome.run_dir))
    if not no_report and (outcome.run_dir / "report.html").exists():
        click.echo(str(outcome.run_dir / "report.html"))
    # quoted, so that the command pastes into a shell whatever the paths hold (a space, a quote)
    again = f"fsbench run {shlex.quote(scenario)} --resume {shlex.quote(str(outcome.run_dir))}"
    if outcome.interrupted:
        click.echo(f"interrupted: resume with  {again}", err=True)
    if outcome.out_of_space:
        click.echo(f"the disk holding {outcome.run_dir} is full: the finished cases are kept; free some space, "
                   f"then resume with  {again}", err=True)
    sys.exit(outcome.exit_code)


@main.command(cls=DeployCommand)
@click.argument("scenario", type=click.Path(dir_okay=False))
@_set_option
@_inventory_option
@click.option("--install", is_flag=True, help="Allow the hosts' package managers (apt-get, dnf, zypper).")
@click.pass_context
def deploy(ctx: click.Context, scenario: str, sets: tuple[str, ...], inventory: str | None, install: bool,
           **tool_flags: str | None) -> None:
    """Put the tools the scenario needs on its hosts (upload, build or package manager); exit 4 if some stay missing."""
    from fsbench.campaign import deploy_tools

    declared = ctx.command.tool_flags if isinstance(ctx.command, DeployCommand) else {}
    overrides: dict[str, object] = {declared[k].override: v for k, v in tool_flags.items() if v}
    if install:
        overrides["install"] = True
    rows = deploy_tools(scenario, list(sets), inventory, overrides)
    click.echo(f"{'host':<16} {'tool':<14} {'before':<30} {'after':<30} action")
    for r in rows:
        click.echo(f"{r.host:<16} {r.tool:<14} {r.before[:30]:<30} {r.after[:30]:<30} {r.action}")
    sys.exit(0 if all(r.ok for r in rows) else 4)


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), help="Where to write the HTML.")
@click.option("--baseline", help="Target to compare against (default: the scenario's baseline).")
@click.option("--markdown", is_flag=True, help="Also write report.md next to the HTML (for wikis and pull requests).")
@click.option("--templates", type=click.Path(), help="A folder of your own report templates (blocks of "
              "report.html.j2: docs/report.md, Templates); default: fsbench's (a run's own report.templates is "
              "not used: the run directory may come from someone else).")
@click.option("--pdf", is_flag=True, help="Also write report.pdf next to the HTML (printed by the local Chromium).")
def report(run_dir: str, output: str | None, baseline: str | None, markdown: bool, templates: str | None,
           pdf: bool) -> None:
    """(Re)build report.html and summary.md (with --markdown report.md, with --pdf report.pdf) from a run directory."""
    from fsbench.campaign import open_run
    from fsbench.report import write_report

    try:
        open_run(run_dir)
        path = write_report(run_dir, output=output, baseline=baseline, templates=templates,
                            warn=lambda message: warn([message]))
        if pdf:
            from fsbench.report.pdf import write_pdf

            printed = write_pdf(path)
        if markdown:
            from fsbench.report.markdown import write_markdown_report

            md = write_markdown_report(run_dir, output=path.with_suffix(".md") if output else None,
                                       baseline=baseline)
    except OSError as exc:
        os_error(exc, output)
    click.echo(str(path))
    if markdown:
        click.echo(str(md))
    if pdf:
        click.echo(str(printed))


@main.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("-t", "--tolerance", "tolerances", multiple=True, metavar="METRIC:PCT",
              help="Tolerance band, repeatable: bandwidth:5%, clat_*:10%, *:3% (default *:5%).")
@click.option("--metrics", "--metric", "metrics", multiple=True, metavar="NAME",
              help="Metrics to compare, repeatable; patterns such as clat_* allowed; `all` for every metric and "
                   "statistic. Default: each tool's primary metrics (fio: bandwidth, iops, clat_mean, clat_p99), "
                   "value or mean.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="False-discovery rate over a run's tests (Benjamini-Hochberg on Welch's "
                                      "t-test, 3+ repetitions on both sides).")
@click.option("--history", "as_history", is_flag=True,
              help="Read 3+ runs as one history, oldest first: per measurement the run its level changed at.")
@click.option("--fail-untested", "fail_untested", is_flag=True,
              help="Let better / worse verdicts without a test (fewer than 3 repetitions) fail --fail-on too.")
@click.option("--format", "fmt", type=click.Choice(["md", "html"]),
              help="Output format (default: html when -o ends in .html, else md).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), help="Write to FILE, not stdout.")
@click.option("--fail-on", "fail_on", multiple=True, metavar="VERDICT",
              help="Exit 1 when a measurement has this verdict, repeatable: worse, failed, not-comparable, "
                   "missing, new, better, same.")
def compare(runs: tuple[str, ...], tolerances: tuple[str, ...], metrics: tuple[str, ...], alpha: float,
            as_history: bool, fail_untested: bool, fmt: str | None, output: str | None,
            fail_on: tuple[str, ...]) -> None:
    """Compare runs with the first (the reference), case by case: better, worse, same, not comparable...

    Cases are matched by what they ran (target, workload, parameters, options), not by their ids. A
    measurement is better or worse only when outside its band, beyond the reference's settings.stats floors
    (10 % of the larger value, 20 µs for times) and significant with the false-discovery rate held at
    --alpha over the run's tests. Exit 1 when --fail-on names a verdict that some measurement has, 2 on bad
    input.
    """
    from pathlib import Path

    from fsbench.compare import VERDICTS, compare_runs, exit_code, to_html, to_markdown

    if len(runs) < 2:
        raise click.UsageError("give at least two run directories: the reference first, then the runs to compare")
    wanted = [v.replace("-", " ") for v in fail_on]
    unknown = [v for v in wanted if v not in VERDICTS]
    if unknown:
        raise click.BadParameter(f"{', '.join(unknown)}; choose from "
                                 f"{', '.join(v.replace(' ', '-') for v in VERDICTS)}", param_hint="--fail-on")
    if as_history:
        from fsbench.compare.history import report as history_report

        text, found = history_report(runs, list(metrics) or None, alpha)
        click.echo(text, nl=False)
        sys.exit(1 if set(wanted) & found else 0)
    result = compare_runs(*runs, tolerances=list(tolerances), alpha=alpha, metrics=list(metrics) or None)
    html = (fmt or ("html" if output and output.lower().endswith((".html", ".htm")) else "md")) == "html"
    text = to_html(result) if html else to_markdown(result)
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            cannot_write(output, exc)
        click.echo(output)
        for run_name, counts in result.summary.items():
            click.echo(f"{run_name}: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n), err=True)
    else:
        click.echo(text, nl=False)
    for run_name, t in result.tests.items():  # a gate that passes for want of a test says so
        if wanted and not fail_untested and t.get("untested_changes"):
            click.echo(f"{run_name}: {t['untested_changes']} untested changes not gated (fewer than 3 "
                       "repetitions; --fail-untested gates them)", err=True)
    sys.exit(exit_code(result, wanted, fail_untested) if wanted else 0)


@main.command(cls=IngestCommand)
@click.argument("tool")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), help="OUT.csv or OUT.parquet.")
@click.option("--run-dir", "run_dir", type=click.Path(file_okay=False),
              help="Also write a run directory (each file a case) for `fsbench report`.")
@click.option("--target", help="Target name of every file in --run-dir (default: the file's parent folder).")
@click.option("--report/--no-report", "with_report", default=True, help="Render report.html in --run-dir.")
def ingest(tool: str, files: tuple[str, ...], output: str | None, run_dir: str | None, target: str | None,
           with_report: bool) -> None:
    """Turn existing tool outputs into tidy rows (exit 1 if some file had no usable result; what was left out
    of a usable one is a warning on stderr, exit 0 as for a run)."""
    from pathlib import Path

    from fsbench.ingest import ingest_files, write_rows

    def say(message: str) -> None:  # as it comes: a long ingest says what it left out file by file
        warn([message])

    if run_dir:
        from fsbench.ingest.run import ingest_run_dir

        out, errors = ingest_run_dir(tool, list(files), Path(run_dir), target, warn=say)
        if with_report:
            from fsbench.report import write_report

            write_report(out)
        click.echo(str(out))
    else:
        rows, errors = ingest_files(tool, list(files), warn=say)
        try:
            write_rows(rows, output, sys.stdout)
        except OSError as exc:
            cannot_write(output or "stdout", exc)
    for err in errors:
        click.echo(f"error: {err}", err=True)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
