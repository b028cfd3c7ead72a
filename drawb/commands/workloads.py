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


class ContainerNotChosen(DrawbError):
    """A pod of several containers and no container named, or a name the pod has no container of."""


class PodNotStarted(DrawbError):
    """The container did not start within the time ``logs`` waits."""


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
    pod = cluster.get("Pod", args.pod, namespace)
    if pod is None:
        raise PodNotFound(f"no pod '{args.pod}' in namespace '{namespace}'", hint=f"`{PROG} pods` lists them")
    container = _container(pod, args.container)

    def started() -> list[str] | None:
        lines = list(cluster.logs(args.pod, namespace, container))
        return lines if lines or _has_started(cluster.get("Pod", args.pod, namespace), container) else None

    try:
        lines = wait_until(cluster, started, timeout=args.timeout, what=f"pod {args.pod} to start")
    except TimeoutError:
        now = cluster.get("Pod", args.pod, namespace) or pod
        waiting = _waiting_reason(now, container)
        raise PodNotStarted(f"container {container} of pod {args.pod} did not start within {args.timeout:g} s"
                            + (f" (waiting: {waiting})" if waiting else ""),
                            hint=f"`{PROG} why {args.pod} -n {namespace}` and `{PROG} events {args.pod} -n {namespace}` "
                                 "say what holds it; --timeout waits longer") from None
    if args.follow:
        lines = list(cluster.logs(args.pod, namespace, container, follow=True))
    simulated = cluster.description if cluster.description.startswith("simulated") else None
    return PodLog(args.pod, lines, simulated)


def _container(pod: dict, wanted: str | None) -> str:
    """The container whose log to read: the one named, or the pod's only one; as the API server answers
    otherwise (at once, not after waiting for the pod to start)."""
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    containers = [c["name"] for c in spec.get("containers") or ()]
    others = [c["name"] for key in ("initContainers", "ephemeralContainers") for c in spec.get(key) or ()]
    if wanted is None:
        if len(containers) == 1:
            return containers[0]
        inits = [c["name"] for c in spec.get("initContainers") or ()]
        raise ContainerNotChosen(f"a container name must be specified for pod {name}, choose one of: "
                                 f"[{' '.join(containers)}]"
                                 + (f" or one of the init containers: [{' '.join(inits)}]" if inits else ""),
                                 hint=f"`{PROG} logs {name} -c {containers[0]}`" if containers else None)
    if wanted not in containers + others:
        raise ContainerNotChosen(f"container {wanted} is not valid for pod {name}",
                                 hint=f"choose one of: {', '.join(containers + others)}")
    return wanted


def _waiting_reason(pod: dict, container: str) -> str:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    state = next((s.get("state") or {} for s in statuses if s.get("name") == container), {})
    return (state.get("waiting") or {}).get("reason", "")


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
