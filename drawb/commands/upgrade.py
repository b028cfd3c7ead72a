"""``upgrade-check``: the connected cluster and manifests checked against a target Kubernetes minor."""

from __future__ import annotations

import sys

from drawb import versions
from drawb.commands.registry import JsonResult, arg, command
from drawb.errors import UsageError
from drawb.session import Session


@command(
    "upgrade-check",
    "What upgrading to another Kubernetes minor changes or breaks for DRA: slice shapes, meanings, the claim-status "
    "RBAC schedulers and drivers need, gates in use, group versions served, selectors reading attributes the "
    "cluster's NVIDIA DRA driver release does not publish; each finding with the fix. Read-only.",
    arg("paths", nargs="*", metavar="FILE", help="manifest files or folders to check too (*.yaml, *.yml, *.json); "
        "- reads standard input"),
    arg("--to", required=True, metavar="MINOR", help=f"the Kubernetes minor to upgrade to ({', '.join(versions.known())})"),
    arg("--driver-release", metavar="RELEASE",
        help="the NVIDIA DRA driver release to check selectors against (v25.3, v25.8, v25.12, v0.4, v0.5; default: "
             "the one the cluster's slices show)"),
    arg("--json", action="store_true", help="print the report as JSON"),
    cell="YAML manifests to check too",
)
def upgrade_check(session: Session, args, cell):
    """Check the cluster (and the manifests) against ``--to``; an UpgradeReport (JSON with --json)."""
    from drawb.render.sources import parse_text, read_sources
    from drawb.upgrade import check_upgrade

    text = None
    if "-" in args.paths:
        if session.prog == "%dra":
            raise UsageError("a notebook has no standard input to read manifests from",
                             hint="put them in the cell: `%%dra upgrade-check --to MINOR` with the YAML below it")
        text = sys.stdin.read()
    sources = read_sources(args.paths, text)
    if cell is not None:
        sources.append(parse_text("<cell>", cell))
    report = check_upgrade(session.cluster, args.to, sources, args.driver_release).name_commands(session.prog)
    return JsonResult(report.to_dict(), report.exit_status) if args.json else report
