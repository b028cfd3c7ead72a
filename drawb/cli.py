"""The ``drawb`` command line: the same subcommands as ``%dra``, printing tables."""

from __future__ import annotations

import argparse
import shlex
import sys

from drawb.errors import DrawbError, UsageError

NOTEBOOK_ONLY = ("builder",)  # subcommands of the notebook front end (widgets): named here to say so


def _global_options(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="drawb", add_help=False)
    parser.add_argument("--kubeconfig")
    parser.add_argument("--context")
    parser.add_argument("--scenario", default="default")
    parser.add_argument("--namespace", "-N", default="default")
    parser.add_argument("--kubernetes-version", default="1.34")
    parser.add_argument("--traceback", action="store_true")
    parser.add_argument("-h", "--help", action="store_true")
    return parser.parse_known_args(argv)


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


USAGE = """usage: drawb [--kubeconfig PATH] [--context NAME] [--scenario NAME] [--namespace NS] <subcommand> [options]

Without --kubeconfig or --context, drawb uses its embedded simulated cluster.
"""


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand and print its result; exit 2 on a drawb error, else the result's ``exit_status`` (0)."""
    from drawb.commands.registry import problems_of, problems_text, reference, run_line
    from drawb.session import Session

    options, rest = _global_options(sys.argv[1:] if argv is None else argv)
    if options.help or not rest:
        print(USAGE + "\nSubcommands:\n\n" + reference(prog="drawb"))
        return 0
    session = Session(
        namespace=options.namespace,
        scenario=options.scenario,
        kubeconfig=options.kubeconfig,
        context=options.context,
        kubernetes_version=options.kubernetes_version,
        prog="drawb",
    )
    try:
        if rest[0] in NOTEBOOK_ONLY:
            raise UsageError(f"{rest[0]} is a notebook widget", hint=f"run `%dra {rest[0]}` in Jupyter")
        result = run_line(session, shlex.join(rest), prog="drawb")
        text = render(result)
    except DrawbError as exc:
        if options.traceback:
            raise
        print(exc.render(), file=sys.stderr)
        return 2
    problems = problems_of(result)
    if problems:
        print(problems_text(problems), file=sys.stderr)
    if text:
        try:
            print(text)
        except BrokenPipeError:  # e.g. piped into `head`
            sys.stderr.close()
    return int(getattr(result, "exit_status", 0))


if __name__ == "__main__":
    sys.exit(main())
