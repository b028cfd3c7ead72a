"""Check an allocation against the rules of the structured allocator, independently of drawb.alloc.

``problems(...)`` takes claims, the ``status.allocation`` of each (from the real scheduler, or from
``drawb.alloc.allocate``) and the cluster state they were made in, and lists every rule the
allocation breaks: devices that do not exist or are not visible to the node, an old pool
generation, class or request selectors that do not match (evaluated by ``drawb.cel`` as the
scheduler evaluates them), counts, ``All`` (every matching device), ``firstAvailable`` (one
subrequest per request), admin access, devices already in use or used twice, untolerated taints,
``matchAttribute``/``distinctAttribute``, shared counters, the 32-device claim limit and the result's
node selector. An empty list means the allocation is valid; it need not be the one the allocator
would pick.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from drawb.api.quantity import Quantity
from drawb import versions
from drawb.cel import CELCompileError, CELEvalError, compile_selector
from drawb.cel.env import CEL_GATES

CLAIM_LIMIT = 32
DeviceKey = tuple[str, str, str]  # (driver, pool, device)


def problems(claims: list[dict], allocations: list[dict], *, node: dict, slices: Iterable[dict],
             classes: Iterable[dict], allocated: Iterable[dict] = (), kubernetes_version: str = versions.DEFAULT,
             feature_gates: Mapping[str, bool] | None = None) -> list[str]:
    """Every rule the allocations (one ``status.allocation`` per claim) break; empty when valid."""
    gates = dict(feature_gates or {})
    checker = _Checker(node, list(slices), {c["metadata"]["name"]: c for c in classes}, kubernetes_version, gates)
    in_use = set()
    for claim in allocated:
        for result in ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []):
            if not result.get("adminAccess"):
                in_use.add((result["driver"], result["pool"], result["device"]))
    out: list[str] = []
    if len(claims) != len(allocations):
        return [f"{len(allocations)} allocations for {len(claims)} claims"]
    taken: dict[DeviceKey, str] = {}
    consumed: list[DeviceKey] = [key for key in in_use]
    for claim, allocation in zip(claims, allocations):
        name = claim["metadata"]["name"]
        found = checker.claim(claim, allocation, in_use, taken)
        out += [f"claim {name}: {p}" for p in found]
        consumed += [(r["driver"], r["pool"], r["device"])
                     for r in allocation.get("devices", {}).get("results", []) if not r.get("adminAccess")]
    out += checker.counters(consumed)
    return out


class _Checker:
    def __init__(self, node: dict, slices: list[dict], classes: dict[str, dict], version: str, gates: dict):
        self.node = node
        self.node_name = node["metadata"]["name"]
        self.classes = classes
        self.version = version
        self.rules = versions.rules(version)
        self.gates = gates
        self.cel_gates = {k: v for k, v in gates.items() if k in CEL_GATES}
        self.devices: dict[DeviceKey, tuple[dict, dict]] = {}  # key -> (device, slice)
        self.complete: dict[tuple[str, str], bool] = {}
        self.pool_counters: dict[tuple[str, str], list[dict]] = defaultdict(list)  # 1.35+: counter sets per pool
        self._compiled: dict[str, object] = {}
        self._visible(slices)

    # --- pools ------------------------------------------------------------------------------

    def _visible(self, slices: list[dict]) -> None:
        newest: dict[tuple[str, str], int] = {}
        seen = [s for s in slices if self._sees(s)]
        for s in seen:
            pool = (s["spec"]["driver"], s["spec"]["pool"]["name"])
            newest[pool] = max(newest.get(pool, 0), s["spec"]["pool"]["generation"])
        counts: dict[tuple[str, str], int] = defaultdict(int)
        for s in seen:
            spec = s["spec"]
            pool = (spec["driver"], spec["pool"]["name"])
            if spec["pool"]["generation"] != newest[pool]:
                continue
            counts[pool] += 1
            self.complete[pool] = counts[pool] == spec["pool"]["resourceSliceCount"]
            for dev in spec.get("devices", []):
                self.devices[(spec["driver"], spec["pool"]["name"], dev["name"])] = (dev, s)
            self.pool_counters[pool] += spec.get("sharedCounters", [])

    def _sees(self, rs: dict) -> bool:
        spec = rs["spec"]
        if spec.get("nodeName"):
            return spec["nodeName"] == self.node_name
        if spec.get("allNodes"):
            return True
        if spec.get("nodeSelector"):
            return node_selector_matches(spec["nodeSelector"], self.node)
        return False

    # --- one claim --------------------------------------------------------------------------

    def claim(self, claim: dict, allocation: dict, in_use: set, taken: dict[DeviceKey, str]) -> list[str]:
        out = []
        results = allocation.get("devices", {}).get("results", [])
        if len(results) > CLAIM_LIMIT:
            out.append(f"{len(results)} devices exceed the claim limit of {CLAIM_LIMIT}")
        by_request: dict[str, list[dict]] = defaultdict(list)
        for result in results:
            by_request[result["request"].split("/")[0]].append(result)
        spec_requests = claim["spec"]["devices"].get("requests", [])
        known = {r["name"] for r in spec_requests}
        for extra in set(by_request) - known:
            out.append(f"results for unknown request {extra!r}")
        own: set[DeviceKey] = set()
        for request in spec_requests:
            out += self._request(claim, request, by_request.get(request["name"], []), in_use, taken, own)
        out += self._constraints(claim, results)
        out += self._node_selector(allocation, results)
        return out

    def _request(self, claim: dict, request: dict, results: list[dict], in_use: set,
                 taken: dict[DeviceKey, str], own: set[DeviceKey]) -> list[str]:
        name = request["name"]
        if "exactly" in request:
            body, full_name = request["exactly"], name
            wrong = [r["request"] for r in results if r["request"] != name]
            if wrong:
                return [f"request {name}: results name {sorted(set(wrong))}"]
        else:
            subs = {r["request"] for r in results}
            if len(subs) != 1:
                return [f"request {name}: results from {sorted(subs) or 'no'} subrequests (exactly one expected)"]
            full_name = subs.pop()
            sub_name = full_name.partition("/")[2]
            body = next((s for s in request.get("firstAvailable", []) if s["name"] == sub_name), None)
            if body is None:
                return [f"request {name}: no subrequest {sub_name!r}"]
        out = []
        keys = [(r["driver"], r["pool"], r["device"]) for r in results]
        mode = body.get("allocationMode", "ExactCount")
        if mode == "ExactCount" and len(results) != body.get("count", 1):
            out.append(f"request {full_name}: {len(results)} devices, count is {body.get('count', 1)}")
        admin = bool(body.get("adminAccess"))
        for result, key in zip(results, keys):
            where = f"request {full_name}: device {'/'.join(key)}"
            if key not in self.devices:
                out.append(f"{where} is not published to node {self.node_name} (newest pool generation)")
                continue
            device, rs = self.devices[key]
            if bool(result.get("adminAccess")) != admin:
                out.append(f"{where}: adminAccess {result.get('adminAccess')!r}, request says {admin}")
            problem = self._selectable(body, device, rs["spec"]["driver"])
            if problem:
                out.append(f"{where}: {problem}")
            untolerated = self._untolerated(body, device)
            if untolerated:
                out.append(f"{where}: taint {untolerated} not tolerated")
            if key in own:
                out.append(f"{where} allocated twice in the claim")
            own.add(key)
            if not admin:
                if key in in_use:
                    out.append(f"{where} is already allocated to another claim")
                elif key in taken:
                    out.append(f"{where} is also allocated to claim {taken[key]}")
                taken[key] = claim["metadata"]["name"]
        if mode == "All":
            if not results:
                out.append(f"request {full_name}: allocationMode All with no device")
            wanted, errors = set(), []
            for key, (device, rs) in self.devices.items():
                problem = self._selectable(body, device, rs["spec"]["driver"])
                if problem is None:
                    wanted.add(key)
                elif problem.startswith("selector error"):
                    errors.append(problem)
            if errors:
                out.append(f"request {full_name}: All, yet a selector fails: {errors[0]}")
            missing = wanted - set(keys)
            if missing:
                out.append(f"request {full_name}: All, but not {sorted('/'.join(k) for k in missing)[:4]}")
            pools = {(k[0], k[1]) for k in keys}
            if any(not self.complete.get(p, False) for p in pools):
                out.append(f"request {full_name}: All from an incomplete pool")
        return out

    def _selectable(self, body: dict, device: dict, driver: str) -> str | None:
        """None when the class's then the request's selectors match; else why not."""
        device_class = self.classes.get(body.get("deviceClassName", ""))
        if device_class is None:
            return f"class {body.get('deviceClassName')!r} does not exist"
        expressions = [s["cel"]["expression"] for s in device_class["spec"].get("selectors", [])]
        expressions += [s["cel"]["expression"] for s in body.get("selectors", [])]
        for expression in expressions:
            try:
                if expression not in self._compiled:
                    self._compiled[expression] = compile_selector(
                        expression, kubernetes_version=self.version, stored=True, feature_gates=self.cel_gates)
                if not self._compiled[expression].matches(device, driver):
                    return f"selector {expression!r} does not match"
            except (CELCompileError, CELEvalError) as err:
                return f"selector error in {expression!r}: {err}"
        return None

    def _untolerated(self, body: dict, device: dict) -> str | None:
        if not self.gates.get("DRADeviceTaints"):
            return None
        for taint in device.get("taints", []):
            if not any(tolerates(t, taint) for t in body.get("tolerations", [])):
                return f"{taint['key']}={taint.get('value', '')}:{taint['effect']}"
        return None

    def _constraints(self, claim: dict, results: list[dict]) -> list[str]:
        out = []
        for constraint in claim["spec"]["devices"].get("constraints", []):
            names = set(constraint.get("requests", []))
            chosen = [r for r in results if not names or r["request"] in names or r["request"].split("/")[0] in names]
            for kind in ("matchAttribute", "distinctAttribute"):
                attribute = constraint.get(kind)
                if not attribute:
                    continue
                values = []
                for r in chosen:
                    key = (r["driver"], r["pool"], r["device"])
                    if key not in self.devices:
                        continue
                    value = lookup_attribute(self.devices[key][0], r["driver"], attribute)
                    if value is None:
                        out.append(f"{kind} {attribute}: device {r['device']} has no such attribute")
                    values.append(value)
                present = [v for v in values if v is not None]
                if kind == "matchAttribute" and len(set(present)) > 1:
                    out.append(f"matchAttribute {attribute}: values differ: {sorted(map(str, set(present)))}")
                # 1.34 compares the attributes' addresses, not their values: only one device twice clashes
                # (experimental/constraint.go); 1.35 compares values.
                if kind == "distinctAttribute" and self.rules.has("alloc.distinct_compares_values") and len(set(present)) != len(present):
                    out.append(f"distinctAttribute {attribute}: values repeat: {sorted(map(str, present))}")
        return out

    def _node_selector(self, allocation: dict, results: list[dict]) -> list[str]:
        local = any(self.devices.get((r["driver"], r["pool"], r["device"]), ({}, {"spec": {}}))[1]["spec"].get("nodeName")
                    for r in results)
        if not local:
            return []
        want = {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [self.node_name]}]}]}
        if allocation.get("nodeSelector") != want:
            return [f"nodeSelector {allocation.get('nodeSelector')}, expected {want}"]
        return []

    # --- counters ---------------------------------------------------------------------------

    def counters(self, consumed: list[DeviceKey]) -> list[str]:
        """Shared counters must cover what allocated and new devices consume: the counter sets of the
        device's own slice on 1.34, of any slice of its pool from 1.35 (a slice then holds counters or devices)."""
        if not self.gates.get("DRAPartitionableDevices"):
            return []
        totals: dict[tuple[str, str, str], Quantity] = {}
        used: dict[tuple[str, str, str], Quantity] = {}
        for key in consumed:
            if key not in self.devices:
                continue
            device, rs = self.devices[key]
            if self.rules.has("api.counter_sets_in_own_slices"):
                owner = rs["spec"]["pool"]["name"]
                counter_sets = self.pool_counters[(rs["spec"]["driver"], owner)]
            else:
                owner, counter_sets = rs["metadata"]["name"], rs["spec"].get("sharedCounters", [])
            for counter_set in counter_sets:
                for counter, value in counter_set["counters"].items():
                    totals[(owner, counter_set["name"], counter)] = Quantity(value["value"])
            for consumption in device.get("consumesCounters", []):
                for counter, value in consumption["counters"].items():
                    slot = (owner, consumption["counterSet"], counter)
                    used[slot] = used.get(slot, Quantity("0")) + Quantity(value["value"])
        out = []
        for slot, amount in sorted(used.items()):
            total = totals.get(slot)
            if total is None or amount > total:
                out.append(f"counter {'/'.join(slot)}: {amount} consumed, {total} available")
        return out


def lookup_attribute(device: dict, driver: str, name: str):
    """A device attribute by fully qualified name (the short name when the domain is the driver)."""
    attributes = device.get("attributes", {})
    domain, _, short = name.rpartition("/")
    value = attributes.get(name)
    if value is None and domain == driver:
        value = attributes.get(short)
    if value is None:
        return None
    ((kind, raw),) = value.items()
    return kind, raw


def tolerates(toleration: dict, taint: dict) -> bool:
    """Whether a device toleration tolerates a device taint (core/v1 semantics)."""
    if toleration.get("effect") and toleration["effect"] != taint["effect"]:
        return False
    if toleration.get("key") and toleration["key"] != taint["key"]:
        return False
    if toleration.get("operator", "Equal") == "Exists":
        return True
    return toleration.get("value", "") == taint.get("value", "")


def node_selector_matches(selector: dict, node: dict) -> bool:
    """A core/v1 NodeSelector (terms ORed, expressions ANDed) against a Node's labels and name."""
    labels = node["metadata"].get("labels", {})
    fields = {"metadata.name": node["metadata"]["name"]}
    for term in selector.get("nodeSelectorTerms", []):
        checks = [(e, labels) for e in term.get("matchExpressions", [])] + \
                 [(e, fields) for e in term.get("matchFields", [])]
        if checks and all(_requirement(e, values) for e, values in checks):
            return True
    return False


def _requirement(expr: dict, values: dict) -> bool:
    op, key, wanted = expr["operator"], expr["key"], expr.get("values", [])
    if op == "In":
        return values.get(key) in wanted
    if op == "NotIn":
        return values.get(key) not in wanted
    if op == "Exists":
        return key in values
    if op == "DoesNotExist":
        return key not in values
    if op in ("Gt", "Lt") and key in values:
        try:
            have, bound = int(values[key]), int(wanted[0])
        except (ValueError, IndexError):
            return False
        return have > bound if op == "Gt" else have < bound
    return False


def evicting_taints(allocations: Iterable[dict], slices: Iterable[dict]) -> list[str]:
    """The allocated devices that kube-controller-manager's device taint eviction evicts a pod for:
    a ``NoExecute`` taint that no toleration of the allocation result tolerates, counting only
    tolerations with effect ``NoExecute`` (1.34 to 1.37; 1.34's results carry no tolerations)."""
    devices = {}
    for rs in slices:
        spec = rs["spec"]
        for device in spec.get("devices", []):
            devices[(spec["driver"], spec["pool"]["name"], device["name"])] = device
    out = []
    for allocation in allocations:
        for result in allocation["devices"]["results"]:
            device = devices.get((result["driver"], result["pool"], result["device"])) or {}
            for taint in device.get("taints", []):
                if taint["effect"] != "NoExecute":
                    continue
                if not any(t.get("effect") == "NoExecute" and tolerates(t, taint) for t in result.get("tolerations", [])):
                    out.append(f"{result['pool']}/{result['device']} {taint['key']}={taint.get('value', '')}:NoExecute")
    return out
