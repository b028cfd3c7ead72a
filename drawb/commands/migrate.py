"""``migrate``: rewrite workloads that ask for ``nvidia.com/gpu`` or ``nvidia.com/mig-*`` as DRA claims,
and say which road (claims, or the extended resource served through a DeviceClass) fits this cluster."""

from __future__ import annotations

from drawb.cluster.refusal import require_rights
from drawb.commands.manifests import document_rights
from drawb.commands.registry import arg, command
from drawb.errors import UsageError
from drawb.session import Session


@command(
    "migrate",
    "Rewrite manifests that ask for nvidia.com/gpu or nvidia.com/mig-* as ResourceClaimTemplates and claims "
    "(comments and untouched lines kept), and check both roads against the cluster. Applies only with --apply.",
    arg("paths", nargs="*", metavar="PATH", help="manifest files or folders (*.yaml, *.yml); - reads standard input"),
    arg("--cluster", action="store_true",
        help="migrate the connected cluster's Deployments, StatefulSets, DaemonSets, Jobs, CronJobs and Pods"),
    arg("-n", "--namespace", help="namespace for --cluster and for manifests that name none (default: the session's)"),
    arg("-A", "--all-namespaces", action="store_true", help="with --cluster: every namespace"),
    arg("--out", metavar="DIR", help="write the rewritten files (and deviceclasses.yaml, if the other road needs it) here"),
    arg("--side-by-side", action="store_true", help="show the diff in two columns instead of unified"),
    arg("--dry-run", action="store_true", help="server-side dry run of the rewritten manifests"),
    arg("--apply", action="store_true", help="dry run, then apply the rewritten manifests (new objects only)"),
    cell="YAML manifests to migrate",
)
def migrate(session: Session, args, cell):
    """Read, rewrite and assess; then export and/or dry-run or apply."""
    from drawb.migrate import migrate as run_migration, read_cluster, read_paths
    from drawb.migrate.sources import Source

    if not args.paths and not args.cluster and cell is None:
        raise UsageError(f"{session.prog} migrate needs manifests: PATH..., - for standard input, or --cluster",
                         hint=f"e.g. `{session.prog} migrate deploy.yaml --out migrated/`")
    if args.all_namespaces and not args.cluster:
        raise UsageError("--all-namespaces goes with --cluster", hint="add --cluster, or leave -A out")
    if "-" in args.paths and session.prog == "%dra":
        raise UsageError("a notebook has no standard input to read manifests from",
                         hint="put them in the cell: `%%dra migrate` with the YAML below it")
    namespace = args.namespace or session.namespace
    sources = read_paths(args.paths)
    if cell is not None:
        sources.append(Source("<cell>", cell, None, "cell.yaml"))
    cluster = session.cluster
    if args.cluster:
        sources += read_cluster(cluster, None if args.all_namespaces else namespace)
    result = run_migration(sources, cluster, namespace)
    result.view = "side-by-side" if args.side_by_side else "unified"
    if args.out:
        result.export(args.out)
    if args.dry_run or args.apply:
        objects = result.to_apply(namespace)
        require_rights(cluster, f"{session.prog} migrate", document_rights(objects, ("get", "create", "patch"), namespace))
        result.server_objects = cluster.apply(objects, dry_run=not args.apply)
        result.applied = "applied" if args.apply else "dry run"
    return result
