"""Read commands: devices, slices, classes, claims, pods and attrs as DataFrames."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command, with_warning
from drawb.errors import UsageError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

_NODE = arg("--node", help="only devices on this node")
_DRIVER = arg("--driver", help="only devices of this driver, e.g. gpu.nvidia.com")
_NAMESPACE = arg("-n", "--namespace", help="only this namespace (default: all namespaces)")
_WATCH = arg("--watch", action="store_true",
             help="keep the table current as the cluster changes (the command line prints changes), until interrupted")
_FOR = arg("--for", dest="watch_for", type=float, metavar="SECONDS", help="with --watch: stop after this many seconds")


def _watched(session: Session, args, name: str, kinds: tuple[str, ...], key: tuple[str, ...], make_frame):
    """``make_frame()``, or with ``--watch`` a WatchedTable the front end keeps showing."""
    if args.watch_for is not None and not args.watch:
        raise UsageError("--for needs --watch", hint=f"e.g. `{session.prog} {name} --watch --for 60`")
    if not args.watch:
        return make_frame()
    from drawb.commands.watching import WatchedTable

    return WatchedTable(name, session.cluster, kinds, make_frame, key, args.watch_for)


def list_visible(session: Session, kind: str, namespace: str | None) -> tuple[list[dict], str | None]:
    """Objects of ``kind`` in ``namespace`` (or everywhere); where RBAC refuses every namespace, those of the
    session's namespace, with a warning saying so."""
    from drawb.access.refusal import RbacRefused

    try:
        return session.cluster.list(kind, namespace), None
    except RbacRefused as exc:
        if namespace is not None:
            raise
        objects = session.cluster.list(kind, session.namespace)
        return objects, (f"RbacRefused: {exc.verb} on {exc.resource} in all namespaces was refused for user "
                         f'"{exc.user}"; showing namespace {session.namespace} only (choose one with -n)')


def _devices(session: Session, args) -> pd.DataFrame:
    frame = session.devices()
    if args.node:
        frame = _keep(frame, frame["node"] == args.node, "node", args.node, frame["node"])
    if args.driver:
        frame = _keep(frame, frame["driver"] == args.driver, "driver", args.driver, frame["driver"])
    if getattr(args, "type", None):
        from drawb.inventory.view import per_driver

        types = per_driver(frame, "type")
        frame = _keep(frame, types == args.type, "type", args.type, types)
    if getattr(args, "device_class", None):
        frame = _in_class(session, frame, args.device_class)
    return frame


def _keep(frame: pd.DataFrame, mask: pd.Series, what: str, value: str, values: pd.Series) -> pd.DataFrame:
    kept = frame[mask.fillna(False).astype(bool)]
    if kept.empty and not frame.empty:
        known = ", ".join(sorted(str(v) for v in values.dropna().unique()))
        raise UsageError(f"no device has {what} {value!r}", hint=f"{what}s in this cluster: {known}")
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
        return frame.reset_index(drop=True) if args.wide else summary_view(frame)

    return _watched(session, args, "devices", ("ResourceSlice", "ResourceClaim"), ("node", "driver", "device"),
                    make_frame)


@command("slices", "ResourceSlices: driver, pool, generation, node and device count.", _NODE, _DRIVER)
def slices(session: Session, args, cell) -> pd.DataFrame:
    from drawb.inventory import slice_frame

    frame = slice_frame(session.cluster.list("ResourceSlice"))
    if args.node:
        frame = frame[frame["node"] == args.node]
    if args.driver:
        frame = frame[frame["driver"] == args.driver]
    return frame.reset_index(drop=True)


@command("classes", "DeviceClasses with their CEL selectors and extended resource names.")
def classes(session: Session, args, cell) -> pd.DataFrame:
    from drawb.inventory import class_frame

    return class_frame(session.cluster.list("DeviceClass"))


@command("claims", "ResourceClaims: state, requests, allocated devices and the pods using them.", _NAMESPACE,
         _WATCH, _FOR)
def claims(session: Session, args, cell) -> pd.DataFrame:
    from drawb.inventory import claim_frame

    def make_frame() -> pd.DataFrame:
        claims, warning = list_visible(session, "ResourceClaim", args.namespace)
        frame = claim_frame(claims)
        return with_warning(frame, warning) if warning else frame

    return _watched(session, args, "claims", ("ResourceClaim",), ("namespace", "name"), make_frame)


@command("pods", "Pods that use ResourceClaims, with their claims resolved.", _NAMESPACE, _NODE, _WATCH, _FOR)
def pods(session: Session, args, cell) -> pd.DataFrame:
    from drawb.inventory import pod_frame

    def make_frame() -> pd.DataFrame:
        pods, warning = list_visible(session, "Pod", args.namespace)
        frame = pod_frame(pods)
        if warning:
            frame = with_warning(frame, warning)
        if args.node:
            frame = frame[frame["node"] == args.node]
        return frame.reset_index(drop=True)

    return _watched(session, args, "pods", ("Pod",), ("namespace", "pod"), make_frame)


@command(
    "attrs",
    "Attribute and capacity names per driver: type and value counts, for writing selectors.",
    _DRIVER,
    _NODE,
)
def attrs(session: Session, args, cell) -> pd.DataFrame:
    from drawb.inventory import attribute_summary

    return attribute_summary(_devices(session, args))
