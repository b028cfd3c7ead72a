"""Manifests against a cluster's devices: do the claims' requests name real attributes, match devices, fit a node?

The schema and cross-reference checks see the manifests alone; these see the device frame too. Each
finding is a warning (the API server accepts such a claim; it just never allocates), with the closest
fix: an attribute or domain name the devices do have, or the largest count one node can satisfy.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pandas as pd

from drawb.apirules import Issue, label

# device.attributes["domain"].name, device.attributes["domain"]["name"], the same for capacity.
_REFERENCE = re.compile(
    r"device\.(attributes|capacity)\[\s*(?P<q>[\"'])(?P<domain>[^\"']+)(?P=q)\s*\]"
    r"(?:\.(?P<field>[A-Za-z_][A-Za-z0-9_]*)|\[\s*([\"'])(?P<key>[^\"']+)\5\s*\])?"
)
_CEL_MEMBERS = {"isSemver", "compareTo", "isGreaterThan", "isLessThan", "asApproximateFloat"}
_CLAIM_SPEC = {"ResourceClaim": ("spec",), "ResourceClaimTemplate": ("spec", "spec")}


def _names(frame: pd.DataFrame) -> dict[str, dict[str, set[str]]]:
    """``{"attributes"|"capacity": {domain: {name, ...}}}`` of the frame's columns."""
    names: dict[str, dict[str, set[str]]] = {"attributes": {}, "capacity": {}}
    for column in frame.columns:
        what = "attributes"
        if column.startswith("capacity:"):
            if column.endswith(":value"):
                continue
            what, column = "capacity", column[len("capacity:"):]
        domain, slash, name = column.rpartition("/")
        if slash and domain:
            names[what].setdefault(domain, set()).add(name)
    return names


def _closest(word: str, choices: set[str] | list[str]) -> str | None:
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def reference_issues(expression: str, known: dict[str, dict[str, set[str]]]) -> list[str]:
    """Attribute and capacity names in ``expression`` that no device has (``known``: the frame's ``_names``), each
    with the closest one that exists."""
    found = []
    for m in _REFERENCE.finditer(expression):
        what, domain = m.group(1), m.group("domain")
        name = m.group("field") or m.group("key")
        domains = known[what]
        if domain not in domains:
            close = _closest(domain, set(domains) | set(known["attributes"]) | set(known["capacity"]))
            fix = f"; did you mean `{close}`?" if close else f"; domains: {', '.join(sorted(domains)) or '(none)'}"
            found.append(f"domain `{domain}` does not exist in the cluster's device {what}{fix}")
            continue
        if name is None or name in _CEL_MEMBERS or name in domains[domain]:
            continue
        singular = "an attribute" if what == "attributes" else "a capacity"
        close = _closest(name, domains[domain])
        fix = f"; did you mean `{close}`?" if close else f"; {what} of {domain}: {', '.join(sorted(domains[domain]))}"
        found.append(f"`{name}` is not {singular} of {domain}{fix}")
    return found


def _requests(spec: Any, base: str) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """``(path, request name, exact request)`` of each request and firstAvailable subrequest."""
    requests = ((spec or {}).get("devices") or {}).get("requests") if isinstance(spec, Mapping) else None
    for i, req in enumerate(requests if isinstance(requests, list) else []):
        if not isinstance(req, Mapping):
            continue
        if isinstance(req.get("exactly"), Mapping):
            yield f"{base}.devices.requests[{i}].exactly", str(req.get("name")), req["exactly"]
        for j, sub in enumerate(req.get("firstAvailable") if isinstance(req.get("firstAvailable"), list) else []):
            if isinstance(sub, Mapping):
                yield f"{base}.devices.requests[{i}].firstAvailable[{j}]", f"{req.get('name')}/{sub.get('name')}", sub


def _expressions(selectors: Any) -> list[str]:
    out = []
    for sel in selectors if isinstance(selectors, list) else []:
        expression = ((sel or {}).get("cel") or {}).get("expression") if isinstance(sel, Mapping) else None
        if isinstance(expression, str):
            out.append(expression)
    return out


def device_fit_issues(
    documents: list[dict],
    frame: pd.DataFrame,
    classes: Mapping[str, Mapping[str, Any]],
    *,
    kubernetes_version: str,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[Issue]:
    """Warnings for requests of ``documents``' claims and claim templates that no device of ``frame`` can serve.

    ``classes`` are the DeviceClasses by name (the cluster's, with the documents' own over them);
    ``progress(step, done, total)`` is told of each document.
    """
    from drawb.cel import CELCompileError, select
    from drawb.cel.frames import class_selector_expressions

    known = _names(frame)
    references = functools.cache(lambda expression: reference_issues(expression, known))

    def selected(class_name: str, expressions: tuple[str, ...]):
        """The devices the class and the selectors match; None when a selector does not compile."""
        try:
            return select(frame, list(expressions), kubernetes_version=kubernetes_version,
                          class_selectors=class_selector_expressions(classes[class_name]))
        except CELCompileError:
            return None  # the cross-reference checks report it

    # a file of thousands of claims repeats a few selectors: each is matched once
    matches = functools.cache(selected)
    busiest = functools.cache(lambda class_name, expressions: _busiest_node(matches(class_name, expressions)))
    issues: list[Issue] = []
    for done, doc in enumerate(documents, 1):
        if progress:
            progress("matching devices", done, len(documents))
        path = _CLAIM_SPEC.get(doc.get("kind"))
        if path is None:
            continue
        spec: Any = doc
        for key in path:
            spec = spec.get(key) if isinstance(spec, Mapping) else None
        for where, name, req in _requests(spec, ".".join(path)):
            expressions = _expressions(req.get("selectors"))
            class_name = req.get("deviceClassName")
            if not isinstance(class_name, str) or class_name not in classes:
                continue  # the cross-reference checks name a missing class
            for i, expression in enumerate(expressions):
                for problem in references(expression):
                    issues.append(Issue("warning", label(doc), f"{where}.selectors[{i}].cel.expression", problem))
            result = matches(class_name, tuple(expressions))
            if result is not None:
                issues += _fit(doc, where, name, req, result, class_name,
                               lambda: busiest(class_name, tuple(expressions)))
    return issues


def _busiest_node(result: Any) -> tuple[int, str]:
    """How many matching devices the node with the most has, and its name."""
    per_node = result.matches["node"].fillna("(devices of no single node)").value_counts()
    return int(per_node.iloc[0]), str(per_node.index[0])


def _fit(doc: dict, where: str, name: str, req: Mapping[str, Any], result: Any, class_name: str,
         busiest: Callable[[], tuple[int, str]]) -> list[Issue]:
    doc_label = label(doc)
    if result.match_count == 0:
        if result.error_count and result.error_count == result.total:
            first = result.errors["error"].iloc[0]
            return [Issue("warning", doc_label, f"{where}.selectors", f"request {name!r}: the selectors error on "
                          f"every device ({result.error_count}), e.g. {first}")]
        errors = f"; the selectors error on {result.error_count} of them" if result.error_count else ""
        return [Issue("warning", doc_label, where, f"request {name!r} matches none of the cluster's {result.total} "
                      f"devices (DeviceClass {class_name!r}, then the selectors{errors}); the claim would never be "
                      "allocated")]
    count = req.get("count", 1)
    if req.get("allocationMode", "ExactCount") != "ExactCount" or not isinstance(count, int) or count <= 1:
        return []
    most, node = busiest()
    if most >= count:
        return []
    return [Issue("warning", doc_label, f"{where}.count", f"request {name!r} asks for {count} devices but no node "
                  f"has that many that match: at most {most} on {node}; a pod using it "
                  f"would stay Pending (count {most} fits)")]
