"""The apps/v1 controllers of the simulated kube-controller-manager, behind one entry in the control plane.

``AppsControllers`` follows every change the control plane reports (``changed``), keeps the objects its
controllers read in an ``ObjectIndex``, queues the work items each controller's ``wake`` makes, and on
``run`` hands them to the controllers' ``sync``, with itself as their ``ControllerApi``. A controller
writes new objects only (``store``), so a pod it creates is then scheduled and run like any pod.
"""

from __future__ import annotations

from collections.abc import Hashable

from drawb.cluster.sim.controllers.api import Controller
from drawb.cluster.sim.controllers.daemonset import DaemonSetController
from drawb.cluster.sim.controllers.deployment import DeploymentController
from drawb.cluster.sim.controllers.garbage import GarbageCollector
from drawb.cluster.sim.controllers.host import Host, NsKey
from drawb.cluster.sim.controllers.index import ObjectIndex
from drawb.cluster.sim.controllers.replicaset import ReplicaSetController
from drawb.cluster.sim.controllers.statefulset import StatefulSetController
from drawb.cluster.sim.events import EventRecorder


class AppsControllers:
    """The garbage collector and the Deployment, ReplicaSet, StatefulSet and DaemonSet controllers."""

    ACTION = "apps"

    def __init__(self, host: Host):
        self.host = host
        self.index = ObjectIndex()
        self.controllers: list[Controller] = [GarbageCollector(), DeploymentController(), ReplicaSetController(),
                                              StatefulSetController(), DaemonSetController()]
        self._watchers: dict[str, list[int]] = {}  # kind -> the controllers its changes wake
        for number, controller in enumerate(self.controllers):
            for kind in controller.watches:
                self._watchers.setdefault(kind, []).append(number)
        self._work: dict[tuple[int, Hashable], None] = {}

    @property
    def events(self) -> EventRecorder:
        """The control plane's event recorder."""
        return self.host.events

    @property
    def nodes(self) -> dict[str, dict]:
        """The cluster's nodes by name."""
        return self.host.nodes

    @property
    def queued(self) -> bool:
        """Whether work waits."""
        return bool(self._work)

    def changed(self, kind: str, key: NsKey, obj: dict, deleted: bool) -> None:
        """Index the object and queue the work its change makes."""
        self.index.changed(kind, obj, deleted)
        for number in self._watchers.get(kind, ()):
            woken = self.controllers[number].wake(kind, obj, deleted, self.index)
            self._work.update(dict.fromkeys((number, item) for item in woken))

    def run(self) -> None:
        """Do the queued work, and what it makes, until none is left."""
        while self._work:
            number, item = next(iter(self._work))
            del self._work[(number, item)]
            self.controllers[number].sync(self, item)

    def fire(self, key: NsKey, uid: str) -> None:
        """No timer of these controllers exists (``minReadySeconds`` is not simulated)."""

    def store(self, obj: dict) -> dict:
        """Store a new object; the control plane's loops hear of it."""
        return self.host.create(obj)

    def remove(self, kind: str, namespace: str | None, name: str) -> None:
        """Delete an object."""
        self.host.remove(kind, namespace or "", name)

    def timestamp(self) -> str:
        """Now, RFC 3339."""
        return self.host.timestamp()
