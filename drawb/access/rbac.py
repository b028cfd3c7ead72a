"""drawb's least-privilege RBAC manifest, as data: what each rule grants and which command needs it.

Two roles, bound to one subject (a user, a group or a ServiceAccount):

* ``drawb-reader`` (ClusterRole, ClusterRoleBinding): read what is cluster-wide by nature (slices,
  classes, nodes, priority classes, the API server's feature-gate metric) and claims in every
  namespace (which devices are taken is cluster-wide knowledge).
* ``drawb-user`` (Role, RoleBinding in one namespace): read pods, logs, events and workloads there, and
  create and delete claim templates, claims and pods there (drawb itself refuses to change or delete
  objects without its ``app.kubernetes.io/managed-by: drawb`` label; RBAC cannot express "its own").

The same rules answer "which role of the manifest grants this" when the API server refuses a request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

READER = "drawb-reader"
USER = "drawb-user"
READ = ("get", "list", "watch")
WRITE = ("create", "patch", "delete")
_LABELS = {"app.kubernetes.io/managed-by": "drawb", "app.kubernetes.io/part-of": "drawb"}


@dataclass(frozen=True)
class Rule:
    """One RBAC rule of the manifest, with the reason drawb needs it."""

    group: str | None  # API group ("" is the core group); None for a non-resource URL
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    why: str

    def grants(self, verb: str, resource: str, group: str | None) -> bool:
        """Whether this rule allows ``verb`` on ``resource`` (a plural, ``pods/log``, or a URL path) of ``group``."""
        return verb in self.verbs and resource in self.resources and (group or "") == (self.group or "")

    def to_dict(self) -> dict:
        """The rule as the RBAC API spells it."""
        if self.group is None:
            return {"nonResourceURLs": list(self.resources), "verbs": list(self.verbs)}
        return {"apiGroups": [self.group], "resources": list(self.resources), "verbs": list(self.verbs)}


CLUSTER_RULES: tuple[Rule, ...] = (
    Rule("resource.k8s.io", ("resourceslices", "deviceclasses"), READ,
         "the device inventory (devices, slices, attrs, select) and DeviceClass checks"),
    Rule("resource.k8s.io", ("devicetaintrules",), READ,
         "the taints DeviceTaintRules put on devices (taints, taint's preview, pools, and the scheduler's view of "
         "preview, capacity and why)"),
    Rule("resource.k8s.io", ("resourceclaims",), READ,
         "which devices are allocated, in every namespace (allocation columns of devices, claims -A, "
         "doctor's pending-pod check)"),
    Rule("", ("nodes",), READ, "GPU nodes and their device-plugin resources (doctor, nodes)"),
    Rule("", ("namespaces",), ("get",),
         "validate, apply and check read each document's namespace: whether it exists, and the "
         "resource.k8s.io/admin-access label admin-access claims need"),
    Rule("scheduling.k8s.io", ("priorityclasses",), ("get", "list"),
         "doctor's caveat that DRA devices are never preempted"),
    Rule(None, ("/metrics",), ("get",),
         "doctor reads the API server's kubernetes_feature_enabled metric (drop it: doctor then says "
         "'unknown' for the gates it cannot probe)"),
)

NAMESPACE_RULES: tuple[Rule, ...] = (
    Rule("resource.k8s.io", ("resourceclaimtemplates", "resourceclaims"), READ + WRITE,
         "check, apply and doctor --live create them (server-side apply: patch, and create for a new object) and delete "
         "what they made; doctor's claim gate probes are dry-run creates"),
    Rule("", ("pods",), READ + WRITE, "check pods and doctor --live probe pods: create, watch, delete"),
    Rule("", ("pods/log",), ("get",), "the check pod's nvidia-smi output, logs"),
    Rule("", ("events",), READ, "check's stages (scheduling, image pull), events"),
    Rule("apps", ("deployments", "statefulsets", "daemonsets"), ("list",),
         "migrate --cluster reads the namespace's workloads that ask for nvidia.com/gpu (it never changes them)"),
    Rule("batch", ("jobs", "cronjobs"), ("list",), "migrate --cluster, as above"),
)


def subject(*, user: str | None = None, group: str | None = None,
            service_account: str | None = None, namespace: str = "default") -> dict:
    """The RBAC subject for a user, a group, or a ServiceAccount (``name`` or ``namespace:name``)."""
    given = [v for v in (user, group, service_account) if v]
    if len(given) != 1:
        raise ValueError("name exactly one subject: a user, a group or a service account")
    if user:
        return {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": user}
    if group:
        return {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": group}
    sa_namespace, _, name = service_account.rpartition(":")
    return {"kind": "ServiceAccount", "name": name, "namespace": sa_namespace or namespace}


def _binding_name(role: str, who: dict) -> str:
    name = who["name"] if who["kind"] != "ServiceAccount" else f"{who['namespace']}:{who['name']}"
    return f"{role}:{who['kind'].lower()}:{re.sub(r'[/%]', '-', name)}"


def manifest(namespace: str, who: dict | None = None) -> list[dict]:
    """The ClusterRole and the Role in ``namespace``, and bindings to ``who`` when given."""
    def meta(name: str, ns: str | None = None) -> dict:
        return {"name": name, **({"namespace": ns} if ns else {}), "labels": dict(_LABELS)}

    rbac = "rbac.authorization.k8s.io/v1"
    objects = [
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": meta(READER),
         "rules": [r.to_dict() for r in CLUSTER_RULES]},
        {"apiVersion": rbac, "kind": "Role", "metadata": meta(USER, namespace),
         "rules": [r.to_dict() for r in NAMESPACE_RULES]},
    ]
    if who:
        role_ref = {"apiGroup": "rbac.authorization.k8s.io"}
        objects += [
            {"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": meta(_binding_name(READER, who)),
             "roleRef": {**role_ref, "kind": "ClusterRole", "name": READER}, "subjects": [who]},
            {"apiVersion": rbac, "kind": "RoleBinding", "metadata": meta(_binding_name(USER, who), namespace),
             "roleRef": {**role_ref, "kind": "Role", "name": USER}, "subjects": [who]},
        ]
    return objects


def to_yaml(objects: list[dict]) -> str:
    """The manifest as YAML documents, each rule preceded by a comment saying what it is for."""
    reasons = {**{_key(r.to_dict()): r.why for r in CLUSTER_RULES}, **{_key(r.to_dict()): r.why for r in NAMESPACE_RULES}}
    docs = []
    for obj in objects:
        head = {k: v for k, v in obj.items() if k != "rules"}
        text = _dump(head)
        if "rules" in obj:
            text += "rules:\n" + "".join(f"# {reasons.get(_key(rule), '')}\n" + _dump([rule]) for rule in obj["rules"])
        docs.append(text)
    return "---\n" + "---\n".join(docs)


def _key(rule: dict) -> str:
    return repr(sorted(rule.items()))


def _dump(data: object) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=120)


def granted_by(verb: str, resource: str, group: str | None, namespaced: bool) -> str | None:
    """Which role of the manifest grants ``verb`` on ``resource`` (in a namespace when ``namespaced``), or None."""
    if any(r.grants(verb, resource, group) for r in CLUSTER_RULES):
        return READER
    if namespaced and any(r.grants(verb, resource, group) for r in NAMESPACE_RULES):
        return USER
    return None


def namespace_only(verb: str, resource: str, group: str | None) -> bool:
    """Whether the manifest grants ``verb`` on ``resource`` only inside one namespace (the drawb-user Role)."""
    return granted_by(verb, resource, group, False) is None and granted_by(verb, resource, group, True) == USER
