"""``migrate`` on the real control plane: every rewritten manifest of the corpus is accepted by the API
server (server-side dry run) and its claims are allocated by the real scheduler to the same number and
kind of devices the legacy request asked for; the extended-resource road with DRAExtendedResource off
(the session's cluster, 1.34 defaults) and on (a second cluster)."""

from __future__ import annotations

import time
from collections import Counter

import pytest
import yaml

from drawb.cluster.kube import KubeCluster
from drawb.migrate import migrate, read_paths
from drawb.migrate.claims import effective_devices
from drawb.migrate.legacy import pod_spec
from drawb.migrate.rewrite import plain
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests.conftest import DATA
from tests.live.test_dra_scheduling import attr, published_device

pytestmark = pytest.mark.live

CORPUS = DATA / "migrate"


@pytest.fixture(scope="module")
def gate_on(start_control_plane):
    """A cluster with DRAExtendedResource on (fresh, so the corpus has every GPU to itself)."""
    cp = start_control_plane({"DRAExtendedResource": True})
    kube = KubeCluster(kubeconfig=str(cp.kubeconfig))
    yield cp, kube
    kube.close()
    cp.cluster.down()


def _in(namespace: str, obj: dict) -> dict:
    return {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}


def _pods(result, namespace: str) -> dict[str, tuple[dict, object]]:
    """Each rewritten workload's pod template as a Pod: pod name -> (pod, document)."""
    pods = {}
    for _, _, doc in result.workloads():
        spec = plain(pod_spec(doc.parsed, doc.workload.pod_spec_path))
        name = f"{doc.workload.kind}-{doc.workload.name}".lower()
        claimed = [t["metadata"]["name"] for t in plain(doc.parsed)["spec"].get("volumeClaimTemplates") or []]
        spec["volumes"] = [*spec.get("volumes", []), *({"name": n, "emptyDir": {}} for n in claimed)]  # a StatefulSet's
        spec["restartPolicy"] = "Always"  # a finished pod releases its claims before the test can compare them
        pods[name] = ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                       "spec": spec}, doc)
    return pods


def _kinds(api, claim: dict) -> Counter:
    kinds = Counter()
    for result in claim["status"]["allocation"]["devices"]["results"]:
        _, device = published_device(api, result)
        kind = attr(device, "type")
        kinds["nvidia.com/gpu" if kind == "gpu" else f"nvidia.com/mig-{attr(device, 'profile')}"] += 1
    return kinds


def _allocated_claims(api, pod: dict) -> dict[str, dict] | None:
    """Claim entry -> its allocated ResourceClaim, once every claim of the pod is allocated."""
    statuses = {s["name"]: s.get("resourceClaimName") for s in pod.get("status", {}).get("resourceClaimStatuses") or []}
    entries = [e["name"] for e in pod["spec"].get("resourceClaims") or []]
    if set(statuses) != set(entries):
        return None
    claims = {e: api.get_or_none(path_for("ResourceClaim", statuses[e], pod["metadata"]["namespace"])) for e in entries}
    if not all(c and (c.get("status") or {}).get("allocation") for c in claims.values()):
        return None
    return claims


def test_every_rewritten_manifest_is_accepted_and_allocated_like_the_legacy_request(gate_on, timings):
    cp, kube = gate_on
    api = cp.api()
    namespace = cp.create_namespace("migrate")
    started = time.monotonic()
    result = migrate(read_paths([str(CORPUS)]), kube, namespace)
    assert len(result.workloads()) == 26

    objects = [_in(namespace, o) for o in result.to_apply(namespace)]
    accepted = kube.apply(objects, dry_run=True)
    assert [(o["kind"], o["metadata"]["name"]) for o in accepted] == \
        [(o["kind"], o["metadata"]["name"]) for o in objects]

    pods = _pods(result, namespace)
    kube.apply([_in(namespace, t) for _, _, d in result.workloads() for t in d.templates] + [p for p, _ in pods.values()])
    pending, mismatches, compared = dict(pods), [], []

    def verify_allocated() -> bool:
        for name, (_, doc) in list(pending.items()):
            claims = _allocated_claims(api, api.get(path_for("Pod", name, namespace)))
            if claims is None:
                continue
            for plan in doc.plan.claims:
                asked, got = Counter({d.resource: n for d, n in plan.requests}), _kinds(api, claims[plan.entry])
                if got != asked:
                    mismatches.append(f"{name}: claim {plan.entry} got {dict(got)}, asked {dict(asked)}")
            total = sum((_kinds(api, c) for c in claims.values()), Counter())
            legacy = Counter({d.resource: n for d, n in effective_devices(doc.workload).items()})
            own = any("claim of its own" in n for n in doc.plan.notes)  # an init container no longer reuses devices
            if not own and total != legacy:
                mismatches.append(f"{name}: {dict(total)} in all, the legacy pod asked for {dict(legacy)}")
            compared.append(name)
            api.delete(path_for("Pod", name, namespace), gracePeriodSeconds="0")  # free the devices for the rest
            del pending[name]
        return not pending

    try:
        try:
            wait_for(verify_allocated, timeout=150, interval=1, what="every rewritten pod's claims allocated")
        except TimeoutError:
            events = [f"{e['involvedObject']['name']}: {e['message']}" for e in
                      api.get(path_for("Event", namespace=namespace))["items"] if e["reason"] == "FailedScheduling"]
            raise AssertionError(f"not allocated: {sorted(pending)}; scheduler: {events[-5:]}") from None
        assert not mismatches
        assert len(compared) == 26
    finally:
        timings["migrate_corpus_s"] = time.monotonic() - started
        api.delete(path_for("Namespace", namespace))


def _legacy_pod(path_name: str, namespace: str) -> tuple[dict, object]:
    """The file's workload pod template, unchanged (legacy limits), as a Pod named ``legacy``."""
    [f] = migrate(read_paths([str(CORPUS / path_name)])).files
    [doc] = [d for d in f.documents if d.changed]
    [original] = [d for d in yaml.safe_load_all(f.source.text) if d and d["kind"] == doc.workload.kind]
    spec = pod_spec(original, doc.workload.pod_spec_path)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "legacy", "namespace": namespace}, "spec": spec}, doc


def test_gate_off_closes_the_extended_road_as_the_scheduler_does(control_plane, kube, namespace):
    if control_plane.feature_enabled("DRAExtendedResource"):
        pytest.skip("DRAExtendedResource is on in this session's cluster (set, or this version's default)")
    result = migrate(read_paths([str(CORPUS / "01-deployment-single-gpu.yaml")]), kube, namespace)
    [road] = result.roads.values()
    assert result.facts.gate == "off" and road.extended.startswith("no: DRAExtendedResource is off")
    assert road.recommended == "claims: apply the rewritten manifests"
    api = control_plane.api()
    pod, _ = _legacy_pod("01-deployment-single-gpu.yaml", namespace)
    api.create(pod)
    events = wait_for(lambda: [e for e in api.get(path_for("Event", namespace=namespace))["items"]
                               if e["reason"] == "FailedScheduling"], what="FailedScheduling of the legacy pod")
    assert "Insufficient nvidia.com/gpu" in events[0]["message"]


def test_gate_on_the_extended_road_serves_legacy_pods(gate_on):
    cp, kube = gate_on
    api = cp.api()
    namespace = cp.create_namespace("migrate-extended")
    created = []
    try:
        result = migrate(read_paths([str(CORPUS / "10-mig-1g10gb-deployment.yaml")]), kube, namespace)
        [road] = result.roads.values()
        assert result.facts.gate == "on"
        [cls] = result.mapping_classes()
        assert road.extended.startswith(f"nvidia.com/mig-1g.10gb -> (new) {cls['metadata']['name']}: fits now on 1 of the 4")
        [stored] = kube.apply([cls])
        created.append(stored["metadata"]["name"])
        assert stored["spec"]["extendedResourceName"] == "nvidia.com/mig-1g.10gb"

        again = migrate(read_paths([str(CORPUS / "10-mig-1g10gb-deployment.yaml")]), kube, namespace)
        [road] = again.roads.values()
        assert road.recommended == f"extended resource: runs unchanged through {cls['metadata']['name']}"
        assert again.mapping_classes() == []

        pod, _ = _legacy_pod("10-mig-1g10gb-deployment.yaml", namespace)
        api.create(pod)
        served = wait_for(lambda: (p := api.get(path_for("Pod", "legacy", namespace))).get("status", {})
                          .get("extendedResourceClaimStatus") and p, timeout=60, what="legacy MIG pod given a claim")
        claim = wait_for(lambda: (c := api.get(path_for(
            "ResourceClaim", served["status"]["extendedResourceClaimStatus"]["resourceClaimName"], namespace)))
            .get("status", {}).get("allocation") and c, what="the extended-resource claim allocated")
        assert _kinds(api, claim) == Counter({"nvidia.com/mig-1g.10gb": 1})

        second = {**cls, "metadata": {"name": f"second-{namespace}.example.com"}}
        [stored] = kube.apply([second])
        created.append(stored["metadata"]["name"])
        warned = migrate(read_paths([str(CORPUS / "10-mig-1g10gb-deployment.yaml")]), kube, namespace)
        assert any("all set extendedResourceName: nvidia.com/mig-1g.10gb; only one" in w for w in warned.warnings)
    finally:
        api.delete(path_for("Namespace", namespace))
        for name in created:
            kube.delete("DeviceClass", name)
