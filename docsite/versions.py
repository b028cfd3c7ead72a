"""The Kubernetes versions page, from ``drawb.versions`` through the ``versions`` subcommand: the tables
``drawb versions`` and ``drawb versions --minor M`` print, for every minor."""

from __future__ import annotations

import argparse

from drawb import versions
from drawb.commands.versions import versions_


def page() -> str:
    """Markdown: the minors drawb models with their served API versions, every DRA gate across them, then each
    minor's gates in detail."""
    known = [versions.rules(minor) for minor in versions.known()]
    lines = [
        "# Kubernetes versions and feature gates",
        "",
        f"drawb models Kubernetes {known[0].minor} to {known[-1].minor}. This page is generated from "
        "`drawb.versions` when the site is built, through the same command as `drawb versions` (the table of "
        "gates) and `drawb versions --minor M` (each minor's section). A newer version is checked with "
        f"{versions.newest()}'s rules and says so; an older one is refused. "
        "[Kubernetes versions](../guide/versions.md) says how drawb uses them.",
        "",
        "| minor | facts of the release | `resource.k8s.io` served by default | more with `--runtime-config` |",
        "|---|---|---|---|",
        *(f"| {r.minor} | {r.release} | {', '.join(r.served)} | "
          f"{', '.join(v for v in r.available if v not in r.served) or '-'} |" for r in known),
        "",
        "## Gates per minor",
        "",
        "Stage, default, and `locked` when the gate cannot be set against its default; `-`: the minor has no "
        "such gate.",
        "",
        *_table(versions_(None, argparse.Namespace(minor=None), None)),
    ]
    for rules in known:
        detail = versions_(None, argparse.Namespace(minor=rules.minor), None)
        lines += ["", f"## Kubernetes {rules.minor}", "",
                  f"Facts of {rules.release}: every DRA gate, the components that read it and the fields the API "
                  "server drops from new objects while it is off (`guards`).", "", *_table(detail)]
    return "\n".join(lines) + "\n"


def _table(frame) -> list[str]:
    """A DataFrame as the rows of a Markdown table."""
    rows = [[str(v) for v in row] for row in frame.itertuples(index=False)]
    return ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns),
            *("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows)]
