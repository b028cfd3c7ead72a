"""The state a front end keeps between commands: the connected cluster and defaults."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields

from drawb import versions
from drawb.cluster.protocol import NotConnected, WatchableCluster
from drawb.errors import PROG, UsageError

DEFAULT_NAMESPACE = "default"
TARGETS = ("simulated", "in-cluster", "kubeconfig")
TARGET_ENV = "DRAWB_TARGET"


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
    target: str | None = option(None, "where a plain `connect` goes: simulated, in-cluster (the pod's service "
                                f"account) or kubeconfig (its current context); default ${TARGET_ENV}, else simulated")
    snapshot: str | None = option(None, "a snapshot file (`snapshot save`) to replay in the simulated cluster")
    kubernetes_version: str | None = option(None, "Kubernetes version the simulated cluster runs (e.g. 1.36; default: "
                                            "its scenario's, else " + versions.DEFAULT + ") and whose rules drawb checks "
                                            "against without a cluster (a snapshot replays its own)")
    feature_gates: str | None = option(None, "DRA feature gates of the simulated cluster, e.g. "
                                       "DRAExtendedResource=true,DRADeviceTaints=true (default: its scenario's, else "
                                       "the version's defaults; a snapshot replays its own)")
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
    _cluster_namespace: str | None = field(default=None, repr=False)  # the namespace the cluster gave
    keep_state: bool = field(default=False, repr=False)  # the command line's: the simulated cluster kept in a file
    _kept: object = field(default=None, repr=False)  # the KeptState whose lock this session holds
    _kept_writes: int | None = field(default=None, repr=False)  # the cluster's writes when read (None: new)
    _finish_applies: bool = field(default=True, repr=False)  # whether the command's first use finishes rollbacks

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
        if self._finish_applies:
            self._finish_applies = False
            self._finish_interrupted_applies()
        return self._cluster

    def _finish_interrupted_applies(self) -> None:
        """Roll back the applies against this cluster that were cut short (their process killed, or the server
        gone while it rolled back), and say so: the first thing a command does with a real cluster."""
        finish = getattr(self._cluster, "finish_interrupted_applies", None)
        for outcome in finish() if finish is not None else []:
            line = outcome.finished_line().replace(PROG, self.prog)
            if self.progress is not None:
                self.progress(line)
            else:
                print(line, file=sys.stderr)

    def leave_interrupted_applies(self) -> None:
        """This command looks at interrupted applies itself (cleanup): its first use of the cluster leaves them."""
        self._finish_applies = False

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
        in_cluster: bool = False,
        kubernetes_version: str | None = None,
        feature_gates: str | None = None,
        reset: bool = False,
    ) -> WatchableCluster:
        """Open a cluster: the simulated one when ``simulated``, a ``scenario``, a ``snapshot``, a
        ``kubernetes_version`` or ``feature_gates`` (``Name=true,...``) is given (whatever the options say); the
        pod's service account when ``in_cluster``; else the options' kubeconfig or context; else the ``target``
        option's (simulated: the snapshot or scenario option's, at the version and gates options').

        A failure leaves the session disconnected, and later commands say so. The namespace option, left at
        its default, becomes the cluster's: a kubeconfig context's, or the pod's service account's.
        ``reset``: the simulated cluster starts afresh, its kept state (``keep_state``) forgotten.
        """
        from drawb.cluster.connect import connect

        self.close()
        self._failed = None
        self._take_namespace(None)
        if simulated or reset or scenario or snapshot or kubernetes_version or feature_gates is not None:
            self._cluster = self._simulated(scenario, snapshot, kubernetes_version, feature_gates, reset)
            return self._cluster
        explicit = bool(kubeconfig or context or in_cluster)
        target = "in-cluster" if in_cluster else self._target(kubeconfig or context)
        try:
            if target == "in-cluster":  # a snapshot option beside it is a usage error
                self._cluster = connect(in_cluster=True, snapshot=self.snapshot, timeouts=self.timeouts())
            elif target == "kubeconfig":
                self._cluster = connect(kubeconfig=kubeconfig or self.kubeconfig, context=context or self.context,
                                        snapshot=self.snapshot, use_kubeconfig=True, timeouts=self.timeouts())
            else:
                self._cluster = self._simulated(None, None, None, None, reset)
        except NotConnected as exc:
            if explicit:  # an explicit connect; a configured one fails again on every use anyway
                self._failed = exc
            raise
        self._take_namespace(getattr(self._cluster, "default_namespace", None))
        return self._cluster

    def _simulated(self, scenario: str | None, snapshot: str | None, kubernetes_version: str | None,
                   feature_gates: str | None, reset: bool = False) -> WatchableCluster:
        """The simulated cluster: the snapshot replayed (the version and gates given here are refused with it;
        the options' are not its own), else the scenario at the version and gates given, else the options'.
        With ``keep_state``, the one kept from the last command (``drawb.cluster.sim.state``), locked until
        ``close``; ``reset`` forgets the kept one."""
        from drawb.cluster.connect import connect
        from drawb.cluster.sim.state import KeptState, key_for

        chosen, replay, kubernetes_version, gates = self._simulated_choice(scenario, snapshot, kubernetes_version,
                                                                          feature_gates)
        key = key_for(chosen, replay, kubernetes_version, gates)
        kept = KeptState(key)
        if not (self.keep_state or reset):  # the notebook's cluster lives in its kernel
            return self._built(key, connect(scenario=chosen, snapshot=replay, kubernetes_version=kubernetes_version,
                                            feature_gates=gates))
        kept.acquire(self.progress)
        try:
            if reset:
                kept.remove()
            cluster = kept.load() if self.keep_state else None
            writes = None if cluster is None else cluster.writes
            if cluster is None:
                cluster = self._built(key, connect(scenario=chosen, snapshot=replay,
                                                   kubernetes_version=kubernetes_version, feature_gates=gates))
        except BaseException:
            kept.release()
            raise
        if self.keep_state:
            self._kept, self._kept_writes = kept, writes
        else:
            kept.release()
        return cluster

    def _simulated_choice(self, scenario: str | None, snapshot: str | None, kubernetes_version: str | None,
                          feature_gates: str | None) -> tuple[str, str | None, str | None, dict[str, bool] | None]:
        """The scenario, snapshot, version and gates (parsed) a simulated connect with these options makes."""
        replay = snapshot or (None if scenario else self.snapshot)
        if not replay:
            kubernetes_version = kubernetes_version or self.kubernetes_version
            feature_gates = self.feature_gates if feature_gates is None else feature_gates
        gates = None if feature_gates is None else versions.parse_feature_gates(feature_gates)
        return scenario or self.scenario, replay, kubernetes_version, gates

    def simulated_key(self):
        """The key (``drawb.cluster.sim.state.StateKey``) of the simulated cluster: the connected one's, else
        the one the options choose (read without connecting)."""
        from drawb.cluster.sim.state import key_for, key_of

        if self._cluster is not None and getattr(self._cluster, "simulated", False):
            return key_of(self._cluster)
        return key_for(*self._simulated_choice(None, None, None, None))

    @staticmethod
    def _built(key, cluster: WatchableCluster) -> WatchableCluster:
        cluster.state_key = key  # where it is kept: its scenario, version and gates
        return cluster

    def adopt(self, cluster: WatchableCluster) -> None:
        """Connect to ``cluster``, a simulated cluster read from a state file; with ``keep_state`` it becomes
        the kept one of its scenario, version and gates."""
        from drawb.cluster.sim.state import KeptState, key_of

        self.close()
        self._failed = None
        self._take_namespace(None)
        if self.keep_state:
            kept = KeptState(key_of(cluster))
            kept.acquire(self.progress)
            self._kept, self._kept_writes = kept, None
        self._cluster = cluster

    def keep_simulated(self, path: str | None = None):
        """Write the connected simulated cluster to ``path``, else to its kept state file (the command line's);
        the file's ``drawb.cluster.sim.state.Header``."""
        from drawb.cluster.sim.state import KeptState, key_of, write

        cluster = self.cluster
        if not getattr(cluster, "simulated", False):
            raise UsageError("only the simulated cluster is kept in a state file; a real cluster keeps its own",
                             hint=f"`{PROG} snapshot save FILE` saves a real cluster's DRA state")
        if path is not None:
            return write(cluster, None, path)
        if self._kept is not None:  # this session holds the lock
            return self._kept.save(cluster)
        kept = KeptState(key_of(cluster))
        kept.acquire(self.progress)
        try:
            return kept.save(cluster)
        finally:
            kept.release()

    def kept_state(self):
        """While this session holds the kept simulated cluster: its file, whether this command made it new, and
        the options that choose it."""
        if self._kept is None:
            return None
        return self._kept.path, self._kept_writes is None, self._kept.key.options()

    def release_state(self) -> None:
        """Write the kept simulated cluster back now and let other commands have it: what this command does
        from now on is not kept (a command that only follows the cluster, e.g. ``--watch``)."""
        kept, self._kept = self._kept, None
        if kept is None:
            return
        try:
            if self._cluster is not None and self._cluster.writes != self._kept_writes:
                kept.save(self._cluster)
        finally:
            kept.release()

    @property
    def rules_version(self) -> str:
        """The Kubernetes version whose rules apply without a cluster: the kubernetes_version option, else
        drawb's default."""
        return self.kubernetes_version or versions.DEFAULT

    def settle_namespace(self) -> None:
        """Before a command: the namespace option, left at its default, becomes the namespace of the cluster the
        session is connected to or will connect to (read without connecting): a kubeconfig context's, as for
        kubectl, or the pod's service account's; another cluster's is given back."""
        if self._cluster is not None:
            self._take_namespace(getattr(self._cluster, "default_namespace", None))
            return
        try:
            target = None if self.snapshot else self._target()
        except UsageError:
            target = None  # connecting says what is wrong with the target
        namespace = None
        if target == "kubeconfig":
            from drawb.cluster.kube.context import read_context

            context = read_context(self.kubeconfig, self.context)
            namespace = context.namespace if context is not None else None
        elif target == "in-cluster":
            from drawb.cluster.service_account import mounted

            mount = mounted()
            namespace = mount.namespace() if mount is not None else None
        self._take_namespace(namespace)

    def _take_namespace(self, namespace: str | None) -> None:
        if self._cluster_namespace is not None and self.namespace == self._cluster_namespace:
            self.namespace = DEFAULT_NAMESPACE  # the last cluster's namespace, not the user's choice
        self._cluster_namespace = None
        if namespace and self.namespace == DEFAULT_NAMESPACE:
            self.namespace = self._cluster_namespace = namespace

    def timeouts(self):
        """The ``connect_timeout`` and ``read_timeout`` options as a ``drawb.cluster.kube.rest.Timeouts``."""
        from drawb.cluster.kube.rest import Timeouts

        return Timeouts(_seconds(self.connect_timeout, "connect_timeout"), _seconds(self.read_timeout, "read_timeout"))

    def _target(self, kubeconfig_named: object = None) -> str:
        """Where a connect without ``--in-cluster`` goes: a kubeconfig when one or a context is named (or set
        as an option), else the target option's."""
        if kubeconfig_named or self.kubeconfig or self.context:
            return "kubeconfig"
        return self.default_target()

    def default_target(self) -> str:
        """Where a plain connect goes: the target option, else ``$DRAWB_TARGET``, else ``simulated``."""
        target, source = (self.target, "the target option") if self.target else \
            (os.environ.get(TARGET_ENV), f"${TARGET_ENV}")
        if not target:
            return "simulated"
        if target not in TARGETS:
            raise UsageError(f"{source} is {target!r}; it must be one of {', '.join(TARGETS)}",
                             hint="simulated: the embedded cluster; in-cluster: the pod's service account; kubeconfig: "
                                  "its current context")
        return target

    def mark_unused(self) -> None:
        """Start a command: ``simulated_source`` then tells whether it read the simulated cluster, and its first use
        of a real cluster finishes the rollback of applies cut short there."""
        self._used = False
        self._finish_applies = True

    def simulated_source(self) -> str | None:
        """The simulated cluster's description when the command since ``mark_unused`` read it, else None."""
        if not self._used or self._cluster is None or not getattr(self._cluster, "simulated", False):
            return None
        return f"{self._cluster.description} (Kubernetes {versions.rules_minor(self._cluster.server_version())} rules)"

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
        """Stop watching the connected cluster; a kept simulated cluster is written back (when it changed)."""
        if self._cluster is not None:
            self._cluster.close()
        try:
            self.release_state()
        finally:
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
