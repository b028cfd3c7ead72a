"""Read a claim back into a ClaimSpec: conditions recognised from the CEL drawb writes, the rest kept verbatim."""

from __future__ import annotations

import json
import re

from drawb.build.claim import DEFAULT_IMAGE, Choice, ClaimSpec, Constraint, Request
from drawb.build.conditions import CONDITION_KINDS, BuildError, Condition
from drawb.build.sharing import sharing_from_config

_DOMAIN = r"""device\.(attributes|capacity)\[(["'])gpu\.nvidia\.com\2\]\.(\w+)"""
_STRING = re.compile(_DOMAIN + r"""\s*(==|!=)\s*("(?:[^"\\]|\\.)*"|'[^'\\]*')""")
_COMPARE = re.compile(_DOMAIN + r"""\.compareTo\((quantity|semver)\((["'])([^"'\\]+)\5\)\)\s*(>=|<=)\s*0""")
_METHOD = re.compile(_DOMAIN + r"""\.(isGreaterThan|isLessThan)\((quantity|semver)\((["'])([^"'\\]+)\6\)\)""")
_BY_FIELD = {(k.field, k.capacity): name for name, k in CONDITION_KINDS.items() if k.field}
_OPS = {">=": "at least", "<=": "at most", "isGreaterThan": "more than", "isLessThan": "less than", "==": "is", "!=": "is not"}
_BODY_FIELDS = {"name", "deviceClassName", "selectors", "allocationMode", "count"}


def _kind(where: str, name: str, value_type: str) -> str | None:
    kind = _BY_FIELD.get((name, where == "capacity"))
    return kind if kind is not None and CONDITION_KINDS[kind].value_type == value_type else None


def condition_of(expression: str) -> Condition | None:
    """The condition ``expression`` is the CEL of, or None when it is not one drawb writes."""
    text = expression.strip()
    if m := _STRING.fullmatch(text):
        kind = _kind(m[1], m[3], "string")
        literal = m[5]
        value = json.loads(literal) if literal.startswith('"') else literal[1:-1]
        return Condition(kind, value, _OPS[m[4]]) if kind else None
    if m := _COMPARE.fullmatch(text):
        kind = _kind(m[1], m[3], "quantity" if m[4] == "quantity" else "version")
        return Condition(kind, m[6], _OPS[m[7]]) if kind else None
    if m := _METHOD.fullmatch(text):
        kind = _kind(m[1], m[3], "quantity" if m[5] == "quantity" else "version")
        return Condition(kind, m[7], _OPS[m[4]]) if kind else None
    return None


def conditions_of(expression: str) -> list[Condition]:
    """The conditions of one selector: each ``&&`` part recognised, else the whole selector as raw CEL."""
    parts = [condition_of(p) for p in expression.split("&&")]
    if all(parts):
        return parts
    return [Condition("cel", expression)]


def _choice(name: str, body: dict, where: str) -> Choice:
    if "deviceClassName" not in body:
        raise BuildError(f"{where} names no deviceClassName", hint="every request or alternative needs a DeviceClass")
    conditions = [c for s in body.get("selectors") or [] for c in conditions_of((s.get("cel") or {}).get("expression", ""))]
    return Choice(name=name, device_class=body["deviceClassName"], conditions=conditions,
                  count=int(body.get("count", 1)), all_devices=body.get("allocationMode") == "All",
                  extra={k: v for k, v in body.items() if k not in _BODY_FIELDS})


def _request(entry: dict) -> Request:
    name = entry.get("name", "")
    if "exactly" in entry:
        return Request(name, [_choice(name, entry["exactly"], f"request {name!r}")])
    if "firstAvailable" in entry:
        choices = [_choice(s.get("name", ""), s, f"request {name!r} alternative {s.get('name')!r}")
                   for s in entry["firstAvailable"]]
        return Request(name, choices, first_available=len(choices) == 1)
    if "deviceClassName" in entry:
        raise BuildError(f"request {name!r} has deviceClassName directly under it (the beta shape)",
                         hint="resource.k8s.io/v1 nests it under `exactly:`")
    raise BuildError(f"request {name!r} has neither exactly nor firstAvailable")


def spec_from_claim_spec(spec: dict, *, template_name: str = "built-claim", pod_name: str = "built-claim-pod") -> ClaimSpec:
    """A ClaimSpec from a ResourceClaim's ``spec`` (or a template's ``spec.spec``)."""
    devices = (spec or {}).get("devices") or {}
    requests = [_request(r) for r in devices.get("requests") or []]
    constraints = []
    for c in devices.get("constraints") or []:
        kind = "matchAttribute" if "matchAttribute" in c else "distinctAttribute"
        constraints.append(Constraint(kind, c.get(kind, ""), list(c.get("requests") or [])))
    sharing, extra = None, []
    for entry in devices.get("config") or []:
        found = sharing_from_config(entry) if sharing is None else None
        if found is not None:
            names = [r.name for r in requests]
            found.requests = [] if sorted(found.requests) == sorted(names) else found.requests
            sharing = found
        else:
            extra.append(entry)
    return ClaimSpec(template_name=template_name, pod_name=pod_name, requests=requests, constraints=constraints,
                     sharing=sharing, extra_config=extra)


def spec_from_documents(documents: list[dict]) -> ClaimSpec:
    """A ClaimSpec from manifests holding one ResourceClaimTemplate or ResourceClaim, and perhaps a Pod."""
    claims = [d for d in documents if d.get("kind") in ("ResourceClaimTemplate", "ResourceClaim")]
    if len(claims) != 1:
        found = ", ".join(f"{d.get('kind')}/{(d.get('metadata') or {}).get('name')}" for d in documents) or "nothing"
        raise BuildError(f"the builder starts from one ResourceClaimTemplate or ResourceClaim; found {found}",
                         hint="pick a template with one claim template, or one claim")
    claim = claims[0]
    name = (claim.get("metadata") or {}).get("name", "built-claim")
    spec = (claim.get("spec") or {}).get("spec") if claim["kind"] == "ResourceClaimTemplate" else claim.get("spec")
    pods = [d for d in documents if d.get("kind") == "Pod"]
    built = spec_from_claim_spec(spec or {}, template_name=name, pod_name=f"{name}-pod")
    if pods:
        pod = pods[0]
        containers = (pod.get("spec") or {}).get("containers") or []
        built.pod_name = (pod.get("metadata") or {}).get("name", built.pod_name)
        built.containers = max(1, len(containers))
        built.image = (containers[0].get("image") if containers else None) or DEFAULT_IMAGE
    return built
