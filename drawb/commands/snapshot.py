"""``snapshot save`` and ``snapshot from-files``: a cluster's DRA state in one file, for sharing and
replaying offline with ``connect --snapshot FILE``."""

from __future__ import annotations

import html

from drawb.commands.registry import arg, command
from drawb.errors import PROG, UsageError
from drawb.session import Session
from drawb.cluster.snapshot.document import Snapshot


class Saved:
    """What ``snapshot save`` reports: where, what it holds, and what it could not know."""

    def __init__(self, path: str, snapshot: Snapshot, prog: str = "%dra"):
        self.path, self.snapshot, self.prog = path, snapshot, prog
        self.attrs = {"drawb": {"warnings": [f"Note: {n}" for n in snapshot.notes]}}

    def lines(self) -> list[str]:
        """The report, line by line."""
        s = self.snapshot
        counts = s.counts()
        claims = s.objects.get("ResourceClaim", [])
        allocated = sum(1 for c in claims if (c.get("status") or {}).get("allocation"))
        devices = sum(len((rs.get("spec") or {}).get("devices") or ()) for rs in s.objects.get("ResourceSlice", []))
        gates = ", ".join(f"{g}={'on' if v else 'off'} ({s.gate_sources.get(g, 'default')})"
                          for g, v in sorted(s.feature_gates.items()))
        return [
            f"Saved snapshot {self.path} (format {s.to_document()['formatVersion']}, drawb {s.drawb_version})"
            + (", redacted: nodes, UUIDs and PCI ids renamed" if s.redacted else ""),
            f"  from: {s.source}",
            f"  Kubernetes: {s.server_version or 'unknown'} (replayed as {s.kubernetes_version})",
            f"  objects: {_n(counts['Node'], 'node')}, {_n(counts['ResourceSlice'], 'slice')} "
            f"({_n(devices, 'device')}), {_n(counts['DeviceClass'], 'class', 'classes')}, "
            f"{_n(counts['ResourceClaim'], 'claim')} ({allocated} allocated), "
            f"{_n(counts['ResourceClaimTemplate'], 'template')}, {_n(counts['Pod'], 'pod')}, "
            f"{_n(counts['Namespace'], 'namespace')}",
            f"  feature gates: {gates}",
            f"  replay offline: {PROG} connect --snapshot {self.path}",
        ]

    def __repr__(self) -> str:
        return "\n".join(self.lines()).replace(PROG, self.prog)

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(repr(self))}</pre>"


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


@command(
    "snapshot",
    "Save the cluster's DRA state to one file (`save FILE`), or build one from kubectl output "
    "(`from-files KUBECTL_OUTPUT... -o FILE`); replay it offline with `connect --snapshot FILE`.",
    arg("action", choices=("save", "from-files"), help="save: the connected cluster; from-files: kubectl output"),
    arg("files", nargs="+", metavar="FILE",
        help="save: the snapshot file to write (.yaml/.yml: YAML, else JSON); from-files: kubectl's "
             "`get resourceslices,deviceclasses,resourceclaims,pods,nodes -A -o yaml` output"),
    arg("-o", "--output", help="from-files: the snapshot file to write"),
    arg("--redact", action="store_true", help="rename nodes, host names, UUIDs and PCI ids consistently, for sharing"),
    arg("--kubernetes-version", dest="version",
        help="from-files: the cluster's Kubernetes version (kubectl output does not say; default: drawb's)"),
)
def snapshot(session: Session, args, cell) -> Saved:
    from drawb.cluster.snapshot.document import write
    from drawb.snapshot.redact import redact

    if args.action == "save":
        if len(args.files) != 1 or args.output or args.version:
            raise UsageError("snapshot save takes one FILE (and no --output or --kubernetes-version)",
                             hint=f"e.g. `{PROG} snapshot save cluster.json`")
        from drawb.snapshot.capture import capture

        target = args.files[0]
        taken = capture(session.cluster, namespace=session.namespace)
    else:
        if not args.output:
            raise UsageError("snapshot from-files needs --output FILE: where to write the snapshot",
                             hint=f"e.g. `{PROG} snapshot from-files cluster.yaml -o snapshot.json`")
        from drawb.snapshot.kubectl import from_files

        target = args.output
        taken = from_files(args.files, kubernetes_version=args.version)
    if args.redact:
        taken, _ = redact(taken)
    write(taken, target)
    return Saved(target, taken, session.prog)
