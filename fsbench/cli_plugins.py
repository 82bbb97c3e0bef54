"""Commands whose flags or help the plug-ins supply: `deploy`'s tool flags, `ingest`'s tool names."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from fsbench.scenario.sections import DeployFlag


class DeployCommand(click.Command):
    """`fsbench deploy`: its tool flags (`--vdbench-zip`) are those the tools declare, read when needed."""

    #: {click's parameter name: the flag a tool declares}, filled when the options are first asked for
    tool_flags: dict[str, DeployFlag] = {}

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """The options, the tools' deploy flags added the first time they are asked for."""
        if not self.tool_flags:
            from fsbench.scenario.sections import deploy_flags

            self.tool_flags = {f"tool_flag_{i}": f for i, f in enumerate(deploy_flags())}
            self.params += [click.Option([f.flag.name, name], metavar=f.flag.metavar or None, help=f.flag.help,
                                         type=click.Choice(f.choices) if f.choices else
                                         click.Path(dir_okay=False, exists=True) if f.flag.existing_file else None)
                            for name, f in self.tool_flags.items()]
        return super().get_params(ctx)


class IngestCommand(click.Command):
    """`fsbench ingest`: its help names the tools of the registry."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The help text, then the names of the tools ingest reads."""
        super().format_help_text(ctx, formatter)
        from fsbench.tools import tool_names

        with formatter.indentation():
            formatter.write_paragraph()
            formatter.write_text(f"TOOL is one of {', '.join(tool_names())} (for some, such as vdbench, FILE may "
                                 "be an output directory).")
