"""Read commands: devices, slices, classes, claims, pods and attrs as DataFrames."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command, with_warning
from drawb.errors import PROG, UsageError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

_NODE = arg("--node", help="only devices on this node")
_DRIVER = arg("--driver", help="only devices of this driver, e.g. gpu.nvidia.com")
_NAMESPACE = arg("-n", "--namespace", help="only this namespace (default: the namespace option when you set it, "
                 "else all namespaces)")
_ALL_NAMESPACES = arg("-A", "--all-namespaces", action="store_true", help="every namespace, whatever the option says")
_OUTPUT = arg("-o", "--output", choices=("table", "yaml"), default="table",
              help="yaml: the objects whole, as the cluster returns them")
_NAME = arg("name", nargs="?", help="only the object of this name")
_WATCH = arg("--watch", action="store_true",
             help="keep the table current as the cluster changes (the command line prints changes), until interrupted")
_FOR = arg("--for", dest="watch_for", type=float, metavar="SECONDS", help="with --watch: stop after this many seconds")


def _watched(session: Session, args, name: str, kinds: tuple[str, ...], key: tuple[str, ...], make_frame,
             namespace: str | None = None):
    """``make_frame()``, or with ``--watch`` a WatchedTable the front end keeps showing (watching ``namespace``
    only, when given)."""
    if args.watch_for is not None and not args.watch:
        raise UsageError("--for needs --watch", hint=f"e.g. `{session.prog} {name} --watch --for 60`")
    if not args.watch:
        return make_frame()
    from drawb.commands.watching import WatchedTable

    return WatchedTable(name, session.cluster, kinds, make_frame, key, args.watch_for, namespace)


def list_visible(session: Session, kind: str, namespace: str | None) -> tuple[list[dict], str | None]:
    """Objects of ``kind`` in ``namespace`` (or everywhere); where RBAC refuses every namespace, those of the
    session's namespace, with a warning saying so."""
    from drawb.cluster.refusal import RbacRefused

    try:
        return session.cluster.list(kind, namespace), None
    except RbacRefused as exc:
        if namespace is not None:
            raise
        objects = session.cluster.list(kind, session.namespace)
        return objects, (f"RbacRefused: {exc.verb} on {exc.resource} in all namespaces was refused for user "
                         f'"{exc.user}"; showing namespace {session.namespace} only (choose one with -n)')


class ObjectsYaml(str):
    """Objects as multi-document YAML (``-o yaml``); shows as plain text."""

    def __repr__(self) -> str:
        return str(self)


def read_namespace(session: Session, args) -> str | None:
    """The namespace a read command lists: ``-n``; none (all) with ``-A``; else the session's namespace
    option when the user changed it from its default; else all namespaces."""
    from drawb.session import DEFAULT_NAMESPACE

    if getattr(args, "all_namespaces", False):
        if args.namespace:
            raise UsageError("-n and -A contradict each other", hint="give one namespace with -n, or -A for all")
        return None
    if args.namespace:
        return args.namespace
    return session.namespace if session.namespace != DEFAULT_NAMESPACE else None


def _objects(session: Session, kind: str, args, namespace: str | None = None) -> list[dict]:
    """The objects of ``kind``, only the one named by ``args.name`` when given (a UsageError if none is);
    a warning of ``list_visible`` goes to ``args.visible_warning``."""
    import difflib

    from drawb.cluster.protocol import KINDS

    objects, args.visible_warning = (list_visible(session, kind, namespace) if KINDS[kind].namespaced
                                     else (session.cluster.list(kind), None))
    name = getattr(args, "name", None)
    if not name:
        return objects
    kept = [o for o in objects if (o.get("metadata") or {}).get("name") == name]
    if not kept:
        names = sorted({(o.get("metadata") or {}).get("name", "") for o in objects})
        close = difflib.get_close_matches(name, names, n=1)
        where = f" in namespace {namespace!r}" if namespace else ""
        raise UsageError(f"no {kind} named {name!r}{where}",
                         hint=f"did you mean {close[0]!r}?" if close else f"`{PROG} {args.command_name}` lists them")
    return kept


def _yaml(objects: list[dict]) -> ObjectsYaml:
    from drawb.render.export import dump_documents

    return ObjectsYaml(dump_documents(objects) if objects else "# (no objects)\n")


def _devices(session: Session, args) -> pd.DataFrame:
    frame = session.devices()
    scope: list[str] = []  # the filters applied so far, in words: what an empty result is relative to
    if args.node:
        frame = _keep(frame, frame["node"] == args.node, "node", args.node, frame["node"], scope)
        scope.append(f"on node {args.node!r}")
    if args.driver:
        frame = _keep(frame, frame["driver"] == args.driver, "driver", args.driver, frame["driver"], scope)
        scope.append(f"of driver {args.driver!r}")
    if getattr(args, "type", None):
        from drawb.inventory.view import per_driver

        types = per_driver(frame, "type")
        frame = _keep(frame, types == args.type, "type", args.type, types, scope)
    if getattr(args, "device_class", None):
        frame = _in_class(session, frame, args.device_class)
    return frame


def _keep(frame: pd.DataFrame, mask: pd.Series, what: str, value: str, values: pd.Series,
          scope: list[str]) -> pd.DataFrame:
    """The rows ``mask`` keeps; none is a UsageError listing the values there are among ``frame``'s rows."""
    kept = frame[mask.fillna(False).astype(bool)]
    if kept.empty and not frame.empty:
        known = ", ".join(sorted(str(v) for v in values.dropna().unique())) or "(none)"
        if not scope:
            raise UsageError(f"no device has {what} {value!r}", hint=f"{what}s in this cluster: {known}")
        where = " ".join(scope)
        raise UsageError(f"no device {where} has {what} {value!r}", hint=f"{what}s of the devices {where}: {known}")
    return kept


def _in_class(session: Session, frame: pd.DataFrame, class_name: str) -> pd.DataFrame:
    from drawb.commands.select import errors_warning, select_devices

    result = select_devices(session, frame, [], class_name=class_name)
    if not result.error_count:
        return result.matches
    return with_warning(result.matches, errors_warning(result))


@command(
    "devices",
    "Every device published in ResourceSlices, one row each, with allocations joined from claims.",
    _NODE,
    _DRIVER,
    arg("--type", help="only devices whose <driver>/type attribute has this value (gpu, mig, ...)"),
    arg("--class", dest="device_class", help="only devices the DeviceClass's selectors match"),
    arg("--wide", action="store_true", help="every attribute and capacity column, fully qualified"),
    _WATCH,
    _FOR,
)
def devices(session: Session, args, cell) -> pd.DataFrame:
    from drawb.inventory.view import summary_view

    def make_frame() -> pd.DataFrame:
        frame = _devices(session, args)
        frame = frame.reset_index(drop=True) if args.wide else summary_view(frame)
        refused = session.live_devices().claims_refused
        if refused is not None:
            frame = with_warning(frame, f"RbacRefused: {refused.verb} on {refused.resource} was refused for user "
                                        f'"{refused.user}"; the devices are shown without their allocations')
        return frame

    return _watched(session, args, "devices", ("ResourceSlice", "ResourceClaim"), ("node", "driver", "device"),
                    make_frame)


@command("slices", "ResourceSlices: driver, pool, generation, node and device count.", _NAME, _NODE, _DRIVER, _OUTPUT)
def slices(session: Session, args, cell) -> pd.DataFrame | ObjectsYaml:
    from drawb.inventory import slice_frame

    args.command_name = "slices"
    objects = [s for s in _objects(session, "ResourceSlice", args)
               if (not args.node or (s.get("spec") or {}).get("nodeName") == args.node)
               and (not args.driver or (s.get("spec") or {}).get("driver") == args.driver)]
    if args.output == "yaml":
        return _yaml(objects)
    return slice_frame(objects).reset_index(drop=True)


@command("classes", "DeviceClasses with their CEL selectors and extended resource names.", _NAME, _OUTPUT)
def classes(session: Session, args, cell) -> pd.DataFrame | ObjectsYaml:
    from drawb.inventory import class_frame

    args.command_name = "classes"
    objects = _objects(session, "DeviceClass", args)
    return _yaml(objects) if args.output == "yaml" else class_frame(objects)


@command("claims", "ResourceClaims: state, requests, allocated devices and the pods using them.", _NAME, _NAMESPACE,
         _ALL_NAMESPACES, _OUTPUT, _WATCH, _FOR)
def claims(session: Session, args, cell) -> pd.DataFrame | ObjectsYaml:
    from drawb.inventory import claim_frame

    args.command_name = "claims"
    namespace = read_namespace(session, args)
    if args.output == "yaml":
        return _yaml(_objects(session, "ResourceClaim", args, namespace))

    def make_frame() -> pd.DataFrame:
        frame = claim_frame(_objects(session, "ResourceClaim", args, namespace))
        return with_warning(frame, args.visible_warning) if args.visible_warning else frame

    return _watched(session, args, "claims", ("ResourceClaim",), ("namespace", "name"), make_frame, namespace)


@command("pods", "Pods that use ResourceClaims, with their claims resolved (--all: every pod, with its nvidia.com/gpu).",
         _NAME, _NAMESPACE, _ALL_NAMESPACES, _NODE,
         arg("--all", dest="every_pod", action="store_true",
             help="pods that use no claim too, with their nvidia.com/gpu (device plugin) requests"), _OUTPUT, _WATCH, _FOR)
def pods(session: Session, args, cell) -> pd.DataFrame | ObjectsYaml:
    from drawb.inventory import pod_frame
    from drawb.inventory.pods import every_pod_frame

    args.command_name = "pods"
    namespace = read_namespace(session, args)

    def objects() -> list[dict]:
        return [p for p in _objects(session, "Pod", args, namespace)
                if not args.node or (p.get("spec") or {}).get("nodeName") == args.node]

    if args.output == "yaml":
        return _yaml(objects())

    def make_frame() -> pd.DataFrame:
        pods = objects()
        frame = every_pod_frame(pods) if args.every_pod else pod_frame(pods).reset_index(drop=True)
        return with_warning(frame, args.visible_warning) if args.visible_warning else frame

    return _watched(session, args, "pods", ("Pod",), ("namespace", "pod"), make_frame, namespace)


@command("nodes", "Nodes: DRA devices published for each, beside its extended-resource allocatable (nvidia.com/gpu).",
         _NAME, _OUTPUT)
def nodes(session: Session, args, cell) -> pd.DataFrame | ObjectsYaml:
    from drawb.inventory.nodes import node_frame

    args.command_name = "nodes"
    objects = _objects(session, "Node", args)
    if args.output == "yaml":
        return _yaml(objects)
    return node_frame(objects, session.devices())


@command(
    "attrs",
    "Attribute and capacity names per driver: type and value counts, for writing selectors.",
    _DRIVER,
    _NODE,
)
def attrs(session: Session, args, cell) -> pd.DataFrame:
    from drawb.inventory import attribute_summary

    return attribute_summary(_devices(session, args))
