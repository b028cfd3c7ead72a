"""Run a local Kubernetes control plane on loopback: etcd, API server, scheduler, controller
manager and kwok, started by kwokctl's binary runtime from the binaries ``drawb.testing.build``
made, plus the fake NVIDIA driver.

Command line (``scripts/cluster`` wraps it)::

    scripts/cluster build                       # compile (cached) and print the bin directory
    scripts/cluster up [--scenario default] [--feature-gates DRAExtendedResource=true,...]
    scripts/cluster env                         # export KUBECONFIG=... PATH=...
    scripts/cluster status
    scripts/cluster down

State lives in ``$DRAWB_CACHE/kwok`` (kwokctl's ``KWOK_WORKDIR``), under ``clusters/<name>``.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import urllib3
import yaml

from drawb.cluster.protocol import ClusterError
from drawb.testing import build as build_mod
from drawb.testing import fake_driver
from drawb.testing.api import Api, path_for

DEFAULT_NAME = "drawb"
DRIVER_PID = "fake-driver.pid"
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller")
_RETRYABLE_STARTS = ("address already in use", "failed to wait for apiserver being healthy")
PUBLISH_S_PER_NODE = 0.25  # budget for publishing a node and its two slices (measured: 0.2 s at load average 10)


def lease_duration(nodes: int) -> int:
    """kwok's node lease duration: 40 s (the kubelet's), longer for many nodes.

    kwok renews every lease about four times per duration; 10,000 nodes at 40 s would be a
    thousand writes a second. Keep renewals near 20 a second.
    """
    return max(40, nodes // 5)


def node_monitor_grace(nodes: int) -> int:
    """The controller manager's node-monitor-grace-period (s): kwokctl's 200 s, or twice the lease."""
    return max(200, 2 * lease_duration(nodes))


def count_nodes(scenario: str | None, objects: list[Path] | None) -> int:
    """How many nodes the fake driver will publish for a scenario or object files."""
    inventory = (fake_driver.Inventory.from_scenario(scenario) if scenario
                 else fake_driver.Inventory.from_files(objects or []))
    return len(inventory.nodes)


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``"A=true,B=false"`` -> ``{"A": True, "B": False}``."""
    gates = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, value = item.partition("=")
        if value.lower() not in ("true", "false"):
            raise ValueError(f"feature gate {item!r}: expected Name=true or Name=false")
        gates[name] = value.lower() == "true"
    return gates


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def _stop_pid(pid: int, timeout: float = 10) -> None:
    """SIGTERM one process, then SIGKILL it if it is still there after ``timeout``."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            if not _pid_alive(pid):
                return
            time.sleep(0.05)


@dataclass
class LocalCluster:
    """One local control plane, addressed by name under a work directory."""

    name: str = DEFAULT_NAME
    workdir: Path = field(default_factory=lambda: build_mod.cache_root() / "kwok")
    bin_dir: Path | None = None
    feature_gates: dict[str, bool] = field(default_factory=dict)
    runtime_config: str = ""
    apiserver_args: dict[str, str] = field(default_factory=dict)  # extra kube-apiserver flags, without "--"
    nodes: int = 0  # how many nodes the fake driver will publish: sizes kwok's leases and the waits
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def cluster_dir(self) -> Path:
        """kwokctl's directory for this cluster (config, pki, logs, pids)."""
        return self.workdir / "clusters" / self.name

    @property
    def kubeconfig(self) -> Path:
        """The admin kubeconfig kwokctl writes."""
        return self.cluster_dir / "kubeconfig.yaml"

    @property
    def pod_log_dir(self) -> Path:
        """Where the fake driver writes container log files."""
        return self.cluster_dir / "pod-logs"

    def env(self) -> dict[str, str]:
        """Environment for kubectl, kwokctl and drawb against this cluster."""
        env = dict(os.environ, KUBECONFIG=str(self.kubeconfig), KWOK_WORKDIR=str(self.workdir))
        if self.bin_dir:
            env["PATH"] = f"{self.bin_dir}{os.pathsep}{env.get('PATH', '')}"
        return env

    def _kwokctl(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        kwokctl = str(self.bin_dir / "kwokctl") if self.bin_dir else "kwokctl"
        return subprocess.run([kwokctl, "--name", self.name, *args], env=self.env(), capture_output=True,
                              text=True, timeout=timeout, check=False)

    def _config(self) -> dict:
        b = self.bin_dir
        options = {
            "runtime": "binary",
            "bindAddress": "127.0.0.1",
            "kubeApiserverBinary": str(b / "kube-apiserver"),
            "kubeControllerManagerBinary": str(b / "kube-controller-manager"),
            "kubeSchedulerBinary": str(b / "kube-scheduler"),
            "kubectlBinary": str(b / "kubectl"),
            "etcdBinary": str(b / "etcd"),
            "kwokControllerBinary": str(b / "kwok"),
            "enableCRDs": ["Logs", "ClusterLogs"],
            "nodeLeaseDurationSeconds": lease_duration(self.nodes),
        }
        if self.feature_gates:
            options["kubeFeatureGates"] = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.feature_gates.items()))
        if self.runtime_config:
            options["kubeRuntimeConfig"] = self.runtime_config
        # One scheduler and one controller manager: leader election only adds a way to die (a lease
        # renewal missed on a starved 2-core machine makes them exit) and a start-up delay.
        patches = [
            {"name": name, "extraArgs": [{"key": "leader-elect", "value": "false"}]}
            for name in ("kube-scheduler", "kube-controller-manager")
        ]
        # The node lifecycle controller marks a node NotReady when its lease is older than the
        # grace period; with longer leases (fewer renewals for many nodes) it must wait longer.
        patches[1]["extraArgs"].append({"key": "node-monitor-grace-period",
                                        "value": f"{node_monitor_grace(self.nodes)}s"})
        if self.apiserver_args:
            patches.append({"name": "kube-apiserver",
                            "extraArgs": [{"key": k, "value": v} for k, v in sorted(self.apiserver_args.items())]})
        return {"apiVersion": "config.kwok.x-k8s.io/v1alpha1", "kind": "KwokctlConfiguration",
                "options": options, "componentsPatches": patches}

    def up(self, scenario: str | None = None, objects: list[Path] | None = None,
           timeout: float | None = None) -> None:
        """Start the cluster (and the fake driver if given a scenario or object files); wait for ready.

        ``timeout`` bounds each phase (control plane, then publishing and nodes Ready); by default
        180 s plus what the fake driver's readiness wait needs for the number of nodes.
        """
        if scenario or objects:
            self.nodes = count_nodes(scenario, objects)
        if timeout is None:
            timeout = 120 + fake_driver.ready_timeout(self.nodes) + self.nodes * PUBLISH_S_PER_NODE
        if self.bin_dir is None:
            self.bin_dir = build_mod.build().bin_dir
        if self.cluster_dir.exists():
            self.down()
        started = time.monotonic()
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            self._start_control_plane(timeout)
            self.timings["control_plane_s"] = time.monotonic() - started
            if scenario or objects:
                self.start_driver(scenario=scenario, objects=objects, timeout=timeout)
        except BaseException:
            self.down()
            raise
        self.timings["up_s"] = time.monotonic() - started

    def _start_control_plane(self, timeout: float, attempts: int = 3) -> None:
        """kwokctl create, then wait until every component is up and is this cluster's own.

        kwokctl picks free ports when it creates a cluster, and two clusters created at the same
        moment can pick the same ones; the loser's scheduler then exits ("address already in
        use") while the winner's answers its health checks. Starts are therefore serialised by a
        lock shared by every drawb cluster on the machine, and a start that still lost a port is
        retried with new ports, and so is a controller manager that gave up waiting for the API
        server's /healthz (a fixed wait, too short on a loaded machine). Any other exit (a bad flag
        or feature gate) fails at once with the component's own message.
        """
        config_file = self.workdir / f"{self.name}.kwokctl.yaml"
        lock_path = build_mod.cache_root() / "kwok-start.lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in range(1, attempts + 1):
            config_file.write_text(yaml.safe_dump(self._config(), sort_keys=False))
            with open(lock_path, "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    self._kwokctl_create(config_file, timeout)
                    self.wait_ready(timeout)
                    return
                except (RuntimeError, TimeoutError) as err:
                    failure = f"{err}\n{self.component_logs(tail=20)}"
                    # a lost port, or a controller manager that gave up waiting for a slow API server's
                    # /healthz (it waits a fixed time; on a loaded machine the server can take longer)
                    retryable = any(text in failure for text in _RETRYABLE_STARTS)
                    self.down()
            if not retryable or attempt == attempts:
                raise RuntimeError(f"cluster {self.name} did not start (attempt {attempt}):\n{failure}")

    def _kwokctl_create(self, config_file: Path, timeout: float) -> None:
        """Run ``kwokctl create cluster``, stopping it as soon as a component it started exits."""
        kwokctl_log = self.workdir / f"{self.name}.kwokctl.log"
        with open(kwokctl_log, "w") as log_file:
            proc = subprocess.Popen(
                [str(self.bin_dir / "kwokctl"), "--name", self.name, "create", "cluster", "--config", str(config_file),
                 "--kubeconfig", "", "--wait", f"{int(timeout)}s", "--timeout", f"{int(timeout)}s"],
                env=self.env(), stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + timeout + 30
        while proc.poll() is None:
            exited = self.exited_components()
            if exited or time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise RuntimeError(f"components exited while starting: {exited}" if exited
                                   else f"kwokctl create cluster still running after {timeout + 30:.0f}s")
            time.sleep(0.2)
        if proc.returncode:
            raise RuntimeError(f"kwokctl create cluster failed:\n{kwokctl_log.read_text()[-4000:]}")

    def api(self) -> Api:
        """A JSON client for this cluster."""
        return Api.from_kubeconfig(str(self.kubeconfig))

    def feature_gates_enabled(self) -> dict[str, bool]:
        """The API server's effective feature gates (its ``kubernetes_feature_enabled`` metric)."""
        metrics = self.api().text("/metrics")
        return {
            m.group(1): m.group(2) == "1"
            for m in re.finditer(r'^kubernetes_feature_enabled\{name="([^"]+)"[^}]*\} (\d)', metrics, re.MULTILINE)
        }

    def _ports(self) -> dict[str, int]:
        """Ports kwokctl picked: scheduler, controller manager (secure) and kwok (HTTP and HTTPS)."""
        for doc in yaml.safe_load_all((self.cluster_dir / "kwok.yaml").read_text()):
            if doc and doc.get("kind") == "KwokctlConfiguration":
                options = doc["options"]
                return {"kube-scheduler": options["kubeSchedulerPort"],
                        "kube-controller-manager": options["kubeControllerManagerPort"],
                        "kwok-controller": options["kwokControllerPort"]}
        raise RuntimeError(f"no KwokctlConfiguration in {self.cluster_dir / 'kwok.yaml'}")

    def wait_ready(self, timeout: float = 180) -> None:
        """Wait until every part answers: the API server's /readyz, the scheduler's and controller
        manager's /healthz, the ``default`` ServiceAccount (made by the controller manager), and
        kwok serving logs from a ``Logs`` object (its informer for them starts failing while the
        CRD is being installed and retries with a growing back-off)."""
        deadline = time.monotonic() + timeout
        ports = self._ports()
        # the components serve self-signed certificates on loopback; /healthz is open to anyone
        local = urllib3.PoolManager(cert_reqs="CERT_NONE", assert_hostname=False, retries=False, timeout=5)

        def healthz(name: str) -> None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                resp = local.request("GET", f"https://127.0.0.1:{ports[name]}/healthz")
            if resp.status != 200:
                raise RuntimeError(f"{name} /healthz: {resp.status} {resp.data[:200]!r}")

        probe_file = self.cluster_dir / "kwok-logs-probe.log"
        probe_file.write_text("2000-01-01T00:00:00Z stdout F drawb-probe\n")
        probe = {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
                 "metadata": {"name": "drawb-logs-probe", "namespace": "kube-system"},
                 "spec": {"logs": [{"logsFile": str(probe_file)}]}}

        def kwok_serves_logs() -> None:
            self.api().apply(probe, "drawb")
            url = f"http://127.0.0.1:{ports['kwok-controller']}/containerLogs/kube-system/drawb-logs-probe/c"
            resp = local.request("GET", url)
            if resp.status != 200 or b"drawb-probe" not in resp.data:
                raise RuntimeError(f"kwok does not serve logs yet: {resp.status} {resp.data[:200]!r}")

        def components_alive() -> None:
            missing = set(COMPONENTS) - set(self.pids())
            if missing:  # exited, e.g. its port was taken: the health checks may have reached another cluster
                raise RuntimeError(f"components exited: {sorted(missing)}")

        checks = [
            lambda: self.api().text("/readyz"),
            lambda: healthz("kube-scheduler"),
            lambda: healthz("kube-controller-manager"),
            lambda: self.api().get(path_for("ServiceAccount", "default", "default")),
            kwok_serves_logs,
            components_alive,
        ]
        last = "no answer"
        while checks:
            try:
                checks[0]()
                checks.pop(0)
                continue
            except (ClusterError, OSError, RuntimeError, urllib3.exceptions.HTTPError) as err:  # not up yet
                last = str(err)
                components_alive()  # a component that exited will not come back: fail now
            if time.monotonic() > deadline:
                raise TimeoutError(f"cluster {self.name} not ready after {timeout:.0f}s: {last}\n"
                                   f"{self.component_logs(tail=20)}")
            time.sleep(0.1)
        self.api().delete(path_for("Logs", "drawb-logs-probe", "kube-system"))
        probe_file.unlink()

    def start_driver(self, scenario: str | None = None, objects: list[Path] | None = None,
                     timeout: float = 120) -> int:
        """Start the fake NVIDIA driver as a background process; wait until its nodes are Ready.

        A driver that gives up (nodes not Ready in time, an object the API server refuses) fails
        this with its one-line reason, and whether kwok, which makes nodes Ready, is still running.
        """
        ready = self.cluster_dir / "fake-driver.ready"
        ready.unlink(missing_ok=True)
        started = time.monotonic()
        args = [sys.executable, "-m", "drawb.testing.fake_driver", "--kubeconfig", str(self.kubeconfig),
                "--log-dir", str(self.pod_log_dir), "--ready-file", str(ready),
                "--timeout", str(max(10.0, timeout - self.nodes * PUBLISH_S_PER_NODE))]
        args += ["--scenario", scenario] if scenario else ["--objects", *map(str, objects or [])]
        with open(self.cluster_dir / "logs" / "fake-driver.log", "ab") as log_file:
            proc = subprocess.Popen(args, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=self.env())
        (self.cluster_dir / "pids" / DRIVER_PID).write_text(f"{proc.pid}\n")
        deadline = time.monotonic() + timeout + 30  # the driver's own wait ends first and says why
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(self._driver_failure(proc, time.monotonic() - started))
            time.sleep(0.1)
        self.timings["driver_s"] = time.monotonic() - started
        return proc.pid

    def _driver_failure(self, proc: subprocess.Popen, waited: float) -> str:
        """One line: why the fake driver did not get ready (its own last word, or its last log line)."""
        lines = (self.cluster_dir / "logs" / "fake-driver.log").read_text(errors="replace").splitlines()
        reasons = [line.split(fake_driver.FATAL, 1)[1] for line in lines if fake_driver.FATAL in line]
        exit_code = proc.poll()
        if reasons:
            reason = reasons[-1]
        elif exit_code is None:
            reason = f"not ready after {waited:.0f}s; last log line: {lines[-1] if lines else '(none)'}"
        else:
            reason = f"exited with status {exit_code}; last log line: {lines[-1] if lines else '(none)'}"
        exited = self.exited_components()
        state = f"; exited: {', '.join(exited)}" if exited else ""
        return (f"fake driver: {reason} ({self.nodes} nodes{state}; log: "
                f"{self.cluster_dir / 'logs' / 'fake-driver.log'})")

    def restart_component(self, name: str = "kube-apiserver", timeout: float = 60, down_s: float = 0) -> float:
        """Stop one component (SIGTERM), leave it stopped ``down_s`` seconds (an outage), and start it again
        with the same command line, environment and log; for the API server, wait until it is ready again.
        Seconds it was away."""
        started = time.monotonic()
        with self.component_stopped(name, timeout=timeout):
            time.sleep(max(0.0, started + down_s - time.monotonic()))
        return time.monotonic() - started

    @contextmanager
    def component_stopped(self, name: str = "kube-apiserver", *, kill: bool = False,
                          timeout: float = 60) -> Iterator[None]:
        """Stop one component (SIGTERM, or SIGKILL when ``kill``) for the body of the ``with``, then start it again
        with the same command line, environment and log; for the API server, wait until it is ready again.

        The start lock is held meanwhile: a cluster created at that moment would pick the port the
        stopped component frees, and the restarted one could not listen on it again."""
        lock_path = build_mod.cache_root() / "kwok-start.lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            pid = self.pids()[name]
            proc_dir = Path(f"/proc/{pid}")
            argv = [a.decode() for a in proc_dir.joinpath("cmdline").read_bytes().split(b"\0") if a]
            env = dict(e.decode().split("=", 1) for e in proc_dir.joinpath("environ").read_bytes().split(b"\0")
                       if b"=" in e)
            cwd = os.readlink(proc_dir / "cwd")
            if kill:
                os.kill(pid, signal.SIGKILL)
                while _pid_alive(pid):
                    time.sleep(0.01)
            else:
                _stop_pid(pid)
            try:
                yield
            finally:
                self._start_again(name, argv, env, cwd, timeout)

    def _start_again(self, name: str, argv: list[str], env: dict[str, str], cwd: str, timeout: float) -> None:
        """Start a stopped component; the API server again and again until it is ready (a killed one's port may stay
        taken a moment: its other threads are still exiting)."""
        deadline = time.monotonic() + timeout
        while True:
            with open(self.cluster_dir / "logs" / f"{name}.log", "ab") as log_file:
                proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log_file, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
            (self.cluster_dir / "pids" / f"{name}.pid").write_text(f"{proc.pid}\n")
            if name != "kube-apiserver":
                return
            while proc.poll() is None:
                try:
                    if self.api().text("/readyz").strip() == "ok":
                        return
                except (ClusterError, OSError, urllib3.exceptions.HTTPError):
                    pass
                if time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            if time.monotonic() > deadline:
                raise RuntimeError(f"kube-apiserver did not come back after a restart:\n{self.component_logs(tail=20)}")
            time.sleep(0.5)

    def etcd(self, method: str, path: str, body: dict) -> dict:
        """One call to etcd's v3 JSON gateway (``/v3/kv/range``, ``/v3/kv/compaction``...), over the client
        URL (and TLS files) in etcd's own command line."""
        argv = Path(f"/proc/{self.pids()['etcd']}/cmdline").read_bytes().decode().split("\0")
        flags = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
        url = flags.get("advertise-client-urls", flags.get("listen-client-urls", "")).split(",")[0]
        tls = {}
        if url.startswith("https"):
            tls = {"cert_file": flags.get("cert-file"), "key_file": flags.get("key-file"),
                   "ca_certs": flags.get("trusted-ca-file"), "assert_hostname": False}
        pool = urllib3.PoolManager(retries=False, timeout=10, **{k: v for k, v in tls.items() if v is not None})
        resp = pool.request(method, url + path, body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        if resp.status != 200:
            raise RuntimeError(f"etcd {path}: {resp.status} {resp.data[:300]!r}")
        return json.loads(resp.data)

    def compact_etcd(self) -> int:
        """Compact etcd's history up to its current revision (watches from older versions get 410 Gone); that revision."""
        revision = int(self.etcd("POST", "/v3/kv/range", {"key": "AA==", "limit": 1})["header"]["revision"])
        self.etcd("POST", "/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision

    def _owns(self, pid: int) -> bool:
        """Whether a live pid is one of this cluster's (a stale pid file may name a reused pid)."""
        try:
            return str(self.cluster_dir).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False

    def pids(self) -> dict[str, int]:
        """Component name -> pid of this cluster's running processes, from their pid files."""
        pids = {}
        for pid_file in sorted((self.cluster_dir / "pids").glob("*.pid")):
            try:
                pid = int(pid_file.read_text().strip())
            except ValueError:
                continue
            if _pid_alive(pid) and self._owns(pid):
                pids[pid_file.stem] = pid
        return pids

    def exited_components(self) -> list[str]:
        """Components kwokctl started (a pid file exists) whose process is gone."""
        exited = []
        for pid_file in sorted((self.cluster_dir / "pids").glob("*.pid")):
            try:
                pid = int(pid_file.read_text().strip())
            except ValueError:
                continue
            if pid_file.stem in COMPONENTS and not _pid_alive(pid):
                exited.append(pid_file.stem)
        return exited

    def component_logs(self, tail: int = 20) -> str:
        """The last lines of each component's log, for error messages."""
        out = []
        for log_file in sorted((self.cluster_dir / "logs").glob("*.log")):
            lines = log_file.read_text(errors="replace").splitlines()[-tail:]
            out.append(f"--- {log_file.name}\n" + "\n".join(lines))
        return "\n".join(out)

    def down(self) -> None:
        """Stop every process of this cluster and remove its state; no process is left behind."""
        driver = self.pids().get(DRIVER_PID.removesuffix(".pid"))
        if driver:
            _stop_pid(driver)
        remaining = self.pids()
        linked = self.cluster_dir / "bin" / "kube-apiserver"  # kwokctl links our binaries here
        if self.bin_dir is None and linked.exists():
            self.bin_dir = linked.resolve().parent
        if self.cluster_dir.exists() and self.bin_dir:
            # kwokctl removes its context from this file; it never wrote one (created with "")
            scratch = self.workdir / f"{self.name}.no-kubeconfig"
            proc = self._kwokctl("delete", "cluster", "--kubeconfig", str(scratch), timeout=120)
            if proc.returncode:
                print(f"kwokctl delete cluster {self.name}: {proc.stderr.strip()[-500:]}", file=sys.stderr)
        for pid in remaining.values():  # whatever kwokctl did not stop
            _stop_pid(pid)
        if self.cluster_dir.exists():
            shutil.rmtree(self.cluster_dir, ignore_errors=True)
        for leftover in ("kwokctl.yaml", "kwokctl.log"):
            (self.workdir / f"{self.name}.{leftover}").unlink(missing_ok=True)

    def kubectl(self, *args: str, check: bool = True, input: str | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess:
        """Run the cluster's kubectl with this kubeconfig."""
        kubectl = str(self.bin_dir / "kubectl") if self.bin_dir else "kubectl"
        proc = subprocess.run([kubectl, *args], env=self.env(), capture_output=True, text=True,
                              input=input, timeout=timeout, check=False)
        if check and proc.returncode:
            raise RuntimeError(f"kubectl {shlex.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc


def _cluster_from_args(args) -> LocalCluster:
    workdir = Path(args.workdir) if args.workdir else build_mod.cache_root() / "kwok"
    return LocalCluster(name=args.name, workdir=workdir)


def main(argv: list[str] | None = None) -> int:
    """``build | up | down | env | status``."""
    parser = argparse.ArgumentParser(prog="scripts/cluster", description=__doc__.split("\n")[0])
    parser.add_argument("--name", default=os.environ.get("DRAWB_CLUSTER_NAME", DEFAULT_NAME))
    parser.add_argument("--workdir", help="state directory, kwokctl's KWOK_WORKDIR (default $DRAWB_CACHE/kwok)")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the binaries (cached) and print their directory")
    b.add_argument("--k8s-version", help="default: the version pinned in testcluster/go.mod")
    up = sub.add_parser("up", help="start the cluster and print the kubeconfig path")
    up.add_argument("--k8s-version")
    up.add_argument("--feature-gates", default="", help="e.g. DRAExtendedResource=true (default: 1.34 defaults)")
    up.add_argument("--runtime-config", default="", help="e.g. resource.k8s.io/v1beta2=true")
    up.add_argument("--scenario", help="publish a simulated-cluster scenario with the fake driver")
    up.add_argument("--objects", nargs="+", type=Path, help="or publish these YAML files with the fake driver")
    up.add_argument("--timeout", type=float,
                    help="seconds for each phase (default: 180 s, and more for many nodes: 60 ms a node)")
    sub.add_parser("down", help="stop every process and remove the cluster's state")
    sub.add_parser("env", help="print shell exports for KUBECONFIG and PATH")
    sub.add_parser("status", help="print the cluster's processes as JSON")
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except (RuntimeError, TimeoutError, ValueError) as err:
        print(f"scripts/cluster {args.command}: {err}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    cluster = _cluster_from_args(args)
    if args.command == "build":
        result = build_mod.build(args.k8s_version)
        print(f"{'cached' if result.cached else 'built'} in {result.seconds:.1f}s", file=sys.stderr)
        print(result.bin_dir)
    elif args.command == "up":
        cluster.bin_dir = build_mod.build(args.k8s_version).bin_dir
        cluster.feature_gates = parse_feature_gates(args.feature_gates)
        cluster.runtime_config = args.runtime_config
        cluster.up(scenario=args.scenario, objects=args.objects, timeout=args.timeout)
        print(f"cluster {cluster.name} up in {cluster.timings['up_s']:.1f}s", file=sys.stderr)
        print(cluster.kubeconfig)
    elif args.command == "down":
        cluster.down()
    elif args.command == "env":
        bin_link = cluster.cluster_dir / "bin" / "kube-apiserver"
        path = f"{bin_link.resolve().parent}:" if bin_link.exists() else ""
        print(f"export KUBECONFIG={shlex.quote(str(cluster.kubeconfig))}")
        print(f"export PATH={shlex.quote(path)}\"$PATH\"")
    elif args.command == "status":
        print(json.dumps({"name": cluster.name, "kubeconfig": str(cluster.kubeconfig),
                          "up": cluster.kubeconfig.exists(), "pids": cluster.pids()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
