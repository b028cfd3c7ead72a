"""The objects of one check: a ResourceClaimTemplate (unless an existing claim is named) and a Pod.

Every object carries ``app.kubernetes.io/managed-by: drawb`` and ``drawb/check-run: <run id>``
(the claims made from its claim template too), the annotation naming the process that runs it, and a
name ending in the run id, so two checks in one namespace never collide. The pod runs the
payload in every container with ``restartPolicy: Never`` and a security context the ``restricted``
Pod Security Standard admits. ``--node`` pins it with a node affinity on ``metadata.name`` (as the
DaemonSet controller does): ``spec.nodeName`` would bypass the scheduler, which allocates the claim.
"""

from __future__ import annotations

import copy
import secrets
from dataclasses import dataclass

from drawb.check.verdict import LIST, QUERY, QUERY_FIELDS, SAMPLE
from drawb.cluster.owner import OWNER_ANNOTATION, this_process
from drawb.cluster.protocol import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from drawb.errors import UsageError

RUN_LABEL = "drawb/check-run"
DEFAULT_IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"
DEFAULT_CLASS = "gpu.nvidia.com"
NONROOT_UID = 1000
PAYLOADS = (LIST, QUERY, SAMPLE)

POD_SECURITY = {"runAsNonRoot": True, "runAsUser": NONROOT_UID, "runAsGroup": NONROOT_UID,
                "seccompProfile": {"type": "RuntimeDefault"}}
CONTAINER_SECURITY = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": True,
                      "seccompProfile": {"type": "RuntimeDefault"}}


def new_run_id() -> str:
    """A short random id: 40 bits, so concurrent checks in a namespace do not meet."""
    return secrets.token_hex(5)


def payload_command(payload: str, command: list[str] | None = None) -> list[str]:
    """The container command of a payload: ``nvidia-smi -L``, the ``--query-gpu`` CSV, or -L then a sample."""
    if payload == LIST:
        return ["nvidia-smi", "-L"]
    if payload == QUERY:
        return ["nvidia-smi", f"--query-gpu={QUERY_FIELDS}", "--format=csv"]
    if payload == SAMPLE:
        if not command:
            raise UsageError("the sample payload needs the sample's command", hint="e.g. --command /samples/vectorAdd")
        import shlex

        return ["sh", "-c", f"nvidia-smi -L && {shlex.join(command)}"]
    raise UsageError(f"unknown payload {payload!r}", hint=f"payloads: {', '.join(PAYLOADS)}")


@dataclass
class CheckObjects:
    """The objects to apply, and what the check reads back."""

    run_id: str
    namespace: str
    pod: dict
    claim_template: dict | None = None
    claim_name: str | None = None  # an existing claim the pod uses
    source: str = ""  # what is checked, in words

    @property
    def documents(self) -> list[dict]:
        """In apply order: the claim template first, then the pod."""
        return [d for d in (self.claim_template, self.pod) if d is not None]

    @property
    def pod_name(self) -> str:
        """The pod's name."""
        return self.pod["metadata"]["name"]


def _label(obj: dict, run_id: str, namespace: str) -> None:
    """drawb's labels and the process running the check on ``obj``; on a claim template, also on the claims
    made from it (its claim metadata)."""
    meta = obj.setdefault("metadata", {})
    meta["namespace"] = namespace
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generateName"):
        meta.pop(key, None)
    marked = [meta]
    if obj.get("kind") == "ResourceClaimTemplate":
        marked.append(obj.setdefault("spec", {}).setdefault("metadata", {}))
    for entry in marked:
        entry["labels"] = {**(entry.get("labels") or {}), MANAGED_BY_LABEL: MANAGED_BY_VALUE, RUN_LABEL: run_id}
        entry["annotations"] = {**(entry.get("annotations") or {}), OWNER_ANNOTATION: this_process()}


def _suffixed(name: str, run_id: str, limit: int = 63) -> str:
    return f"{name[: limit - len(run_id) - 1].rstrip('-.')}-{run_id}"


def check_pod(pod: dict, *, run_id: str, namespace: str, command: list[str], image: str | None,
              node: str | None) -> dict:
    """The pod of a check: the payload in every container, restricted security, pinned if asked."""
    pod = copy.deepcopy(pod)
    _label(pod, run_id, namespace)
    spec = pod.setdefault("spec", {})
    spec["restartPolicy"] = "Never"
    spec["securityContext"] = {**(spec.get("securityContext") or {}), **POD_SECURITY}
    spec.pop("nodeName", None)
    for container in spec.get("containers", []):
        container["command"] = list(command)
        container.pop("args", None)
        if image:
            container["image"] = image
        container["securityContext"] = {**(container.get("securityContext") or {}), **CONTAINER_SECURITY}
    if node:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    return pod


def _claim_template(name: str, device_class: str, selector: str | None, count: int) -> dict:
    exactly: dict = {"deviceClassName": device_class}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    if count != 1:
        exactly["count"] = count
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def _bare_pod(name: str, claim_ref: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "resourceClaims": [{"name": "gpu", **claim_ref}],
        "containers": [{"name": "check", "image": DEFAULT_IMAGE, "resources": {"claims": [{"name": "gpu"}]}}],
    }}


def from_selector(selector: str | None, *, device_class: str = DEFAULT_CLASS, count: int = 1, **options) -> CheckObjects:
    """A claim template for ``count`` devices of ``device_class`` matching ``selector`` (CEL), and its pod."""
    run_id, namespace = options["run_id"], options["namespace"]
    template = _claim_template(f"drawb-check-{run_id}", device_class, selector, count)
    _label(template, run_id, namespace)
    pod = _bare_pod(f"drawb-check-{run_id}", {"resourceClaimTemplateName": template["metadata"]["name"]})
    what = f"{count} device(s) of class {device_class}" + (f" matching {selector}" if selector else "")
    return CheckObjects(run_id, namespace, _finish(pod, options), template, source=what)


def from_claim(claim_name: str, **options) -> CheckObjects:
    """A pod using the existing ResourceClaim ``claim_name`` (which the check never changes)."""
    pod = _bare_pod(f"drawb-check-{options['run_id']}", {"resourceClaimName": claim_name})
    return CheckObjects(options["run_id"], options["namespace"], _finish(pod, options), claim_name=claim_name,
                        source=f"existing ResourceClaim {claim_name}")


def from_documents(documents: list[dict], source: str, **options) -> CheckObjects:
    """The claim template and pod of rendered manifests (a template), renamed and labelled for this run."""
    run_id, namespace = options["run_id"], options["namespace"]
    pods = [d for d in documents if d.get("kind") == "Pod"]
    templates = [d for d in documents if d.get("kind") == "ResourceClaimTemplate"]
    others = sorted({d.get("kind", "?") for d in documents} - {"Pod", "ResourceClaimTemplate"})
    if len(pods) != 1 or len(templates) > 1 or others:
        raise UsageError(f"{source}: a check needs one Pod and at most one ResourceClaimTemplate, got "
                         + ", ".join(f"{d.get('kind')}/{(d.get('metadata') or {}).get('name')}" for d in documents),
                         hint="use a template with a pod (single-gpu, mig-profile, multi-gpu-one-node, shared-claim)")
    pod = copy.deepcopy(pods[0])
    template = copy.deepcopy(templates[0]) if templates else None
    if template is not None:
        old = template["metadata"]["name"]
        template["metadata"]["name"] = _suffixed(old, run_id)
        _label(template, run_id, namespace)
        for entry in pod.get("spec", {}).get("resourceClaims", []):
            if entry.get("resourceClaimTemplateName") == old:
                entry["resourceClaimTemplateName"] = template["metadata"]["name"]
    pod["metadata"]["name"] = _suffixed(pod["metadata"].get("name", "drawb-check"), run_id)
    return CheckObjects(run_id, namespace, _finish(pod, options), template, source=source)


def _finish(pod: dict, options: dict) -> dict:
    return check_pod(pod, run_id=options["run_id"], namespace=options["namespace"], command=options["command"],
                     image=options.get("image"), node=options.get("node"))
