"""The API server's validation rules of DRA objects and pods (what the schema cannot see), with drawb's
advice about the same objects.

Findings the server refuses the object for carry ``refused_by_server``: pod claim names and container
claims agree, constraint and config request names exist, requests use the ``exactly:`` nesting of v1 (a
served v1beta1 document its own flat requests and
``basic:`` devices), selectors compile, the v1 limits hold. The rest is drawb's:
DeviceClasses and namespaces the connected cluster lacks, gates a field needs, NVIDIA opaque configs.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from drawb import versions
from drawb.api import Quantity, QuantityError, cron
from drawb.api.workloads import dotted, pod_specs
from drawb.apirules.issue import Issue, label
from drawb.apirules.served import GROUP

# Fields of v1's ExactDeviceRequest that older (beta) manifests put directly under the request.
_BETA_KEYS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")
_CLAIM_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "ResourceClaim": ("spec",),
    "ResourceClaimTemplate": ("spec", "spec"),
}
NVIDIA_DRIVER = "gpu.nvidia.com"
NVIDIA_CONFIG_API = "resource.nvidia.com/v1beta1"
_INTERVALS = ("Default", "Short", "Medium", "Long")
# Limits of resource.k8s.io/v1 that the API server enforces (pkg/apis/resource/validation).
MAX_REQUESTS = MAX_CONSTRAINTS = MAX_SELECTORS = 32
MAX_DEVICES_PER_SLICE = 128
MAX_ATTRIBUTES_AND_CAPACITIES = 32
_NODE_SELECTION = ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"


def target_rules(kubernetes_version: str) -> versions.Rules:
    """The rules of the target version (the newest known, with a warning, for a newer one)."""
    return versions.rules(kubernetes_version)


@dataclass
class World:
    """What the checks may look up: the rendered objects, and what the connected cluster has (None: unknown)."""

    kubernetes_version: str
    compile_selector: Callable[[str, str], None]
    # the objects as the server validates them (the fields of disabled gates dropped), not as written
    as_stored: bool = False
    cluster_classes: dict[str, dict] | None = None
    # a namespace's labels, None if it does not exist; PermissionError where it cannot be read (nothing is known)
    namespace_labels: Callable[[str], dict | None] | None = None
    namespaces: set[str] = field(default_factory=set)  # the Namespaces among the documents
    classes: dict[str, dict] = field(default_factory=dict)
    claims: dict[str, dict] = field(default_factory=dict)
    claim_templates: dict[str, dict] = field(default_factory=dict)

    def all_classes(self) -> dict[str, dict]:
        """Rendered DeviceClasses over the cluster's."""
        return {**(self.cluster_classes or {}), **self.classes}


def _class_not_installed(name: str, installed: list[str]) -> str:
    """The warning for a DeviceClass the connected cluster lacks: the server stores the claim, no pod runs."""
    close = difflib.get_close_matches(name, installed, n=1, cutoff=0.6)
    fix = f"did you mean {close[0]!r}? " if close else ""
    return (f"DeviceClass {name!r} is not installed in the connected cluster: the API server accepts the claim, and "
            f"pods that use it stay Pending until the class exists; {fix}installed: {', '.join(installed) or '(none)'}")


def _dig(doc: Mapping[str, Any], path: Iterable[str]) -> Any:
    cur: Any = doc
    for key in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


class _Checker:
    def __init__(self, world: World):
        self.world = world
        self.issues: list[Issue] = []
        self.doc = ""
        self.namespace: str | None = None
        self.v1beta1 = False  # a served resource.k8s.io/v1beta1 document: its requests are not nested

    def error(self, path: str, message: str) -> None:
        self.issues.append(Issue("error", self.doc, path, message))

    def refuse(self, path: str, message: str) -> None:
        """An error the API server refuses the object for, too."""
        self.issues.append(Issue("error", self.doc, path, message, refused_by_server=True))

    def warn(self, path: str, message: str) -> None:
        self.issues.append(Issue("warning", self.doc, path, message))

    def job_spec(self, spec: dict, path: str) -> None:
        """What the API server refuses in a Job's spec (or a CronJob's job template): a pod that restarts
        always, an Indexed Job without completions."""
        policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") or "Always"
        if policy not in ("OnFailure", "Never"):
            self.refuse(f"{path}.template.spec.restartPolicy",
                        f'Unsupported value: "{policy}": supported values: "OnFailure", "Never"')
        if spec.get("completionMode") == "Indexed" and spec.get("completions") is None:
            self.refuse(f"{path}.completions", "Required value: when completion mode is Indexed")

    def cronjob(self, doc: dict) -> None:
        """A CronJob's schedule, read as the controller's cron library reads it, and its job template."""
        spec = doc.get("spec") or {}
        schedule = spec.get("schedule")
        if isinstance(schedule, str):
            try:
                cron.parse(schedule)
            except cron.ScheduleError as err:
                self.refuse("spec.schedule", f'Invalid value: "{schedule}": {err}')
        self.job_spec((spec.get("jobTemplate") or {}).get("spec") or {}, "spec.jobTemplate.spec")

    def namespace_exists(self) -> None:
        """Warn of a namespace neither the connected cluster nor the documents have: apply is refused until it exists."""
        ns = self.namespace
        if not ns or self.world.namespace_labels is None or ns in self.world.namespaces:
            return
        known, labels = self.read_namespace(ns)
        if known and labels is None:
            self.warn("metadata.namespace", f"namespace {ns!r} does not exist in the connected cluster: the API "
                      f"server refuses the object (namespaces \"{ns}\" not found) until it does; create it first "
                      f"(a Namespace named {ns!r} among these manifests, before the objects in it), or use an "
                      "existing namespace")

    def read_namespace(self, ns: str) -> tuple[bool, dict | None]:
        """Whether namespace ``ns`` could be read, and its labels (None: it does not exist)."""
        try:
            return True, self.world.namespace_labels(ns)
        except PermissionError:  # RBAC keeps drawb from reading it: neither warning nor refusal
            return False, None

    # --- selectors and quantities -------------------------------------------------------------
    def selectors(self, selectors: Any, path: str) -> None:
        for i, sel in enumerate(_list(selectors)):
            expr = _dig(sel, ("cel", "expression"))
            if not isinstance(expr, str):
                continue  # the schema reports a missing expression
            try:
                self.world.compile_selector(expr, self.world.kubernetes_version)
            except ValueError as e:  # CELCompileError is a ValueError
                self.refuse(f"{path}[{i}].cel.expression", f"selector does not compile:\n{e}")

    def quantity(self, value: Any, path: str, what: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            self.error(path, f"{what} {value!r} is not a quantity")
            return
        try:
            Quantity.parse(str(value))
        except QuantityError as e:
            self.error(path, f"{what} {value!r} is not a Kubernetes quantity: {e}")

    # --- DeviceClass ---------------------------------------------------------------------------
    def device_class(self, doc: Mapping[str, Any]) -> None:
        spec = doc.get("spec") or {}
        self.selectors(spec.get("selectors"), "spec.selectors")
        self.at_most(spec.get("selectors"), MAX_SELECTORS, "spec.selectors", "selectors")
        for i, cfg in enumerate(_list(spec.get("config"))):
            self.opaque(cfg.get("opaque"), f"spec.config[{i}].opaque")
        gate = target_rules(self.world.kubernetes_version).gates["DRAExtendedResource"]
        if spec.get("extendedResourceName") and not gate.default:
            self.warn(
                "spec.extendedResourceName",
                f"needs feature gate DRAExtendedResource ({gate.stage}, off by default in Kubernetes "
                f"{self.world.kubernetes_version}); with the gate off the API server drops the field",
            )

    # --- ResourceSlice -----------------------------------------------------------------------------
    def resource_slice(self, doc: Mapping[str, Any]) -> None:
        from drawb.api.names import is_dns1123_subdomain

        spec = doc.get("spec") or {}
        driver = spec.get("driver")
        for problem in is_dns1123_subdomain(driver) if isinstance(driver, str) else ():
            self.refuse("spec.driver", f"{driver!r} is not a DNS subdomain: {problem}")
        chosen = [k for k in _NODE_SELECTION if spec.get(k) not in (None, False, "")]
        if len(chosen) != 1:
            self.refuse("spec", f"exactly one of {', '.join(_NODE_SELECTION)} is required"
                        + (f"; the slice has {', '.join(chosen)}" if chosen else ""))
        self.counters_apart(spec)
        devices = _list(spec.get("devices"))
        self.at_most(devices, MAX_DEVICES_PER_SLICE, "spec.devices", "devices")
        names: set[str] = set()
        for i, device in enumerate(devices):
            if not isinstance(device, Mapping):
                continue
            path = f"spec.devices[{i}]"
            name = device.get("name")
            if isinstance(name, str):
                self.dns_label(name, f"{path}.name")
                if name in names:
                    self.refuse(f"{path}.name", f"device name {name!r} is used twice in the slice")
                names.add(name)
            if self.v1beta1 and isinstance(device.get("basic"), Mapping):  # v1beta1 wraps a device's fields
                device, path = device["basic"], f"{path}.basic"
            for key, attribute in (device.get("attributes") or {}).items():
                if isinstance(attribute, Mapping) and len(attribute) != 1:  # one of bool, int, string, version, ...
                    self.refuse(f"{path}.attributes[{key}]", "exactly one value must be specified")
            total = len(device.get("attributes") or {}) + len(device.get("capacity") or {})
            if total > MAX_ATTRIBUTES_AND_CAPACITIES:
                self.refuse(path, f"{total} attributes and capacities: resource.k8s.io allows at most "
                            f"{MAX_ATTRIBUTES_AND_CAPACITIES} per device")
            if device.get("bindingConditions") and not device.get("bindingFailureConditions"):
                self.refuse(f"{path}.bindingFailureConditions", "bindingFailureConditions are required to use "
                            "bindingConditions")

    def counters_apart(self, spec: Mapping[str, Any]) -> None:
        """From 1.35 a slice holds sharedCounters or devices, not both (while DRAPartitionableDevices is off
        the server drops sharedCounters first: as written, that is the gate's default)."""
        rules = target_rules(self.world.kubernetes_version)
        if spec.get("sharedCounters") is None or spec.get("devices") is None:
            return
        if not rules.has("api.counter_sets_in_own_slices"):
            return
        gate = rules.gates["DRAPartitionableDevices"]
        if self.world.as_stored or gate.default:
            self.refuse("spec", "only one of `sharedCounters` or `devices` is allowed")
        else:
            self.warn("spec.sharedCounters", f"with feature gate DRAPartitionableDevices ({gate.stage}, off by "
                      f"default in Kubernetes {rules.minor}) on, the API server refuses a slice with both "
                      "sharedCounters and devices: put the counters in a slice of their own")

    # --- ResourceClaim(Template) ----------------------------------------------------------------
    def claim_spec(self, spec: Any, base: str) -> dict[str, list[str]]:
        """Check one ResourceClaimSpec; return its request names with their subrequest names."""
        devices = _dig(spec, ("devices",)) or {}
        requests: dict[str, list[str]] = {}
        for i, req in enumerate(_list(devices.get("requests"))):
            path = f"{base}.devices.requests[{i}]"
            if not isinstance(req, Mapping):
                continue
            name = req.get("name")
            beta = [] if self.v1beta1 else [k for k in _BETA_KEYS if k in req]
            if beta:
                self.refuse(
                    path,
                    f"request {name!r} has {', '.join(beta)} directly under the request; resource.k8s.io/v1 "
                    f"nests them under 'exactly:' (or inside each 'firstAvailable' entry)",
                )
            if isinstance(name, str):
                self.dns_label(name, f"{path}.name")
            exact = "deviceClassName" if self.v1beta1 else "exactly"
            if (exact in req) == ("firstAvailable" in req):
                both = ", but both are set" if exact in req else ""
                self.refuse(path, f"request {name!r}: exactly one of `{exact}` or `firstAvailable` is required{both}")
            if name in requests:
                self.refuse(f"{path}.name", f"request name {name!r} is used twice")
            subs: list[str] = []
            if self.v1beta1 and "deviceClassName" in req:
                self.exact(req, path)
            elif isinstance(req.get("exactly"), Mapping):
                self.exact(req["exactly"], f"{path}.exactly")
            for j, sub in enumerate(_list(req.get("firstAvailable"))):
                if not isinstance(sub, Mapping):
                    continue
                sub_name = sub.get("name")
                if isinstance(sub_name, str):
                    self.dns_label(sub_name, f"{path}.firstAvailable[{j}].name")
                if sub_name in subs:
                    self.refuse(f"{path}.firstAvailable[{j}].name", f"subrequest name {sub_name!r} is used twice")
                subs.append(sub_name)
                self.exact(sub, f"{path}.firstAvailable[{j}]")
            requests[name] = subs
        for i, con in enumerate(_list(devices.get("constraints"))):
            path = f"{base}.devices.constraints[{i}]"
            self.references(con.get("requests"), requests, f"{path}.requests", "constraint")
            if ("matchAttribute" in con) == ("distinctAttribute" in con):
                self.refuse(path, "a constraint needs exactly one of matchAttribute or distinctAttribute")
            for key in ("matchAttribute", "distinctAttribute"):
                attr = con.get(key)
                if isinstance(attr, str) and "/" not in attr:
                    self.refuse(
                        f"{path}.{key}",
                        f"{attr!r} must be fully qualified: <domain>/<name>, e.g. gpu.nvidia.com/{attr}",
                    )
            if "distinctAttribute" in con:
                self.distinct_attribute(f"{path}.distinctAttribute")
        self.at_most(devices.get("requests"), MAX_REQUESTS, f"{base}.devices.requests")
        self.at_most(devices.get("constraints"), MAX_CONSTRAINTS, f"{base}.devices.constraints")
        for i, cfg in enumerate(_list(devices.get("config"))):
            path = f"{base}.devices.config[{i}]"
            self.references(cfg.get("requests"), requests, f"{path}.requests", "config")
            self.opaque(cfg.get("opaque"), f"{path}.opaque")
        return requests

    def distinct_attribute(self, path: str) -> None:
        rules = target_rules(self.world.kubernetes_version)
        gate = rules.gates["DRAConsumableCapacity"]
        if not rules.has("api.distinct_attribute_gated"):
            self.warn(path, f"Kubernetes {rules.minor} keeps distinctAttribute although its gate DRAConsumableCapacity "
                      "is off by default, and its scheduler compares the devices themselves, not their attribute "
                      "values: different devices always pass, so only one shared device cannot be picked twice; with "
                      "DRAResourceClaimDeviceStatus off the scheduler cannot allocate the claim (empty constraint)")
        elif not gate.default:
            self.warn(path, f"needs feature gate DRAConsumableCapacity ({gate.stage}, off by default in Kubernetes "
                      f"{self.world.kubernetes_version})")

    def dns_label(self, name: str, path: str) -> None:
        from drawb.api.names import is_dns1123_label

        for problem in is_dns1123_label(name):
            self.refuse(path, f"{name!r} is not a DNS label: {problem}")

    def at_most(self, items: Any, limit: int, path: str, what: str = "items") -> None:
        if len(_list(items)) > limit:
            self.refuse(path, f"{len(items)} {what}: resource.k8s.io/v1 allows at most {limit}")

    def exact(self, req: Mapping[str, Any], path: str) -> None:
        if req.get("adminAccess") is True and self.namespace and self.world.namespace_labels is not None:
            _, labels = self.read_namespace(self.namespace)
            if labels is not None and labels.get(ADMIN_ACCESS_LABEL) != "true":
                self.refuse(f"{path}.adminAccess", f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` "
                            f"label on the containing namespace; namespace {self.namespace!r} lacks it")
        cls = req.get("deviceClassName")
        if isinstance(cls, str) and self.world.cluster_classes is not None and cls not in self.world.all_classes():
            self.warn(f"{path}.deviceClassName", _class_not_installed(cls, sorted(self.world.all_classes())))
        mode = req.get("allocationMode", "ExactCount")
        if mode not in ("ExactCount", "All"):
            self.refuse(f"{path}.allocationMode", f"allocationMode must be ExactCount or All, got {mode!r}")
        if mode == "All" and req.get("count") not in (None, 0):
            self.refuse(f"{path}.count", "allocationMode All takes every matching device; leave count out")
        count = req.get("count")
        if mode == "ExactCount" and isinstance(count, int) and count < 0:
            self.refuse(f"{path}.count", f"count must be at least 1, got {count}")
        elif mode == "ExactCount" and count == 0:
            self.warn(f"{path}.count", "count 0 counts as no count: the API server stores count 1 (one device)")
        self.selectors(req.get("selectors"), f"{path}.selectors")
        self.at_most(req.get("selectors"), MAX_SELECTORS, f"{path}.selectors", "selectors")
        for key, value in ((_dig(req, ("capacity", "requests")) or {}).items()):
            self.quantity(value, f"{path}.capacity.requests.{key}", "capacity request")

    def references(self, refs: Any, requests: Mapping[str, list[str]], path: str, what: str) -> None:
        for i, ref in enumerate(_list(refs)):
            req, _, sub = str(ref).partition("/")
            if req not in requests:
                self.refuse(
                    f"{path}[{i}]",
                    f"{what} names request {req!r}, which the claim does not have; requests: "
                    f"{', '.join(map(str, requests)) or '(none)'}",
                )
            elif sub and sub not in requests[req]:
                self.refuse(
                    f"{path}[{i}]",
                    f"{what} names subrequest {ref!r}, which does not exist; subrequests of {req!r}: "
                    f"{', '.join(map(str, requests[req])) or '(none)'}",
                )

    # --- NVIDIA opaque configuration --------------------------------------------------------------
    def opaque(self, opaque: Any, path: str) -> None:
        if not isinstance(opaque, Mapping) or opaque.get("driver") != NVIDIA_DRIVER:
            return
        params = opaque.get("parameters")
        ppath = f"{path}.parameters"
        if not isinstance(params, Mapping):
            self.error(ppath, "the NVIDIA driver needs parameters: an object with apiVersion and kind")
            return
        if params.get("apiVersion") != NVIDIA_CONFIG_API:
            self.error(f"{ppath}.apiVersion", f"the NVIDIA driver reads apiVersion {NVIDIA_CONFIG_API!r}, "
                       f"got {params.get('apiVersion')!r}")
        kind = params.get("kind")
        if kind not in ("GpuConfig", "MigDeviceConfig"):
            if kind not in ("VfioDeviceConfig", "ComputeDomainChannelConfig", "ComputeDomainDaemonConfig"):
                self.error(f"{ppath}.kind", f"unknown NVIDIA config kind {kind!r}; known: GpuConfig, MigDeviceConfig, "
                           "VfioDeviceConfig, ComputeDomainChannelConfig, ComputeDomainDaemonConfig")
            return
        self.unknown_keys(params, ("apiVersion", "kind", "sharing"), ppath, kind)
        sharing = params.get("sharing")
        if sharing is None:
            return
        spath = f"{ppath}.sharing"
        if not isinstance(sharing, Mapping):
            self.error(spath, "sharing must be an object")
            return
        allowed = ("strategy", "mpsConfig") if kind == "MigDeviceConfig" else ("strategy", "timeSlicingConfig", "mpsConfig")
        self.unknown_keys(sharing, allowed, spath, f"{kind}.sharing")
        strategy = sharing.get("strategy")
        if strategy not in ("TimeSlicing", "MPS"):
            self.error(f"{spath}.strategy", f"strategy must be TimeSlicing or MPS, got {strategy!r}")
            return
        self.warn(f"{spath}.strategy", f"{strategy} needs the NVIDIA driver's feature gate "
                  f"{'TimeSlicingSettings' if strategy == 'TimeSlicing' else 'MPSSupport'} (alpha, off by default)")
        if "timeSlicingConfig" in sharing and strategy != "TimeSlicing":
            self.error(f"{spath}.timeSlicingConfig", f"timeSlicingConfig is set but the strategy is {strategy}")
        if "mpsConfig" in sharing and strategy != "MPS":
            self.error(f"{spath}.mpsConfig", f"mpsConfig is set but the strategy is {strategy}")
        ts = sharing.get("timeSlicingConfig")
        if isinstance(ts, Mapping):
            self.unknown_keys(ts, ("interval",), f"{spath}.timeSlicingConfig", "timeSlicingConfig")
            if "interval" in ts and ts["interval"] not in _INTERVALS:
                self.error(f"{spath}.timeSlicingConfig.interval",
                           f"interval must be one of {', '.join(_INTERVALS)}, got {ts['interval']!r}")
        mps = sharing.get("mpsConfig")
        if isinstance(mps, Mapping):
            mpath = f"{spath}.mpsConfig"
            self.unknown_keys(mps, ("defaultActiveThreadPercentage", "defaultPinnedDeviceMemoryLimit",
                                    "defaultPerDevicePinnedMemoryLimit", "multiUser"), mpath, "mpsConfig")
            pct = mps.get("defaultActiveThreadPercentage")
            if pct is not None and (isinstance(pct, bool) or not isinstance(pct, int) or not 0 <= pct <= 100):
                self.error(f"{mpath}.defaultActiveThreadPercentage", f"must be an integer 0..100, got {pct!r}")
            if "defaultPinnedDeviceMemoryLimit" in mps:
                self.quantity(mps["defaultPinnedDeviceMemoryLimit"], f"{mpath}.defaultPinnedDeviceMemoryLimit",
                              "pinned memory limit")
            per_device = mps.get("defaultPerDevicePinnedMemoryLimit") or {}
            for key, value in (per_device.items() if isinstance(per_device, Mapping) else ()):
                self.quantity(value, f"{mpath}.defaultPerDevicePinnedMemoryLimit.{key}", "pinned memory limit")

    def unknown_keys(self, obj: Mapping[str, Any], allowed: Iterable[str], path: str, what: str) -> None:
        extra = sorted(set(obj) - set(allowed))
        if extra:
            self.error(path, f"{what} has unknown field(s) {', '.join(extra)} (the NVIDIA driver decodes strictly); "
                       f"allowed: {', '.join(allowed)}")

    # --- Pods and workloads ------------------------------------------------------------------------
    def pod_spec(self, spec: Any, base: str) -> None:
        if not isinstance(spec, Mapping):
            return
        declared: dict[str, Mapping[str, Any]] = {}
        for i, rc in enumerate(_list(spec.get("resourceClaims"))):
            path = f"{base}.resourceClaims[{i}]"
            name = rc.get("name")
            if name in declared:
                self.refuse(f"{path}.name", f"claim name {name!r} is listed twice in resourceClaims")
            declared[name] = rc
            by_name, by_template = rc.get("resourceClaimName"), rc.get("resourceClaimTemplateName")
            if bool(by_name) == bool(by_template):
                self.refuse(path, f"claim {name!r} needs exactly one of resourceClaimName or resourceClaimTemplateName")
            elif by_template and by_template not in self.world.claim_templates:
                self.warn(f"{path}.resourceClaimTemplateName", f"ResourceClaimTemplate {by_template!r} is not among "
                          "these manifests; it must already exist in the pod's namespace")
            elif by_name and by_name not in self.world.claims:
                self.warn(f"{path}.resourceClaimName", f"ResourceClaim {by_name!r} is not among these manifests; "
                          "it must already exist in the pod's namespace")
        terms = _dig(spec, ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                            "nodeSelectorTerms"))
        for i, term in enumerate(_list(terms)):
            for j, selector in enumerate(_list(term.get("matchFields") if isinstance(term, Mapping) else None)):
                if selector.get("operator") in ("In", "NotIn") and len(_list(selector.get("values"))) != 1:
                    self.refuse(f"{base}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                               f"nodeSelectorTerms[{i}].matchFields[{j}].values",
                               "a node field selector with In or NotIn takes exactly one value; use one term per node")
        used: set[str] = set()
        for group in ("initContainers", "containers"):
            for i, c in enumerate(_list(spec.get(group))):
                cname = c.get("name")
                resources = c.get("resources") or {}
                for j, claim in enumerate(_list(resources.get("claims"))):
                    path = f"{base}.{group}[{i}].resources.claims[{j}]"
                    ref = claim.get("name")
                    used.add(ref)
                    if ref not in declared:
                        self.refuse(path, f"container {cname!r} uses claim {ref!r}, which the pod's resourceClaims do "
                                   f"not list; listed: {', '.join(map(str, declared)) or '(none)'}")
                        continue
                    if claim.get("request"):
                        self.container_request(declared[ref], claim["request"], f"{path}.request", cname)
                for kind in ("limits", "requests"):
                    for res, value in (resources.get(kind) or {}).items():
                        self.quantity(value, f"{base}.{group}[{i}].resources.{kind}.{res}", f"{res} {kind[:-1]}")
                self.extended_resources(resources, f"{base}.{group}[{i}].resources", cname)
        for name in declared:
            if name not in used:
                self.warn(f"{base}.resourceClaims", f"the pod lists claim {name!r} in resourceClaims but no container "
                          "uses it: the scheduler still allocates its devices for the pod, and no container sees them "
                          "(only a pod-level device, such as a network interface, is used that way); add it to a "
                          "container's resources.claims or remove it")

    def container_request(self, rc: Mapping[str, Any], request: str, path: str, container: str) -> None:
        spec = None
        if rc.get("resourceClaimTemplateName") in self.world.claim_templates:
            spec = _dig(self.world.claim_templates[rc["resourceClaimTemplateName"]], ("spec", "spec"))
        elif rc.get("resourceClaimName") in self.world.claims:
            spec = _dig(self.world.claims[rc["resourceClaimName"]], ("spec",))
        if spec is None:
            return
        names = [r.get("name") for r in _list(_dig(spec, ("devices", "requests"))) if isinstance(r, Mapping)]
        if request.partition("/")[0] not in names:
            self.error(path, f"container {container!r} asks for request {request!r} of claim {rc.get('name')!r}, "
                       f"which has requests: {', '.join(map(str, names)) or '(none)'}")

    def extended_resources(self, resources: Mapping[str, Any], path: str, container: str) -> None:
        classes = self.world.all_classes()
        if not classes:
            return
        mapped = {_dig(c, ("spec", "extendedResourceName")) for c in classes.values()}
        mapped |= {f"deviceclass.resource.kubernetes.io/{n}" for n in classes}
        for res in (resources.get("limits") or {}):
            if "/" in res and not res.startswith(("kubernetes.io/", "hugepages-")) and res not in mapped:
                if res.startswith("deviceclass.resource.kubernetes.io/") or self.world.cluster_classes is not None:
                    self.warn(f"{path}.limits.{res}", f"container {container!r} asks for {res!r}, which no DeviceClass "
                              "maps (extendedResourceName); only a device plugin can serve it")


def cross_reference_issues(docs: list[dict], world: World) -> list[Issue]:
    """Every cross-reference problem in ``docs`` (errors and warnings)."""
    for doc in docs:
        name = (doc.get("metadata") or {}).get("name")
        kind = doc.get("kind")
        if kind == "DeviceClass":
            world.classes[name] = doc
        elif kind == "ResourceClaim":
            world.claims[name] = doc
        elif kind == "ResourceClaimTemplate":
            world.claim_templates[name] = doc
        elif kind == "Namespace":
            world.namespaces.add(name)
    checker = _Checker(world)
    seen: set[str] = set()
    for doc in docs:
        checker.doc = label(doc)
        checker.namespace = (doc.get("metadata") or {}).get("namespace")
        checker.v1beta1 = doc.get("apiVersion") == f"{GROUP}/v1beta1"
        if checker.doc in seen:
            checker.error("metadata.name", "two manifests have the same kind and name")
        checker.namespace_exists()
        seen.add(checker.doc)
        kind = doc.get("kind")
        if kind == "DeviceClass":
            checker.device_class(doc)
        if kind == "ResourceSlice":
            checker.resource_slice(doc)
        if kind == "Job":
            checker.job_spec(doc.get("spec") or {}, "spec")
        if kind == "CronJob":
            checker.cronjob(doc)
        if kind in _CLAIM_SPEC_PATHS:
            path = _CLAIM_SPEC_PATHS[kind]
            checker.claim_spec(_dig(doc, path), ".".join(path))
        for pod in pod_specs(doc):
            checker.pod_spec(pod.spec, dotted(pod.path))
    return checker.issues
