"""``doctor``: readiness checks of the connected cluster for DRA on NVIDIA GPUs."""

from __future__ import annotations

from drawb.cluster.refusal import Right, require_rights
from drawb.commands.registry import JsonResult, arg, command
from drawb.session import Session

# what --live writes: a claim and one or two pods, created by server-side apply and deleted afterwards
_LIVE_RIGHTS = (("resourceclaims", "resource.k8s.io"), ("pods", ""))


@command(
    "doctor",
    "Is this cluster ready for DRA? Version, API, DeviceClasses, slices per GPU node, pools, feature gates "
    "probed by server-side dry runs, device-plugin overlap, pending pods. Read-only unless --live.",
    arg("--json", action="store_true", help="print the report as JSON"),
    arg("--live", action="store_true",
        help="also create a labelled claim and pod (holding one GPU for a few seconds) to see the scheduler and "
             "kubelet serve them, then remove them"),
    arg("-n", "--namespace", help="namespace for the claim probes and --live (default: the session's)"),
    arg("--timeout", type=float, default=60, help="seconds --live waits for each step (default 60)"),
)
def doctor(session: Session, args, cell):
    from drawb.doctor import diagnose

    namespace = args.namespace or session.namespace
    if args.live:
        require_rights(session.cluster, f"{session.prog} doctor --live",
                       [Right(verb, resource, group, namespace) for resource, group in _LIVE_RIGHTS
                        for verb in ("get", "create", "patch", "delete")])
    report = diagnose(session.cluster, namespace=namespace, live=args.live,
                      live_timeout=args.timeout).name_commands(session.prog)
    return JsonResult(report.to_dict(), report.exit_status) if args.json else report
