"""A fake NVIDIA DRA driver for the local control plane: devices published, logs served by kwok.

It does what the NVIDIA driver's kubelet plugin and a real node would do, minus the hardware:

* publishes GPU nodes, the driver's ResourceSlices (owned by their Node, as the plugin publishes
  them) and the chart's DeviceClasses, all labelled ``app.kubernetes.io/managed-by: drawb``;
* watches pods; as soon as a pod appears it points kwok at an empty CRI log file per container
  with a ``Logs`` object, and once the pod is bound (its claims are then allocated by the real
  scheduler) it appends what that container's command prints for exactly the devices of the
  claims it names (``nvidia-smi -L``, ``--query-gpu``, plain ``nvidia-smi``: the simulated
  cluster's own ``drawb.cluster.sim.podlogs``), so ``kubectl logs [-f]`` returns them;
* ends pods as a kubelet does once kwok reports them Running: when every container's command
  ended, a pod under restartPolicy Never or OnFailure becomes Succeeded (all exited 0) or, under
  Never, Failed. kwok itself only completes pods owned by a Job.
* lets a test make a namespace's pods see the wrong devices: a ConfigMap ``drawb-fake-driver``
  there with ``nvidia-smi: wrong-uuid`` or ``no-gpu`` (``FAULTS``).

Run it as ``python -m drawb.testing.fake_driver --kubeconfig K --scenario default`` (or with
``--objects FILE`` for any YAML list of Nodes, ResourceSlices and DeviceClasses).
"""

from __future__ import annotations

import argparse
import copy
import logging
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml

from drawb.cluster.kube.informer import Informer
from drawb.cluster.protocol import ClusterError, kind_of
from drawb.cluster.sim.catalog import MODELS
from drawb.cluster.sim.podlogs import Run, simulate
from drawb.testing.api import Api, path_for

DRIVER = "gpu.nvidia.com"
FIELD_MANAGER = "drawb-fake-driver"
MANAGED_BY = {"app.kubernetes.io/managed-by": "drawb"}
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
                 "selfLink", "ownerReferences")

PUBLISH_WORKERS = 8
PUBLISH_BATCH = 500
FATAL = "cannot start: "  # prefixes the one log line that says why the driver gave up

log = logging.getLogger("drawb.fake_driver")


def ready_timeout(nodes: int) -> float:
    """How long to wait for kwok to mark ``nodes`` nodes Ready: 60 s, plus 60 ms a node.

    kwok's node-initialize stage patches each node's status once, a few at a time; on 2 busy
    cores that has been seen at 30-60 nodes a second.
    """
    return 60 + 0.06 * nodes


def node_ready(node: dict) -> bool:
    """Whether a Node is Ready and free of the ``node.kubernetes.io/*`` taints (not-ready, unreachable)."""
    return (any(c["type"] == "Ready" and c["status"] == "True" for c in node.get("status", {}).get("conditions", []))
            and not any(t["key"].startswith("node.kubernetes.io/") for t in node.get("spec", {}).get("taints", [])))


class NodesNotReady(TimeoutError):
    """Some nodes were not Ready in time; the message says how many and what they report."""

    def __init__(self, missing: set[str], total: int, timeout: float, nodes: dict[str, dict]):
        absent = sorted(missing - set(nodes))
        present = sorted(missing & set(nodes))
        causes = set()
        for name in present:
            node = nodes[name]
            conditions = {c["type"]: c for c in node.get("status", {}).get("conditions", [])}
            ready = conditions.get("Ready")
            taints = [t["key"] for t in node.get("spec", {}).get("taints", []) if t["key"].startswith("node.kubernetes.io/")]
            if ready is None:
                causes.add("no Ready condition yet (kwok has not initialised them: is kwok running and keeping up?)")
            elif ready["status"] != "True":
                causes.add(f"Ready={ready['status']} ({ready.get('reason', '')}: the node lease was not renewed in time)")
            elif taints:
                causes.add(f"still tainted {', '.join(sorted(set(taints)))} (the node lifecycle controller lags)")
        if absent:
            causes.add(f"{len(absent)} not found (first: {absent[0]})")
        example = (present or absent)[0]
        super().__init__(f"{len(missing)} of {total} nodes not Ready after {timeout:.0f}s, e.g. {example}: "
                         + "; ".join(sorted(causes)))


@dataclass
class Inventory:
    """What a driver publishes: Nodes, ResourceSlices and DeviceClasses as JSON dicts."""

    nodes: list[dict] = field(default_factory=list)
    resource_slices: list[dict] = field(default_factory=list)
    device_classes: list[dict] = field(default_factory=list)

    @classmethod
    def from_objects(cls, objects: Iterable[dict]) -> Inventory:
        """Sort objects by kind; a node named by a slice but not given is made up (bare)."""
        inv = cls()
        by_kind = {"Node": inv.nodes, "ResourceSlice": inv.resource_slices, "DeviceClass": inv.device_classes}
        for obj in objects:
            if obj.get("kind") not in by_kind:
                raise ValueError(f"cannot publish a {obj.get('kind')!r}: only {', '.join(by_kind)} (resource.k8s.io/v1)")
            by_kind[obj["kind"]].append(obj)
        known = {n["metadata"]["name"] for n in inv.nodes}
        for node_name in sorted({s["spec"].get("nodeName") for s in inv.resource_slices} - known - {None}):
            inv.nodes.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node_name}})
        return inv

    @classmethod
    def from_files(cls, paths: Iterable[Path]) -> Inventory:
        """Load YAML files holding objects or ``List``s of them."""
        objects = []
        for path in paths:
            for doc in yaml.safe_load_all(Path(path).read_text()):
                if doc:
                    objects += doc["items"] if doc.get("kind", "").endswith("List") else [doc]
        return cls.from_objects(objects)

    @classmethod
    def from_scenario(cls, name: str) -> Inventory:
        """The simulated cluster's scenario of that name, so the sim and the live tests agree."""
        from drawb.cluster.sim.scenarios import build_scenario

        scenario = build_scenario(name)
        return cls(list(scenario.nodes), list(scenario.resource_slices), list(scenario.device_classes))


def _clean(obj: dict, kind: str, api_version: str) -> dict:
    """An object ready to apply: server-set metadata dropped, drawb's label added, Node sizes kept."""
    meta = {k: v for k, v in obj.get("metadata", {}).items() if k not in SERVER_FIELDS}
    meta["labels"] = {**meta.get("labels", {}), **MANAGED_BY}
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"].rstrip("-")
    meta.pop("generateName", None)
    out = {"apiVersion": api_version, "kind": kind, "metadata": meta}
    if "spec" in obj:
        out["spec"] = obj["spec"]
    if kind == "Node":  # kwok reports conditions, addresses and versions; keep the sizes
        sizes = {k: v for k, v in obj.get("status", {}).items() if k in ("capacity", "allocatable")}
        if sizes:
            out["status"] = sizes
    return out


def cri_log(lines: list[str], now: datetime | None = None) -> str:
    """Lines in the CRI container log format kwok reads (``<time> stdout F <text>``)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return "".join(f"{stamp} stdout F {line}\n" for line in lines)


PARENT_MEMORY_MIB = {m.product_name: m.memory_mib for m in MODELS.values()}


def container_runs(pod: dict, per_container: dict[str, list[dict]], now: datetime | None = None) -> dict[str, Run]:
    """Container name -> what its command prints and how it ends, for the devices it sees."""
    when = (now or datetime.now(UTC)).strftime("%a %b %e %H:%M:%S %Y")
    return {
        c["name"]: simulate([*c.get("command", []), *c.get("args", [])], per_container[c["name"]], when,
                            PARENT_MEMORY_MIB)
        for c in pod["spec"]["containers"]
    }


def completed_status(pod: dict, runs: dict[str, Run], now: datetime | None = None) -> dict | None:
    """The status a kubelet reports once every container ended; None while the pod runs on.

    Under restartPolicy Always nothing ends; under OnFailure a failed container is restarted.
    """
    policy = pod["spec"].get("restartPolicy", "Always")
    codes = [r.exit_code for r in runs.values()]
    if policy == "Always" or None in codes or policy == "OnFailure" and any(codes):
        return None
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    started = {s["name"]: (s.get("state", {}).get("running") or {}).get("startedAt", stamp)
               for s in pod.get("status", {}).get("containerStatuses") or ()}
    statuses = [{
        "name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False, "started": False,
        "restartCount": 0,
        "state": {"terminated": {"exitCode": runs[c["name"]].exit_code,
                                 "reason": "Completed" if runs[c["name"]].exit_code == 0 else "Error",
                                 "startedAt": started.get(c["name"], stamp), "finishedAt": stamp}},
    } for c in pod["spec"]["containers"]]
    not_ready = {"status": "False", "reason": "PodCompleted", "lastTransitionTime": stamp}
    return {
        "phase": "Succeeded" if not any(codes) else "Failed",
        "containerStatuses": statuses,
        "conditions": [{"type": "Ready", **not_ready}, {"type": "ContainersReady", **not_ready}],
    }


def allocated_devices(pod: dict, claims: dict[str, dict], devices: dict[tuple[str, str], dict],
                      driver: str = DRIVER, extended_claim: dict | None = None) -> dict[str, list[dict]]:
    """Container name -> the driver's devices allocated to the claims (or requests) it names.

    ``claims`` maps the pod's claim entry names to allocated ResourceClaims, ``devices`` maps
    (pool, device name) to ResourceSlice devices. A reference to a ``request`` also matches the
    subrequests of a ``firstAvailable`` request (``<request>/<subrequest>``). ``extended_claim``
    is the claim the scheduler made for extended resources (``nvidia.com/gpu: 1`` served by DRA);
    the pod's ``status.extendedResourceClaimStatus`` maps its requests to containers.
    """
    wanted: dict[str, list[tuple[dict, str | None]]] = {}
    for container in pod["spec"]["containers"]:
        wanted[container["name"]] = [
            (claims[ref["name"]], ref.get("request")) for ref in container.get("resources", {}).get("claims", [])
        ]
    if extended_claim is not None:
        for mapping in pod["status"]["extendedResourceClaimStatus"].get("requestMappings", []):
            wanted.setdefault(mapping["containerName"], []).append((extended_claim, mapping["requestName"]))
    out = {}
    for container_name, refs in wanted.items():
        found: list[dict] = []
        for claim, request in refs:
            for result in claim["status"]["allocation"]["devices"].get("results", []):
                if result["driver"] != driver:
                    continue
                if request and result["request"].split("/")[0] != request:
                    continue
                device = devices.get((result["pool"], result["device"]))
                if device is not None and device not in found:
                    found.append(device)
        out[container_name] = found
    return out


FAULTS_CONFIGMAP = "drawb-fake-driver"
FAULTS = {
    "wrong-uuid": "each container sees a neighbour of its first device (same pool and type) instead of it",
    "no-gpu": "containers see no device at all (nvidia-smi: No devices were found)",
}


def see_wrongly(fault: str, devices: list[dict], published: dict[tuple[str, str], dict]) -> list[dict]:
    """The devices a container sees under ``fault`` (one of ``FAULTS``) instead of ``devices``."""
    if fault == "no-gpu" or not devices:
        return []
    first = devices[0]
    pool = next(p for (p, _), d in published.items() if d == first)
    kind = first.get("attributes", {}).get("type")
    neighbour = next((d for (p, _), d in sorted(published.items(), key=lambda item: item[0])
                      if p == pool and d.get("attributes", {}).get("type") == kind and d not in devices), None)
    if neighbour is None:  # nothing else on the node: a GPU that was never published
        neighbour = copy.deepcopy(first)
        neighbour["attributes"]["uuid"] = {"string": "GPU-00000000-0000-0000-0000-00000000dead"}
    return [neighbour, *devices[1:]]


class FakeDriver:
    """Publishes an Inventory and serves pods' ``nvidia-smi -L`` logs through kwok."""

    def __init__(self, api: Api, log_dir: Path, driver: str = DRIVER):
        self.api = api
        self.log_dir = Path(log_dir)
        self.driver = driver
        self._prepared: set[str] = set()
        self._served: set[str] = set()
        self._pending: dict[str, dict] = {}
        self._running: dict[str, tuple[dict[str, Run], float]] = {}  # uid -> runs, when they end

    # --- publishing -------------------------------------------------------------------------

    def publish(self, inventory: Inventory, workers: int = PUBLISH_WORKERS,
                progress: Callable[[str], None] | None = None) -> None:
        """Apply DeviceClasses, Nodes, then each node's ResourceSlices owned by its Node.

        Nodes and slices go out in batches of concurrent requests (a 10,000-node cluster is
        30,000 objects: one at a time that is minutes of round trips on loopback).
        """
        for dc in inventory.device_classes:
            self.api.apply(_clean(dc, "DeviceClass", "resource.k8s.io/v1"), FIELD_MANAGER)
        bodies = []
        for node in inventory.nodes:
            body = _clean(node, "Node", "v1")
            body["metadata"].setdefault("annotations", {})["kwok.x-k8s.io/node"] = "fake"
            body["metadata"]["labels"].setdefault("kubernetes.io/hostname", body["metadata"]["name"])
            body["metadata"]["labels"].setdefault("type", "kwok")
            bodies.append(body)
        uids = {}
        for applied in self._apply_all(bodies, workers, progress, "nodes"):
            uids[applied["metadata"]["name"]] = applied["metadata"]["uid"]
        slices = []
        for rs in inventory.resource_slices:
            body = _clean(rs, "ResourceSlice", "resource.k8s.io/v1")
            node_name = body["spec"].get("nodeName")
            if node_name in uids:
                body["metadata"]["ownerReferences"] = [{
                    "apiVersion": "v1", "kind": "Node", "name": node_name,
                    "uid": uids[node_name], "controller": True,
                }]
            slices.append(body)
        for _ in self._apply_all(slices, workers, progress, "ResourceSlices"):
            pass

    def _apply_all(self, bodies: list[dict], workers: int, progress: Callable[[str], None] | None,
                   what: str) -> Iterator[dict]:
        """Apply objects with ``workers`` requests in flight, in batches; the applied objects in order."""
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="publish") as pool:
            for start in range(0, len(bodies), PUBLISH_BATCH):
                batch = bodies[start:start + PUBLISH_BATCH]
                yield from pool.map(lambda body: self.api.apply(body, FIELD_MANAGER), batch)
                if progress and len(bodies) > PUBLISH_BATCH:
                    progress(f"published {start + len(batch)}/{len(bodies)} {what}")

    def wait_nodes_ready(self, names: Iterable[str], timeout: float | None = None) -> None:
        """Wait until kwok reports the nodes Ready and their not-ready taint is gone.

        The default timeout grows with the number of nodes (``ready_timeout``); the nodes are
        listed from the API server's watch cache, less often the more there are. Raises
        NodesNotReady, whose message says how many are missing and what the nodes report.
        """
        names = set(names)
        timeout = ready_timeout(len(names)) if timeout is None else timeout
        interval = min(5.0, max(0.2, len(names) / 2000))
        deadline = time.monotonic() + timeout
        while True:
            nodes = {n["metadata"]["name"]: n for n in self.api.get(path_for("Node"), resourceVersion="0")["items"]}
            ready = {name for name, n in nodes.items() if node_ready(n)}
            if names <= ready:
                return
            if time.monotonic() > deadline:
                raise NodesNotReady(names - ready, len(names), timeout, nodes)
            time.sleep(interval)

    # --- pod logs ---------------------------------------------------------------------------

    def _devices_by_id(self) -> dict[tuple[str, str], dict]:
        """(pool, device) -> device dict for this driver's slices, newest pool generation only."""
        slices = [s for s in self.api.get(path_for("ResourceSlice"))["items"] if s["spec"]["driver"] == self.driver]
        newest: dict[str, int] = {}
        for s in slices:
            pool = s["spec"]["pool"]
            newest[pool["name"]] = max(newest.get(pool["name"], 0), pool["generation"])
        return {
            (s["spec"]["pool"]["name"], d["name"]): d
            for s in slices if s["spec"]["pool"]["generation"] == newest[s["spec"]["pool"]["name"]]
            for d in s["spec"].get("devices", [])
        }

    def _claim_names(self, pod: dict) -> dict[str, str] | None:
        """Pod claim entry name -> ResourceClaim name; None while a template's claim is unknown."""
        statuses = {s["name"]: s.get("resourceClaimName") for s in pod.get("status", {}).get("resourceClaimStatuses", [])}
        names = {}
        for entry in pod["spec"].get("resourceClaims", []):
            name = entry.get("resourceClaimName") or statuses.get(entry["name"])
            if not name:
                return None
            names[entry["name"]] = name
        return names

    def container_devices(self, pod: dict) -> dict[str, list[dict]] | None:
        """Container name -> devices of this driver allocated to the claims it names.

        None while a claim is not allocated yet.
        """
        claim_names = self._claim_names(pod)
        if claim_names is None:
            return None
        extended = pod.get("status", {}).get("extendedResourceClaimStatus")
        if extended:
            claim_names[""] = extended["resourceClaimName"]
        ns = pod["metadata"]["namespace"]
        claims = {}
        for entry, claim_name in claim_names.items():
            claim = self.api.get_or_none(path_for("ResourceClaim", claim_name, ns))
            if not claim or not claim.get("status", {}).get("allocation"):
                return None
            claims[entry] = claim
        extended_claim = claims.pop("", None)
        return allocated_devices(pod, claims, self._devices_by_id(), self.driver, extended_claim)

    def with_faults(self, pod: dict, per_container: dict[str, list[dict]]) -> dict[str, list[dict]]:
        """The devices containers see, after the fault the pod's namespace asks for (see ``FAULTS``)."""
        config = self.api.get_or_none(path_for("ConfigMap", FAULTS_CONFIGMAP, pod["metadata"]["namespace"]))
        fault = ((config or {}).get("data") or {}).get("nvidia-smi")
        if not fault:
            return per_container
        if fault not in FAULTS:
            log.warning("ConfigMap %s: unknown nvidia-smi fault %r (known: %s)", FAULTS_CONFIGMAP, fault, ", ".join(FAULTS))
            return per_container
        published = self._devices_by_id()
        return {name: see_wrongly(fault, devices, published) for name, devices in per_container.items()}

    def _log_files(self, pod: dict) -> dict[str, Path]:
        meta = pod["metadata"]
        pod_dir = self.log_dir / meta["namespace"] / f"{meta['name']}_{meta['uid']}"
        return {c["name"]: pod_dir / f"{c['name']}.log" for c in pod["spec"]["containers"]}

    def prepare_logs(self, pod: dict) -> None:
        """Create the pod's (empty) log files and its kwok Logs object, before the pod runs.

        kwok answers a log request only for pods it has a Logs object for, so it must exist by the
        time kwok reports the pod Running; ``kubectl logs -f`` then streams what is appended.
        """
        meta = pod["metadata"]
        specs = []
        for container, path in self._log_files(pod).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
            specs.append({"containers": [container], "logsFile": str(path), "follow": True})
        self.api.apply({
            "apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
            "metadata": {
                "name": meta["name"], "namespace": meta["namespace"], "labels": dict(MANAGED_BY),
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]}],
            },
            "spec": {"logs": specs},
        }, FIELD_MANAGER)

    def serve_logs(self, pod: dict) -> bool:
        """Append each container's output to its log file; False while claims are not allocated."""
        per_container = self.container_devices(pod)
        if per_container is None:
            return False
        per_container = self.with_faults(pod, per_container)
        runs = container_runs(pod, per_container)
        for container in pod["spec"]["containers"]:
            with open(self._log_files(pod)[container["name"]], "a") as log_file:
                log_file.write(cri_log(runs[container["name"]].lines))
        ends = time.monotonic() + max((r.seconds for r in runs.values()), default=0.0)
        self._running[pod["metadata"]["uid"]] = (runs, ends)
        return True

    def complete(self, pod: dict) -> bool:
        """Report the pod ended, once kwok reports it Running and its commands had time to end."""
        uid = pod["metadata"]["uid"]
        runs, ends = self._running[uid]
        if pod.get("status", {}).get("phase") != "Running" or time.monotonic() < ends:
            return False
        status = completed_status(pod, runs)
        if status is not None:
            meta = pod["metadata"]
            self.api.apply({"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
                            "status": status}, FIELD_MANAGER, subresource="status")
        del self._running[uid]
        return True

    def _handle(self, pod: dict) -> None:
        uid = pod["metadata"]["uid"]
        if uid in self._running and not pod["metadata"].get("deletionTimestamp"):
            try:
                if not self.complete(pod):
                    self._pending[uid] = pod
                    return
            except ClusterError as err:
                log.warning("pod %s/%s: %s", pod["metadata"]["namespace"], pod["metadata"]["name"], err)
                self._pending[uid] = pod
                return
        if uid in self._served:
            self._pending.pop(uid, None)
            return
        if pod["metadata"].get("deletionTimestamp"):
            self._pending.pop(uid, None)
            return
        try:
            if uid not in self._prepared:
                self.prepare_logs(pod)
                self._prepared.add(uid)
            done = bool(pod["spec"].get("nodeName")) and self.serve_logs(pod)
        except ClusterError as err:
            log.warning("pod %s/%s: %s", pod["metadata"]["namespace"], pod["metadata"]["name"], err)
            done = False
        if done:
            self._served.add(uid)
            self._pending[uid] = pod  # to be completed once kwok reports it Running
        elif pod["spec"].get("nodeName") or uid not in self._prepared:
            self._pending[uid] = pod

    def run(self, stop: threading.Event) -> None:
        """Serve pod logs until ``stop`` is set."""
        events: queue.Queue = queue.Queue()
        pods = Informer(self.api.api_client, kind_of("Pod"))  # re-lists on 410 Gone, reconnects with backoff
        pods.start()
        for pod in pods.subscribe(lambda kind, obj: events.put((kind, obj))):
            events.put(("ADDED", pod))
        retried = time.monotonic()
        while not stop.is_set():
            try:
                kind, pod = events.get(timeout=0.5)
            except queue.Empty:
                kind, pod = "", None
            if kind == "DELETED":
                for done in (self._prepared, self._served):
                    done.discard(pod["metadata"]["uid"])
                self._pending.pop(pod["metadata"]["uid"], None)
                self._running.pop(pod["metadata"]["uid"], None)
            elif pod is not None:
                self._handle(pod)
            if time.monotonic() - retried >= 0.5:  # pods whose claims were not allocated yet
                retried = time.monotonic()
                for pending in list(self._pending.values()):
                    self._handle(pending)
        pods.stop()


def main(argv: list[str] | None = None) -> int:
    """Command line: publish an inventory, then serve pod logs until SIGTERM/SIGINT."""
    parser = argparse.ArgumentParser(prog="python -m drawb.testing.fake_driver", description=__doc__.split("\n")[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--log-dir", required=True, type=Path, help="where container log files are written")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--scenario", help="a drawb.cluster.sim scenario name, e.g. default")
    source.add_argument("--objects", nargs="+", type=Path, help="YAML files of Nodes, ResourceSlices, DeviceClasses")
    parser.add_argument("--ready-file", type=Path, help="touched once the inventory is published and nodes are Ready")
    parser.add_argument("--timeout", type=float,
                        help="seconds to wait for the nodes to be Ready (default: 60 s + 60 ms a node)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

    driver = FakeDriver(Api.from_kubeconfig(args.kubeconfig), args.log_dir)
    try:
        inventory = (Inventory.from_scenario(args.scenario) if args.scenario
                     else Inventory.from_files(args.objects) if args.objects else Inventory())
        driver.publish(inventory, progress=log.info)
        driver.wait_nodes_ready((n["metadata"]["name"] for n in inventory.nodes), args.timeout)
    except (ClusterError, OSError, ValueError, TimeoutError) as err:
        log.error("%s%s", FATAL, err)
        return 1
    log.info("published %d nodes, %d slices, %d classes", len(inventory.nodes),
             len(inventory.resource_slices), len(inventory.device_classes))
    if args.ready_file:
        args.ready_file.touch()

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    driver.run(stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
