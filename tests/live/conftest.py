"""Fixtures for tests against the local control plane (real API server, scheduler, controller manager).

* ``control_plane`` (session): builds the binaries (cached by ``testcluster/``'s go.mod/go.sum;
  the first build compiles Kubernetes from source and takes tens of minutes), starts etcd,
  kube-apiserver, kube-scheduler, kube-controller-manager and kwok on loopback, and the fake
  NVIDIA driver publishing the simulated cluster's ``default`` scenario. Torn down at the end of
  the session, also after failures. ``DRAWB_FEATURE_GATES=DRAExtendedResource=true,...`` sets
  feature gates on all components (default: the Kubernetes defaults), with the gates they depend on
  (``drawb.versions.Rules.with_dependencies``).
* ``start_control_plane(feature_gates)`` (session): another cluster, e.g. with an alpha gate on (and
  what it depends on).
* ``namespace`` (function): a fresh namespace whose ``default`` ServiceAccount exists; deleted
  after the test.
* ``timings`` (session): a dict of named durations, reported at the end of the run.
* ``drawb.testing.waiting.wait_for(fn, ...)`` polls until ``fn()`` is truthy.

Example::

    @pytest.mark.live
    def test_something(control_plane, namespace):
        api = control_plane.api()
        api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": namespace}, ...})
        pod = wait_for(lambda: running(api, namespace, "p"), what="pod p Running")
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kubernetes import client, config

from drawb import versions
from drawb.cluster.kube import KubeCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.testing import build
from drawb.testing.api import Api, path_for
from drawb.testing.cluster import LocalCluster, parse_feature_gates
from drawb.testing.waiting import wait_for
from tests import credscan

SCENARIO = "default"
TIMINGS: dict[str, float] = {}


@dataclass
class ControlPlane:
    """A running local cluster, as tests see it."""

    cluster: LocalCluster
    scenario: str

    @property
    def kubeconfig(self) -> Path:
        """Admin kubeconfig of the cluster."""
        return self.cluster.kubeconfig

    def api(self) -> Api:
        """drawb's JSON client (plain dicts)."""
        return self.cluster.api()

    def api_client(self) -> client.ApiClient:
        """The official client's ApiClient for this cluster."""
        return config.new_client_from_config(config_file=str(self.kubeconfig))

    def kubectl(self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60):
        """Run kubectl (built with the cluster) against it; a CompletedProcess."""
        return self.cluster.kubectl(*args, check=check, input=input, timeout=timeout)

    def feature_enabled(self, gate: str) -> bool:
        """Whether a feature gate is on in the API server (its default for this version or as set)."""
        return self.cluster.feature_gates_enabled().get(gate, False)

    def create_namespace(self, stem: str) -> str:
        """Create a uniquely named namespace and wait for its default ServiceAccount; its name."""
        api = self.api()
        clean = "".join(c for c in stem.lower().replace("_", "-") if c.isalnum() or c == "-")[:40].strip("-")
        name = f"{clean or 'test'}-{uuid.uuid4().hex[:6]}"
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        # kube-controller-manager makes the ServiceAccount; right after a test restarted the API server it may
        # still be reconnecting (a clean-clone run once waited over 30 s here)
        wait_for(lambda: api.get_or_none(path_for("ServiceAccount", "default", name)), timeout=120,
                 what=f"default SA in {name}")
        return name


class _Clusters:
    """Starts clusters for a session and guarantees they are all stopped."""

    def __init__(self, workdir_factory: Callable[[], Path]):
        self.workdir_factory = workdir_factory
        self.started: list[LocalCluster] = []

    def start(self, feature_gates: dict[str, bool] | None = None, scenario: str = SCENARIO,
              runtime_config: str = "", apiserver_args: dict[str, str] | None = None) -> ControlPlane:
        result = build.build()
        TIMINGS.setdefault("build_s", result.seconds)
        rules = versions.rules(result.k8s_version)
        # the components refuse to start with a gate on whose dependencies are off, or the reverse
        gates = rules.with_dependencies(feature_gates or {})
        runtime_config = ",".join([*filter(None, [runtime_config]), *(f"{gv}=true" for gv in rules.apis_for(gates))])
        cluster = LocalCluster(
            name=f"pytest-{os.getpid()}-{len(self.started)}",
            workdir=self.workdir_factory(),
            bin_dir=result.bin_dir,
            feature_gates=gates,
            runtime_config=runtime_config,
            apiserver_args=dict(apiserver_args or {}),
        )
        self.started.append(cluster)
        cluster.up(scenario=scenario)
        credscan.remember_cluster(cluster.cluster_dir, cluster.kubeconfig)  # no test may show its keys
        return ControlPlane(cluster, scenario)

    def stop_all(self) -> None:
        started = time.monotonic()
        for cluster in self.started:
            cluster.down()
        TIMINGS["down_s"] = time.monotonic() - started


@pytest.fixture(scope="session")
def _clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Clusters]:
    clusters = _Clusters(lambda: tmp_path_factory.mktemp("kwok"))
    previous = signal.signal(signal.SIGTERM, _interrupt)  # so a terminated run still tears down
    try:
        yield clusters
    finally:
        clusters.stop_all()
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="session")
def control_plane(_clusters: _Clusters) -> ControlPlane:
    """The session's local control plane (built if needed, started once, stopped at the end)."""
    cp = _clusters.start(parse_feature_gates(os.environ.get("DRAWB_FEATURE_GATES", "")))
    TIMINGS.update(cp.cluster.timings)
    return cp


@pytest.fixture(scope="session")
def start_control_plane(_clusters: _Clusters) -> Callable[..., ControlPlane]:
    """Start another cluster: ``start_control_plane({"DRAExtendedResource": True})`` (about 15 s);
    ``runtime_config="resource.k8s.io/v1alpha3=true"`` serves an API version that is off by default;
    ``apiserver_args={"watch-cache-sizes": "..."}`` adds kube-apiserver flags.

    Stop it with ``cp.cluster.down()`` when done (a module-scoped fixture is the usual place);
    whatever is left is stopped at the end of the session.
    """
    return _clusters.start


@pytest.fixture
def namespace(control_plane: ControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace (with its default ServiceAccount) for one test; deleted afterwards."""
    name = control_plane.create_namespace(request.node.name)
    yield name
    control_plane.api().delete(path_for("Namespace", name))


@pytest.fixture(scope="module")
def kube(control_plane: ControlPlane) -> Iterator[KubeCluster]:
    """drawb's Cluster protocol over the session's control plane (a test module may define its own)."""
    cluster = KubeCluster(kubeconfig=str(control_plane.kubeconfig))
    yield cluster
    cluster.close()


@pytest.fixture(scope="session")
def scenario(control_plane: ControlPlane):
    """The simulated-cluster scenario the fake driver published."""
    return build_scenario(control_plane.scenario)


@pytest.fixture(scope="session")
def timings() -> dict[str, float]:
    """Named durations (seconds) a test wants reported in the run's summary."""
    return TIMINGS


def pytest_terminal_summary(terminalreporter) -> None:
    """Report the control plane's build and start-up times."""
    if TIMINGS:
        terminalreporter.write_line(
            "local control plane: " + ", ".join(f"{k}={v:.1f}" for k, v in sorted(TIMINGS.items()))
        )
