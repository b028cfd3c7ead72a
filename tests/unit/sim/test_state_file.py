"""The simulated cluster's state file: whole or not at all, read only when this user's drawb wrote it,
and simulated time that goes on with the clock between writing and reading."""

from __future__ import annotations

import threading
import time

import pytest

from drawb.cluster.sim import state
from drawb.cluster.sim.cluster import SimCluster

POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "short", "namespace": "default"},
    "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox",
                                                        "command": ["sh", "-c", "echo hello; sleep 1"]}]},
}


def phase(cluster: SimCluster, name: str) -> str | None:
    pod = cluster.get("Pod", name, "default")
    return None if pod is None else pod["status"].get("phase")


def test_a_read_cluster_goes_on_from_the_wall_clock(tmp_path):
    cluster = SimCluster()
    cluster.apply([POD])
    assert phase(cluster, "short") == "Pending"  # its image is still being pulled
    state.write(cluster, None, tmp_path / "c.state")
    time.sleep(2.5)  # pull (0.5 s), start (0.2 s), then `sleep 1`: done by now
    back = state.read(tmp_path / "c.state")
    assert phase(back, "short") == "Succeeded"
    assert list(back.logs("short", "default")) == ["hello"]
    assert back.writes > cluster.writes  # what happened meanwhile changed the store: it is written back


def test_a_reader_sees_a_whole_cluster_while_another_writes(tmp_path):
    path = tmp_path / "c.state"
    small, large = SimCluster(workloads=False), SimCluster("synthetic:200")
    state.write(small, None, path)
    errors: list[BaseException] = []

    def writer():
        try:
            for i in range(15):
                state.write(large if i % 2 else small, None, path)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    seen = set()
    while thread.is_alive():
        seen.add(len(state.read(path)._objects))  # never a torn file: each read is one whole write
    thread.join()
    assert not errors
    assert seen <= {len(small._objects), len(large._objects)} and seen


def test_a_file_from_another_user_or_changed_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "c.state"
    state.write(SimCluster(workloads=False), None, path)
    data = bytearray(path.read_bytes())
    data[-100] ^= 1
    (tmp_path / "changed.state").write_bytes(bytes(data))
    with pytest.raises(state.StateFromElsewhere, match="was not written by your drawb on this machine"):
        state.read(tmp_path / "changed.state")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "another-user"))  # another key
    with pytest.raises(state.StateFromElsewhere) as refused:
        state.read(path)
    assert "snapshot save" in refused.value.hint


def test_a_file_of_another_build_is_refused_with_the_fix(tmp_path, monkeypatch):
    path = tmp_path / "c.state"
    key = state.key_for("synthetic:2", None, "1.36", {"DRADeviceTaints": True})
    with monkeypatch.context() as older:
        older.setattr(state, "build_stamp", lambda: "0.0.1+older")
        state.write(SimCluster("synthetic:2", kubernetes_version="1.36", feature_gates={"DRADeviceTaints": True}),
                    key, path)
    with pytest.raises(state.StateFromAnotherBuild, match=r"another build of drawb \(0.0.1\+older") as refused:
        state.read(path)
    assert refused.value.hint == ("start it afresh: `{prog} connect --reset --scenario synthetic:2 "
                                  "--kubernetes-version 1.36 --feature-gates DRADeviceTaints=true`")


def test_each_scenario_version_and_gates_has_its_own_file():
    names = {state.KeptState(state.key_for(*choice)).path.name for choice in [
        ("default", None, None, None), ("synthetic:2", None, None, None), ("default", None, "1.36", None),
        ("default", None, None, {"DRADeviceTaints": True}), ("default", None, None, {"DRADeviceTaints": False})]}
    assert len(names) == 5
    assert state.KeptState(state.key_for("default", None, None, None)).path.parent == state.clusters_dir()
