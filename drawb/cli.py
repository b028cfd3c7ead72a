"""The ``drawb`` command line: the same subcommands as ``%dra``, printing tables."""

from __future__ import annotations

import argparse
import sys
import traceback
from typing import TYPE_CHECKING

from drawb.errors import PROG, DrawbError, UsageError

if TYPE_CHECKING:
    from drawb.commands.watching import WatchedTable

NOTEBOOK_ONLY = ("builder",)  # subcommands of the notebook front end (widgets): named here to say so


class _GlobalParser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(f"drawb: {message}", hint="see `drawb --help`")


def global_parser() -> argparse.ArgumentParser:
    """The options before the subcommand: the session's options, then --traceback, --version and --help."""
    from drawb.session import session_options

    parser = _GlobalParser(
        prog="drawb",
        usage="drawb [options] <subcommand> [subcommand options]",
        description="Without --kubeconfig, --context, --in-cluster or --target, drawb uses its embedded simulated "
                    "cluster.",
        add_help=False,
    )
    for option in session_options():
        flags = ["--" + option.name.replace("_", "-")] + ([option.metadata["short"]] if option.metadata["short"] else [])
        parser.add_argument(*flags, default=option.default, help=option.metadata["help"])
    parser.add_argument("--in-cluster", action="store_true",
                        help="the cluster this pod runs in, as its service account (same as --target in-cluster)")
    parser.add_argument("--traceback", action="store_true", help="show the full traceback of an error")
    parser.add_argument("--version", action="store_true", help="print drawb's version and exit")
    parser.add_argument("-h", "--help", action="store_true", help="show this reference")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)  # the subcommand and its options
    return parser


def render(value: object) -> str:
    """How a command's result prints in a terminal."""
    if value is None:
        return ""
    to_string = getattr(value, "to_string", None)
    if callable(to_string):
        if getattr(value, "empty", False):
            return "(no rows)"
        import pandas as pd

        frame = value.copy()
        for column in frame.columns[frame.dtypes == object]:
            frame[column] = frame[column].map(_cell)
        with pd.option_context("display.width", 250):
            return frame.to_string(index=False)
    return str(value)


def _cell(value: object, width: int = 60) -> str:
    text = "" if value is None else (", ".join(map(str, value)) if isinstance(value, list) else str(value))
    return text if len(text) <= width else text[: width - 1] + "…"


INTERRUPTED = 130  # the shell's status for a command ended by SIGINT (128 + 2), as kubectl's


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand and print its result; exit 2 on a drawb error, 130 on an interrupt (Ctrl-C), else the
    result's ``exit_status`` (0).

    ``--traceback`` adds the traceback to what is printed and changes no exit status.
    """
    from drawb.collector import collection_around_command

    args = sys.argv[1:] if argv is None else argv
    try:
        with collection_around_command():  # the collector's policy is set here, once, around the command
            return _run(args)
    except KeyboardInterrupt as exc:
        if "--traceback" in args:
            traceback.print_exc()
        for note in getattr(exc, "__notes__", []):  # what the command undid on the way out (an apply's rollback)
            print(note.replace(PROG, "drawb"), file=sys.stderr)
        print(f"Interrupted: {_command_name(args)} stopped before it finished", file=sys.stderr, flush=True)
        return INTERRUPTED
    finally:
        if argv is None:  # the process's own command: it ends now
            _skip_collection_at_exit()


def _skip_collection_at_exit() -> None:
    """Let the interpreter's exit leave what the command made (a kept simulated cluster of 10,000 nodes is
    millions of objects; collecting them takes longer than reading them) to the operating system."""
    import gc

    gc.freeze()


def _command_name(args: list[str]) -> str:
    """``drawb <subcommand>`` as far as ``args`` name one (the first word that is no option or option value)."""
    try:
        words = global_parser().parse_args(args).rest
    except (UsageError, KeyboardInterrupt):
        words = []
    return " ".join(["drawb", *words[:1]])


def _run(args: list[str]) -> int:
    from drawb.commands.registry import reference, run_line, source_line, warnings_text
    from drawb.release import VERSION
    from drawb.session import Session, session_options

    parser = global_parser()
    try:
        options = parser.parse_args(args)
        if options.in_cluster:
            if options.kubeconfig or options.context:
                raise UsageError("--in-cluster uses the pod's service account; --kubeconfig and --context a kubeconfig",
                                 hint="give one way to reach the cluster")
            options.target = "in-cluster"
    except UsageError as exc:
        print(exc.render(prog="drawb"), file=sys.stderr)
        return 2
    if options.version:
        print(f"drawb {VERSION}")
        return 0
    rest = options.rest
    if len(rest) > 1 and rest[-1] in ("-h", "--help"):
        rest = ["help", rest[0]]
    if options.help or not rest:
        print(parser.format_help() + "\nSubcommands:\n\n" + reference(prog="drawb"))
        return 0
    session = Session(**{o.name: getattr(options, o.name) for o in session_options()}, prog="drawb",
                      progress=lambda line: print(line, file=sys.stderr, flush=True), keep_state=True)
    try:
        if rest[0] in NOTEBOOK_ONLY:
            raise UsageError(f"{rest[0]} is a notebook widget", hint=f"run `%dra {rest[0]}` in Jupyter")
        result = run_line(session, "", prog="drawb", argv=rest)
        from drawb.commands.watching import WatchedTable

        if isinstance(result, WatchedTable):
            session.release_state()  # following only reads: other commands may use the simulated cluster meanwhile
            return _follow(result)
        text = render(result)
        source = source_line(session)  # before close: whether the command read the simulated cluster
        if getattr(result, "compile_error", None) is not None:  # a selector the API server would refuse
            print(text, file=sys.stderr)
            return 2
    except DrawbError as exc:
        if options.traceback:
            traceback.print_exc()
        print(exc.render(prog="drawb"), file=sys.stderr)
        return 2
    finally:
        session.close()  # stop the watches the command started: nothing keeps polling the cluster after it
    if source:
        print(source, file=sys.stderr)
    for note in getattr(result, "terminal_notes", lambda: [])():
        print(note, file=sys.stderr)
    warnings = warnings_text(result)
    if warnings:
        print(warnings, file=sys.stderr)
    if text:
        try:
            print(text)
        except BrokenPipeError:  # e.g. piped into `head`
            sys.stderr.close()
    return int(getattr(result, "exit_status", 0))


def _follow(table: WatchedTable) -> int:
    """Print a WatchedTable, then a line per changed row (prefixed with the time) until its ``--for`` is up (0);
    an interrupt ends it as it ends every command (``main``: 130)."""
    import time

    from drawb.commands.watching import change_lines

    def show(frame, previous) -> None:
        if previous is None:
            print(render(frame), flush=True)
            return
        stamp = time.strftime("%H:%M:%S")
        for line in change_lines(previous, frame, table.key):
            print(f"{stamp} {line}", flush=True)

    try:
        table.follow(show)
    except BrokenPipeError:
        sys.stderr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
