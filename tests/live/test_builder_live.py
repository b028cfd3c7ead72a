"""The claim builder against the real control plane: a claim built with the widget's methods, applied through
``%dra apply``'s path, is allocated by the real scheduler on the node the builder predicted."""

from __future__ import annotations

import time

import pytest

from drawb.notebook.claimbuilder import ClaimBuilder
from drawb.session import Session
from drawb.testing.api import path_for

pytestmark = pytest.mark.live

H100 = "NVIDIA H100 80GB HBM3"


def test_a_built_claim_is_allocated_on_the_predicted_node(control_plane, namespace):
    session = Session(kubeconfig=str(control_plane.kubeconfig), namespace=namespace)
    api = control_plane.api()
    try:
        builder = ClaimBuilder(session, debounce=0)
        builder.add_condition("product", H100)
        builder.add_condition("memory", "40Gi")
        builder.set_count(2)
        builder.containers = 2  # they keep running (a one-container pod runs nvidia-smi -L and ends, freeing the claim)
        builder.add_constraint("matchAttribute", "gpu.nvidia.com/productName")
        builder.template_name, builder.pod_name = "built-h100", "built-h100-pod"
        assert builder.valid, builder.outcome.issues
        predicted = builder.outcome.allocation
        assert predicted.node is not None and len(predicted.devices) == 2
        assert builder.dry_run().status.startswith("dry run: 2 object(s), accepted by the API server")
        assert builder.apply().status.startswith("applied: 2 object(s), accepted by the API server")
        deadline, pod = time.monotonic() + 45, None
        while time.monotonic() < deadline:
            pod = api.get(path_for("Pod", "built-h100-pod", namespace))
            if pod["spec"].get("nodeName") and (pod.get("status") or {}).get("resourceClaimStatuses"):
                break
            time.sleep(0.3)
        assert pod["spec"].get("nodeName") == predicted.node, pod.get("status")
        (status,) = pod["status"]["resourceClaimStatuses"]
        claim = api.get(path_for("ResourceClaim", status["resourceClaimName"], namespace))
        results = claim["status"]["allocation"]["devices"]["results"]
        assert {r["pool"] for r in results} == {d["pool"] for d in predicted.devices}
        assert len(results) == 2 and {r["request"] for r in results} == {"gpu"}
        template = api.get(path_for("ResourceClaimTemplate", "built-h100", namespace))
        assert template["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "drawb"
    finally:
        session.close()
