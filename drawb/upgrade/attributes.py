"""Selectors reading attributes the NVIDIA DRA driver release does not publish: a device without the attribute
makes the scheduler's CEL fail with ``no such key`` (the allocation fails), or a guarded read never matches."""

from __future__ import annotations

from collections.abc import Iterator

from drawb.cel import CELCompileError, compile_selector
from drawb.cel.reads import attribute_reads
from drawb.gpu.releases import DOMAIN, GPU_CLASSES, RELEASES, REPLACEMENTS, STANDARD, DriverRelease, publishing
from drawb.upgrade.inputs import Inputs, Item, allocated, requests, selectors
from drawb.upgrade.report import ERROR, WARNING, Finding

_NVIDIA_STANDARD = {a for r in RELEASES.values() for a in r.attributes if a.startswith(f"{STANDARD}/")}


def _nvidia_classes(inputs: Inputs) -> set[str]:
    """The DeviceClasses that pick the NVIDIA GPU driver's devices: the chart's, and any whose selectors name it."""
    return set(GPU_CLASSES) | {
        str((item.obj.get("metadata") or {}).get("name")) for item in inputs.of("DeviceClass")
        if any(DOMAIN in expression for _, expression in selectors(item.spec.get("selectors"), "spec"))}


def _expressions(inputs: Inputs, nvidia: set[str]) -> Iterator[tuple[Item, str, str, bool]]:
    """(item, path, expression, whether it is about NVIDIA GPUs) of every selector of a class, claim or template
    (claims that hold their devices are left out: the upgrade does not reallocate them)."""
    for item in inputs.of("DeviceClass"):
        for path, expression in selectors(item.spec.get("selectors"), "spec"):
            yield item, path, expression, DOMAIN in expression
    for item in inputs.of("ResourceClaim", "ResourceClaimTemplate"):
        if allocated(item):
            continue
        for path, request in requests(item):
            about = request.get("deviceClassName") in nvidia
            for where, expression in selectors(request.get("selectors"), path):
                yield item, where, expression, about or DOMAIN in expression


def _fix(attribute: str, release: DriverRelease) -> str:
    if attribute in REPLACEMENTS:
        return f"read {REPLACEMENTS[attribute]} instead"
    later = [name for name in publishing(attribute) if list(RELEASES).index(name) > list(RELEASES).index(release.name)]
    if later:
        return f"upgrade the driver to {later[0]} or later first, or leave the attribute out"
    return "check the attribute's name: no NVIDIA DRA driver release drawb knows publishes it"


def unpublished_reads(inputs: Inputs, release: DriverRelease | None, told: str) -> list[Finding]:
    """A finding for each selector read of a ``gpu.nvidia.com`` (or NVIDIA-published standard) attribute that
    ``release`` does not publish; ``told``: how the release is known, for the message."""
    if release is None:
        return []
    found = []
    nvidia = _nvidia_classes(inputs)
    for item, path, expression, about_nvidia in _expressions(inputs, nvidia):
        try:
            selector = compile_selector(expression, kubernetes_version=inputs.target.minor, stored=True)
        except CELCompileError:
            continue  # not a selector the scheduler runs: `validate` says why
        for read in attribute_reads(selector.ast.root):
            name = read.qualified
            checked = read.domain == DOMAIN or (about_nvidia and name in _NVIDIA_STANDARD)
            if not checked or name in release.attributes:
                continue
            having = publishing(name)
            history = f"only {', '.join(having)} published it" if having else "no NVIDIA release publishes it"
            if read.guarded:
                level, effect = WARNING, "the selector tests for it, so it never matches a device of this release"
            else:
                level, effect = ERROR, f"the scheduler fails the allocation: no such key: {read.name}"
            found.append(Finding(
                "attribute", level, item.where, item.label, path,
                f"reads {name}, which the NVIDIA DRA driver {release.name} ({told}) does not publish ({history}): "
                f"{effect}", _fix(name, release)))
    return found
