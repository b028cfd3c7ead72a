"""Subcommands shared by the ``%dra`` magic and the ``drawb`` command line.

A subcommand is declared once, with ``@command``, in a module listed in ``COMMAND_MODULES``;
both front ends parse the same arguments and call the same function, which returns a value
(a DataFrame, or an object with a rich ``_repr_html_``) and never prints. A front end declares
its own extra subcommands in its own package with ``@command(..., only="%dra")``: they exist for
that front end alone, and this package never imports them.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import shlex
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from drawb import versions
from drawb.errors import UsageError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

COMMAND_MODULES = (
    "drawb.commands.connect",
    "drawb.commands.read",
    "drawb.commands.local",
    "drawb.commands.render",
    "drawb.commands.select",
    "drawb.commands.doctor",
    "drawb.commands.workloads",
    "drawb.commands.check",
    "drawb.commands.snapshot",
    "drawb.commands.state",
    "drawb.commands.rbac",
    "drawb.commands.preview",
    "drawb.commands.capacity",
    "drawb.commands.migrate",
    "drawb.commands.convert",
    "drawb.commands.manifests",
    "drawb.commands.why",
    "drawb.commands.map",
    "drawb.commands.versions",
    "drawb.commands.upgrade",
    "drawb.commands.taints",
    "drawb.commands.pools",
)

Runner = Callable[[Session, argparse.Namespace, "str | None"], object]


@dataclass
class Command:
    """One subcommand: its arguments and the function that runs it."""

    name: str
    help: str
    run: Runner
    arguments: list[tuple[tuple, dict]] = field(default_factory=list)
    cell: str | None = None  # what the cell body means in the ``%%dra`` form, if accepted
    line: bool = True  # whether the one-line ``%dra`` form is accepted
    only: str | None = None  # the one front end (its prog, e.g. ``%dra``) that has it; None: every one
    raw_rest: str | None = None  # the argument that takes the rest of the line as written, quotes and all

    def parser(self, prog: str = "%dra") -> argparse.ArgumentParser:
        """An argparse parser whose errors raise UsageError instead of exiting."""
        parser = _RaisingParser(prog=f"{prog} {self.name}", description=self.help, add_help=False)
        for args, kwargs in self.arguments:
            parser.add_argument(*args, **kwargs)
        return parser

    def usage(self, prog: str = "%dra") -> str:
        """The help text of this subcommand."""
        return self.parser(prog).format_help()


class _RaisingParser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(f"{self.prog}: {message}", hint=f"see `{self.prog.split()[0]} help {self.prog.split()[-1]}`")


COMMANDS: dict[str, Command] = {}


class JsonResult(str):
    """A command's result as JSON text (``--json``) that keeps its exit status for the CLI."""

    exit_status: int

    def __new__(cls, data: object, exit_status: int = 0) -> JsonResult:
        text = super().__new__(cls, json.dumps(data, indent=2))
        text.exit_status = exit_status
        return text

    def __repr__(self) -> str:
        return str(self)


def arg(*args, **kwargs) -> tuple[tuple, dict]:
    """An argument of a subcommand, as ``argparse.add_argument`` takes it."""
    return args, kwargs


def command(
    name: str,
    help: str,
    *arguments: tuple[tuple, dict],
    cell: str | None = None,
    line: bool = True,
    only: str | None = None,
    raw_rest: str | None = None,
):
    """Register the decorated function as subcommand ``name`` (of front end ``only``'s alone, if given).

    With ``raw_rest``, that argument gets the rest of the line after the options, as written (a CEL
    expression keeps its quotes).
    """

    def register(run: Runner) -> Runner:
        COMMANDS[name] = Command(name, help, run, list(arguments), cell, line, only, raw_rest)
        return run

    return register


def load_commands(prog: str = "%dra") -> dict[str, Command]:
    """Every subcommand front end ``prog`` has (importing the shared modules that declare them)."""
    for module in COMMAND_MODULES:
        importlib.import_module(module)
    return {name: cmd for name, cmd in COMMANDS.items() if cmd.only in (None, prog)}


def find(name: str, prog: str = "%dra") -> Command:
    """The subcommand ``name``, or a UsageError suggesting the closest one."""
    commands = load_commands(prog)
    if name in commands:
        return commands[name]
    close = difflib.get_close_matches(name, commands, n=1)
    hint = f"did you mean `{close[0]}`?" if close else f"subcommands: {', '.join(sorted(commands))}"
    raise UsageError(f"unknown subcommand {name!r}", hint=hint)


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"cannot split the command line: {exc}", hint="check the quotes") from None


def run_line(
    session: Session, line: str, cell: str | None = None, prog: str = "%dra", argv: list[str] | None = None
) -> object:
    """Parse ``line`` (``<subcommand> [options]``, the magic's) or ``argv`` (the same as words the shell
    already split, the command line's) and run it."""
    if argv is None:
        head, tail = (line.split(None, 1) + ["", ""])[:2]
    else:
        head, tail = (argv[0] if argv else ""), ""
    cmd = find(head or "help", prog)
    if cell is not None and cmd.cell is None:
        raise UsageError(f"{prog} {cmd.name} takes no cell body", hint=f"use the one-line form `{prog} {cmd.name}`")
    if cell is None and not cmd.line:
        if prog != "%dra":
            raise UsageError(f"{cmd.name} takes {cmd.cell} from a notebook cell", hint=f"run `%%dra {cmd.name}` in Jupyter")
        raise UsageError(f"{cmd.name} needs a cell: use `%%dra {cmd.name}` with {cmd.cell} in the cell")
    if argv is not None:
        args = cmd.parser(prog).parse_args(argv[1:])
    elif cmd.raw_rest and cell is None:
        args = _parse_with_raw_rest(cmd, tail, prog)
    else:
        args = cmd.parser(prog).parse_args(_split(tail))
    session.mark_unused()
    session.settle_namespace()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", versions.NewerKubernetesVersion)
        result = cmd.run(session, args, cell)
    _show_warnings(caught)
    return with_source(session, result)


def _show_warnings(caught: list[warnings.WarningMessage]) -> None:
    """drawb's own version warnings as one plain line each (once); any other warning as Python shows it."""
    seen = set()
    for w in caught:
        if issubclass(w.category, versions.NewerKubernetesVersion):
            if str(w.message) not in seen:
                seen.add(str(w.message))
                print(f"Warning: {w.message}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)


def _parse_with_raw_rest(cmd: Command, text: str, prog: str) -> argparse.Namespace:
    """Options first (split as a shell would), then the rest of ``text`` as written into ``cmd.raw_rest``."""
    flags = {flag: kwargs.get("action") in ("store_true", "store_false") for flags, kwargs in cmd.arguments
             for flag in flags if flag.startswith("-")}  # option -> whether it takes no value
    options: list[str] = []
    rest = text.lstrip()
    while rest.startswith("-"):
        flag, eq, _ = rest.split(None, 1)[0].partition("=")
        if flag not in flags:
            break  # not an option of the command: the rest is the argument itself (e.g. -1 < ...)
        lexer = shlex.shlex(rest, posix=True)
        lexer.whitespace_split = True
        try:
            words = [lexer.get_token() for _ in range(1 if flags[flag] or eq else 2)]
        except ValueError as exc:
            raise UsageError(f"cannot split the command line: {exc}", hint="check the quotes") from None
        options += [w for w in words if w is not None]
        rest = rest[lexer.instream.tell():].lstrip()
    args = cmd.parser(prog).parse_args(options)
    setattr(args, cmd.raw_rest, _unquoted(rest.strip()))
    return args


def _unquoted(text: str) -> str:
    """``text`` without the quotes around it when it is one quoted shell word (``'a == "b"'``), else as written."""
    if len(text) < 2 or text[0] != text[-1] or text[0] not in "'\"":
        return text
    try:
        words = shlex.split(text)
    except ValueError:
        return text
    return words[0] if len(words) == 1 else text


def with_source(session: Session, result: object) -> object:
    """``result``, its frame ``attrs["drawb"]`` naming the simulated cluster when the command read it."""
    source = session.simulated_source()
    attrs = getattr(result, "attrs", None)
    if source and isinstance(attrs, dict):
        result.attrs = {**attrs, "drawb": {**(attrs.get("drawb") or {}), "cluster": source, "simulated": True}}
    return result


def source_line(session: Session) -> str:
    """The line a front end shows beside a result of the simulated cluster (empty for a real cluster)."""
    source = session.simulated_source()
    return f"[from the {source}, not a real cluster]" if source else ""


def with_warning(frame: pd.DataFrame, warning: str) -> pd.DataFrame:
    """``frame`` with a warning the front end prints beside it (in ``attrs["drawb"]["warnings"]``)."""
    info = dict(frame.attrs.get("drawb") or {})
    info["warnings"] = [*info.get("warnings", []), warning]
    frame.attrs = {**frame.attrs, "drawb": info}
    return frame


def warnings_text(result: object, limit: int = 10) -> str:
    """What a front end prints beside ``result``: problems found while reading objects (the rest of the
    result is intact) and the command's own warnings; empty when there are none."""
    attrs = getattr(result, "attrs", None)
    info = (attrs.get("drawb") or {}) if isinstance(attrs, dict) else {}
    problems = list(info.get("problems") or [])
    parts = []
    if problems:
        lines = [f"MalformedObjects: {len(problems)} problem(s) while reading objects; everything else is shown:"]
        lines += [f"  - {p}" for p in problems[:limit]]
        if len(problems) > limit:
            lines.append(f"  ... and {len(problems) - limit} more (see result.attrs['drawb']['problems'])")
        parts.append("\n".join(lines))
    parts += info.get("warnings") or []
    return "\n".join(parts)


def reference(prog: str = "%dra") -> str:
    """The reference of every subcommand, for ``%dra?`` and ``drawb --help``."""
    parts = []
    for name, cmd in sorted(load_commands(prog).items()):
        usage = cmd.parser(prog).format_usage().replace("usage: ", "").strip()
        cell_form = f"\n    cell form: %%dra {name} with {cmd.cell}" if cmd.cell and prog == "%dra" else ""
        parts.append(f"{usage}\n    {cmd.help}{cell_form}")
    return "\n\n".join(parts)
