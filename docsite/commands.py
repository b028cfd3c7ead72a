"""The command reference page, from drawb's command table: the source ``drawb --help`` and ``%dra?`` print."""

from __future__ import annotations

import argparse

import drawb.notebook.magics  # noqa: F401  (registers the notebook's own subcommands: build, builder, browse)
from drawb.cli import global_parser
from drawb.commands.registry import Command, load_commands

FRONT_ENDS = ("%dra", "drawb")


def page() -> str:
    """Markdown: the global options of ``drawb``, then every subcommand of either front end with its options."""
    per_front_end = {prog: load_commands(prog) for prog in FRONT_ENDS}
    names = sorted(set().union(*per_front_end.values()))
    lines = [
        "# Commands",
        "",
        "Every subcommand of the `%dra` magic and the `drawb` command line, generated from drawb's command "
        "table when the site is built: the same text `drawb --help`, `drawb help NAME`, `%dra help` and `%dra?` "
        "print. A subcommand takes the same options on both front ends unless it says otherwise.",
        "",
        "| subcommand | what it does |",
        "|---|---|",
        *(f"| [`{name}`](#{name}) | {_escape(_any(per_front_end, name).help)} |" for name in names),
        "",
        "## Options of `drawb` and the notebook",
        "",
        "`drawb [options] <subcommand> [subcommand options]`. " + global_parser().description,
        "In a notebook the same settings are traitlets: `%config DRAMagics.<name> = value`.",
        "",
        *_options_table(global_parser()),
    ]
    for name in names:
        lines += ["", *_section(name, {prog: cmds[name] for prog, cmds in per_front_end.items() if name in cmds})]
    return "\n".join(lines) + "\n"


def _any(per_front_end: dict[str, dict[str, Command]], name: str) -> Command:
    return next(cmds[name] for cmds in per_front_end.values() if name in cmds)


def _section(name: str, by_prog: dict[str, Command]) -> list[str]:
    cmd = next(iter(by_prog.values()))
    forms = []
    for prog, each in by_prog.items():
        usage = each.parser(prog).format_usage().removeprefix("usage: ").strip()
        if each.line:
            forms.append(usage)
        if each.cell and prog == "%dra":
            forms.append(f"%%dra {name} ...  (the cell: {each.cell})")
    lines = [f"## {name}", "", _escape_text(cmd.help), "", "```text", *forms, "```", ""]
    if len(by_prog) == 1:
        lines += [f"Only in {'a notebook' if '%dra' in by_prog else 'the command line'} (`{next(iter(by_prog))}`).", ""]
    options = _options_table(cmd.parser(next(iter(by_prog))))
    return lines + (options if len(options) > 2 else ["No options."])


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| option | meaning |", "|---|---|"]
    for action in parser._actions:
        if action.help == argparse.SUPPRESS:
            continue
        flags = ", ".join(action.option_strings) or action.metavar or action.dest
        takes = "" if action.nargs == 0 or not action.option_strings else f" {action.metavar or action.dest.upper()}"
        choices = f" (one of: {', '.join(map(str, action.choices))})" if action.choices else ""
        rows.append(f"| `{flags}{takes}` | {_escape(action.help or '')}{_escape(choices)} |")
    return rows


def _escape(text: str) -> str:
    """``text`` safe in a Markdown table cell."""
    return _escape_text(text).replace("|", "\\|").replace("\n", " ")


def _escape_text(text: str) -> str:
    """``text`` with the characters Markdown would read as markup escaped."""
    return text.replace("<", "&lt;").replace("*", "\\*").replace("_", "\\_")
