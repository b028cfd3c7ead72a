"""The state a front end keeps between commands: the connected cluster and defaults."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields

from drawb.api.versions import DEFAULT_KUBERNETES_VERSION
from drawb.cluster.protocol import WatchableCluster


def option(default: str | None, help: str, *, short: str | None = None):
    """A user setting: a ``DRAMagics`` traitlet and a ``drawb --<name>`` flag are made from it."""
    return field(default=default, metadata={"help": help, "short": short})


@dataclass
class Session:
    """One user's connection and settings, shared by the magics and the CLI."""

    namespace: str = option("default", "namespace for claims, templates and pods drawb creates", short="-N")
    scenario: str = option("default", "simulated scenario used when no kubeconfig is given")
    kubeconfig: str | None = option(None, "kubeconfig path of a real cluster")
    context: str | None = option(None, "kubeconfig context of a real cluster")
    snapshot: str | None = option(None, "a snapshot file (`snapshot save`) to replay in the simulated cluster")
    kubernetes_version: str = option(DEFAULT_KUBERNETES_VERSION, "Kubernetes version whose rules drawb checks against")
    template_dir: str | None = option(None, "a folder of your own manifest templates")
    prog: str = "%dra"
    user_ns: dict = field(default_factory=dict, repr=False)
    progress: Callable[[str], None] | None = field(default=None, repr=False)  # where long commands report steps
    _cluster: WatchableCluster | None = field(default=None, repr=False)
    _live: object = field(default=None, repr=False)

    @property
    def cluster(self) -> WatchableCluster:
        """The connected cluster, connecting to the configured one on first use."""
        if self._cluster is None:
            self.connect()
        return self._cluster

    @property
    def connected(self) -> WatchableCluster | None:
        """The cluster already connected, without connecting (None before the first use)."""
        return self._cluster

    def connect(
        self, *, kubeconfig: str | None = None, context: str | None = None, scenario: str | None = None,
        snapshot: str | None = None,
    ) -> WatchableCluster:
        """Open a cluster (the simulated one unless a kubeconfig, context or snapshot is given)."""
        from drawb.cluster.connect import connect

        self.close()
        self._cluster = connect(
            kubeconfig=kubeconfig or self.kubeconfig,
            context=context or self.context,
            scenario=scenario or self.scenario,
            snapshot=snapshot or (None if scenario else self.snapshot),
        )
        return self._cluster

    def devices(self):
        """The device frame with allocations, kept live between calls by watching the cluster."""
        from drawb.cluster.live import LiveDevices

        cluster = self.cluster
        if self._live is None:
            self._live = LiveDevices(cluster)
        return self._live.frame()

    def close(self) -> None:
        """Stop watching the connected cluster."""
        if self._cluster is not None:
            self._cluster.close()
        self._cluster, self._live = None, None


def session_options() -> list[Field]:
    """The user settings of a Session (name, default, ``metadata["help"]``), in declaration order."""
    return [f for f in fields(Session) if "help" in f.metadata]
