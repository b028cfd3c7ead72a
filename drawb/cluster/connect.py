"""Choose and open a cluster: the simulated one by default, a real one through a kubeconfig,
or a snapshot of a real one replayed in the simulated cluster."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from drawb.cluster.protocol import NotConnected, WatchableCluster
from drawb.errors import UsageError

if TYPE_CHECKING:
    from drawb.cluster.kube.rest import Timeouts


class KubeconfigInvalid(NotConnected):
    """A kubeconfig file that is not YAML; names the file, line and column."""

    hint = "fix the file (kubectl config view shows what kubectl reads), or pass another with --kubeconfig PATH"


def connect(
    *, kubeconfig: str | None = None, context: str | None = None, scenario: str | None = None,
    snapshot: str | None = None, timeouts: Timeouts | None = None,
) -> WatchableCluster:
    """A real cluster when a kubeconfig or context is named (its requests bounded by ``timeouts``), the
    replayed ``snapshot`` file when one is named, else the simulated ``scenario``.

    A NotConnected error carries ``server``: the API server's URL, or the kubeconfig when none was read.
    """
    if snapshot and (kubeconfig or context):
        raise UsageError("--snapshot replays a saved cluster offline; it cannot go with --kubeconfig or --context",
                         hint="name either a snapshot file or a real cluster")
    if kubeconfig or context:
        from drawb.cluster.kube import KubeCluster

        check_kubeconfig_yaml(kubeconfig)
        try:
            cluster = KubeCluster(kubeconfig=kubeconfig, context=context, timeouts=timeouts)
        except NotConnected as exc:
            exc.server = kubeconfig or "$KUBECONFIG or ~/.kube/config"
            raise
        try:
            cluster.server_version()  # fail now, with a clear message, if the server is unreachable
        except NotConnected as exc:
            exc.server = cluster.client.configuration.host
            raise
        return cluster
    if snapshot:
        from drawb.cluster.snapshot.replay import replay

        return replay(snapshot)
    from drawb.cluster.sim.cluster import SimCluster

    return SimCluster(scenario or "default")


def check_kubeconfig_yaml(kubeconfig: str | None) -> None:
    """Raise KubeconfigInvalid (file, line, column) when a kubeconfig file is not YAML; missing files pass
    (the client names them)."""
    import yaml

    paths = [kubeconfig] if kubeconfig else (os.environ.get("KUBECONFIG") or "~/.kube/config").split(os.pathsep)
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.is_file():
            continue
        try:
            yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            error = KubeconfigInvalid(f"the kubeconfig {where} is not valid YAML: {problem}")
            error.server = str(path)
            raise error from None

