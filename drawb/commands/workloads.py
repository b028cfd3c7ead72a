"""``logs`` and ``events``: what a pod printed and what the control plane said about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command
from drawb.errors import PROG, DrawbError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

_NAMESPACE = arg("-n", "--namespace", default=None, help="the pod's namespace (default: the session's)")


class PodNotFound(DrawbError):
    """No pod of that name in the namespace."""


@dataclass
class PodLog:
    """A container's log lines; shows as plain text, under a note when a simulated node printed them."""

    pod: str
    lines: list[str]
    simulated_by: str | None = None  # the simulated cluster's description

    def __str__(self) -> str:
        note = [f"# printed by a node of the {self.simulated_by}"] if self.simulated_by else []
        return "\n".join(note + (self.lines or [f"(pod {self.pod} printed nothing)"]))

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


@command("logs", "A pod's log: what its container printed (waits for it to start, then to end with --follow).",
         arg("pod", help="pod name"), _NAMESPACE, arg("-c", "--container", help="container (when the pod has several)"),
         arg("-f", "--follow", action="store_true", help="wait until the container ends and show everything"),
         arg("--timeout", type=float, default=120, help="seconds to wait for the container to start (default 120)"))
def logs(session: Session, args, cell) -> PodLog:
    from drawb.cluster.waiting import wait_until

    cluster = session.cluster
    namespace = args.namespace or session.namespace
    if cluster.get("Pod", args.pod, namespace) is None:
        raise PodNotFound(f"no pod '{args.pod}' in namespace '{namespace}'", hint=f"`{PROG} pods` lists them")

    def started() -> list[str] | None:
        lines = list(cluster.logs(args.pod, namespace, args.container))
        return lines if lines or _has_started(cluster.get("Pod", args.pod, namespace), args.container) else None

    lines = wait_until(cluster, started, timeout=args.timeout, what=f"pod {args.pod} to start")
    if args.follow:
        lines = list(cluster.logs(args.pod, namespace, args.container, follow=True))
    simulated = cluster.description if cluster.description.startswith("simulated") else None
    return PodLog(args.pod, lines, simulated)


def _has_started(pod: dict | None, container: str | None) -> bool:
    statuses = (pod or {}).get("status", {}).get("containerStatuses") or []
    return any((container is None or s["name"] == container) and ("running" in s["state"] or "terminated" in s["state"])
               for s in statuses)


@command("events", "Events: what the scheduler and the controllers reported (about one object, or all).",
         arg("object", nargs="?", metavar="KIND/NAME", help="only events about this object (a bare name: a pod)"),
         _NAMESPACE)
def events(session: Session, args, cell) -> pd.DataFrame:
    import pandas as pd

    from drawb.commands.manifests import kind_named

    namespace = args.namespace or session.namespace
    wanted = None
    if args.object:
        kind, slash, name = args.object.rpartition("/")
        wanted = (kind_named(kind) if slash else "Pod", name)
    rows = []
    for event in session.cluster.list("Event", namespace):
        involved = event.get("involvedObject") or {}
        if wanted and (involved.get("kind"), involved.get("name")) != wanted:
            continue
        rows.append({
            "last_seen": ((event.get("series") or {}).get("lastObservedTime") or event.get("lastTimestamp")
                          or event.get("eventTime") or ""),
            "type": event.get("type", ""),
            "reason": event.get("reason", ""),
            "object": f"{involved.get('kind', '').lower()}/{involved.get('name', '')}",
            "message": event.get("message", ""),
            "source": event.get("reportingInstance") or event.get("reportingComponent")
            or (event.get("source") or {}).get("component", ""),
        })
    frame = pd.DataFrame(rows, columns=["last_seen", "type", "reason", "object", "message", "source"])
    return frame.sort_values("last_seen", kind="stable").reset_index(drop=True)
