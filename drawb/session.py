"""The state a front end keeps between commands: the connected cluster and defaults."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields

from drawb import versions
from drawb.cluster.protocol import NotConnected, WatchableCluster
from drawb.errors import PROG, UsageError

DEFAULT_NAMESPACE = "default"


def option(default: str | None, help: str, *, short: str | None = None):
    """A user setting: a ``DRAMagics`` traitlet and a ``drawb --<name>`` flag are made from it."""
    return field(default=default, metadata={"help": help, "short": short})


@dataclass
class Session:
    """One user's connection and settings, shared by the magics and the CLI."""

    namespace: str = option(DEFAULT_NAMESPACE, "namespace for what drawb creates, and the one the read commands "
                            "show once you set it (a real cluster's kubeconfig context may set it, as for kubectl)",
                            short="-n")
    scenario: str = option("default", "simulated scenario used when no kubeconfig is given")
    kubeconfig: str | None = option(None, "kubeconfig path of a real cluster")
    context: str | None = option(None, "kubeconfig context of a real cluster")
    snapshot: str | None = option(None, "a snapshot file (`snapshot save`) to replay in the simulated cluster")
    kubernetes_version: str = option(versions.DEFAULT, "Kubernetes version whose rules drawb checks against")
    template_dir: str | None = option(None, "a folder of your own manifest templates")
    progress_bar: str = option("auto", "a progress bar on stderr when validate or apply runs over 2 s: auto (in a "
                               "terminal or a notebook), always, or never")
    connect_timeout: str = option(os.environ.get("DRAWB_CONNECT_TIMEOUT", "5"),
                                  "seconds to wait for a real API server to accept a connection (TCP and TLS); "
                                  "0: no limit (default $DRAWB_CONNECT_TIMEOUT, else 5)")
    read_timeout: str = option(os.environ.get("DRAWB_READ_TIMEOUT", "10"),
                               "seconds to wait for each read of a real API server's answer (watches and followed "
                               "logs excepted); 0: no limit (default $DRAWB_READ_TIMEOUT, else 10)")
    prog: str = "%dra"
    user_ns: dict = field(default_factory=dict, repr=False)
    progress: Callable[[str], None] | None = field(default=None, repr=False)  # where long commands report steps
    _cluster: WatchableCluster | None = field(default=None, repr=False)
    _live: object = field(default=None, repr=False)
    _failed: NotConnected | None = field(default=None, repr=False)  # the last explicit connect, when it failed
    _used: bool = field(default=False, repr=False)  # whether the cluster was read since ``mark_unused``
    _cluster_namespace: str | None = field(default=None, repr=False)  # the namespace a kubeconfig context gave

    @property
    def cluster(self) -> WatchableCluster:
        """The connected cluster, connecting to the configured one on first use.

        After a failed ``connect`` there is none: NotConnected says why until the next connect succeeds
        (never a silent fall-back to the simulated cluster).
        """
        if self._cluster is None:
            if self._failed is not None:
                raise NotConnected(
                    f"not connected: the last connect to {self._failed.server} failed: {self._failed}",
                    hint=f"fix it and run `{PROG} connect` again, or choose the simulated cluster explicitly with "
                    f"`{PROG} connect --simulated`",
                )
            self.connect()
        self._used = True
        return self._cluster

    @property
    def connected(self) -> WatchableCluster | None:
        """The cluster already connected, without connecting (None before the first use)."""
        return self._cluster

    def connect(
        self,
        *,
        kubeconfig: str | None = None,
        context: str | None = None,
        scenario: str | None = None,
        snapshot: str | None = None,
        simulated: bool = False,
    ) -> WatchableCluster:
        """Open a cluster: the simulated one when ``simulated``, a ``scenario`` or a ``snapshot`` is given
        (whatever the options say), else the options' kubeconfig or context, else the simulated cluster of
        the snapshot or scenario option.

        A failure leaves the session disconnected, and later commands say so.
        """
        from drawb.cluster.connect import connect

        self.close()
        self._failed = None
        self._take_namespace(None)
        replay = snapshot or (None if scenario else self.snapshot)
        if simulated or scenario or snapshot:
            self._cluster = connect(scenario=scenario or self.scenario, snapshot=replay)
            return self._cluster
        try:
            self._cluster = connect(kubeconfig=kubeconfig or self.kubeconfig, context=context or self.context,
                                    scenario=self.scenario, snapshot=replay, timeouts=self.timeouts())
        except NotConnected as exc:
            if kubeconfig or context:  # an explicit connect; a configured one fails again on every use anyway
                self._failed = exc
            raise
        self._take_namespace(getattr(self._cluster, "default_namespace", None))
        return self._cluster

    def settle_namespace(self) -> None:
        """Before a command: the namespace option, left at its default, becomes the namespace of the kubeconfig
        context the session is connected through (or will connect through: read without connecting), as for
        kubectl; another cluster's is given back."""
        if self._cluster is not None:
            namespace = getattr(self._cluster, "default_namespace", None)
        elif (self.kubeconfig or self.context) and not self.snapshot:
            from drawb.cluster.kube.context import read_context

            context = read_context(self.kubeconfig, self.context)
            namespace = context.namespace if context is not None else None
        else:
            namespace = None
        self._take_namespace(namespace)

    def _take_namespace(self, namespace: str | None) -> None:
        if self._cluster_namespace is not None and self.namespace == self._cluster_namespace:
            self.namespace = DEFAULT_NAMESPACE  # the last context's namespace, not the user's choice
        self._cluster_namespace = None
        if namespace and self.namespace == DEFAULT_NAMESPACE:
            self.namespace = self._cluster_namespace = namespace

    def timeouts(self):
        """The ``connect_timeout`` and ``read_timeout`` options as a ``drawb.cluster.kube.rest.Timeouts``."""
        from drawb.cluster.kube.rest import Timeouts

        return Timeouts(_seconds(self.connect_timeout, "connect_timeout"), _seconds(self.read_timeout, "read_timeout"))

    def mark_unused(self) -> None:
        """Start a command: ``simulated_source`` then tells whether it read the simulated cluster."""
        self._used = False

    def simulated_source(self) -> str | None:
        """The simulated cluster's description when the command since ``mark_unused`` read it, else None."""
        if not self._used or self._cluster is None or not getattr(self._cluster, "simulated", False):
            return None
        minor = ".".join(self._cluster.server_version().lstrip("v").split(".")[:2])
        return f"{self._cluster.description} (Kubernetes {minor} rules)"

    def devices(self):
        """The device frame with allocations, kept live between calls by watching the cluster."""
        return self.live_devices().frame()

    def live_devices(self):
        """The watcher that keeps ``devices()`` current (a ``drawb.cluster.live.LiveDevices``, made on first use)."""
        from drawb.cluster.live import LiveDevices

        cluster = self.cluster
        if self._live is None:
            self._live = LiveDevices(cluster)
        return self._live

    def close(self) -> None:
        """Stop watching the connected cluster."""
        if self._cluster is not None:
            self._cluster.close()
        self._cluster, self._live = None, None


def session_options() -> list[Field]:
    """The user settings of a Session (name, default, ``metadata["help"]``), in declaration order."""
    return [f for f in fields(Session) if "help" in f.metadata]


def _seconds(value: object, name: str) -> float | None:
    """An option's seconds (None for 0: no limit), or a UsageError naming the option."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if not 0 <= seconds < float("inf"):  # also NaN
        raise UsageError(f"{name} is {value!r}; it must be a number of seconds (0: no limit)",
                         hint=f"e.g. --{name.replace('_', '-')} 30, or %config DRAMagics.{name} = '30'")
    return seconds or None
