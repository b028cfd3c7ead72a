"""The naive answers the grouped ones must equal: every node allocated on its own with the public
``drawb.alloc.allocate`` and every slice and claim given, copies counted one by one."""

from __future__ import annotations

from drawb.alloc import allocate
from drawb.api.nodeaffinity import node_filter


def _held(allocations: list[dict]) -> list[dict]:
    return [{"metadata": {"name": ""}, "status": {"allocation": a}} for a in allocations]


def naive_preview(pod: dict, claims: list[dict], scenario: dict) -> dict[str, list[dict]]:
    """Node -> allocations, for every node that fits."""
    out = {}
    for node in sorted(scenario["nodes"], key=lambda n: n["metadata"]["name"]):
        if node_filter(pod, node) is not None:
            continue
        result = allocate(claims, node=node, slices=scenario["slices"], classes=scenario["classes"],
                          allocated=scenario["claims"], **scenario["version"])
        if result is not None:
            out[node["metadata"]["name"]] = result
    return out


def naive_capacity(pod: dict, claims: list[dict], scenario: dict, limit: int = 200) -> dict[str, int]:
    """Node -> copies that fit there, counted one allocation at a time."""
    out = {}
    for node in sorted(scenario["nodes"], key=lambda n: n["metadata"]["name"]):
        if node_filter(pod, node) is not None:
            continue
        extra: list[dict] = []
        count = 0
        while count < limit:
            result = allocate(claims, node=node, slices=scenario["slices"], classes=scenario["classes"],
                              allocated=[*scenario["claims"], *extra], **scenario["version"])
            if result is None:
                break
            extra += _held(result)
            count += 1
        out[node["metadata"]["name"]] = count
    return out
