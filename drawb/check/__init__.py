"""CUDA check pods: prove that a pod got exactly the devices allocated to its claim.

>>> verdict = check(cluster, template="single-gpu")            # doctest: +SKIP
>>> verdict.status, verdict.expected, verdict.containers       # doctest: +SKIP

What is checked: a bundled template (rendered through drawb.render), an existing ResourceClaim, or
a CEL selector on a DeviceClass. The check applies a labelled claim template and pod, reports each
stage, streams the log, parses nvidia-smi's output (drawb.gpu.smi_parse) and compares the UUIDs
the pod saw with the ``uuid`` attributes of the devices allocated to its claim.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drawb.check.manifests import (
    DEFAULT_CLASS,
    PAYLOADS,
    RUN_LABEL,
    CheckObjects,
    from_claim,
    from_documents,
    from_selector,
    new_run_id,
    payload_command,
)
from drawb.check.run import Progress, cleanup, run_check
from drawb.check.verdict import FAILED, MISMATCH, NO_GPU_VISIBLE, PASS, TIMEOUT, Verdict
from drawb.cluster.protocol import Cluster
from drawb.errors import DrawbError, UsageError

__all__ = ["FAILED", "MISMATCH", "NO_GPU_VISIBLE", "PASS", "PAYLOADS", "RUN_LABEL", "TIMEOUT", "ClaimNotFound",
           "Verdict", "build_objects", "check", "cleanup"]


class ClaimNotFound(DrawbError):
    """The ResourceClaim to check does not exist."""


def build_objects(
    cluster: Cluster,
    *,
    namespace: str,
    template: str | None = None,
    values: Mapping[str, Any] | None = None,
    template_dirs: tuple[str, ...] = (),
    claim: str | None = None,
    rendered: Any = None,
    selector: str | None = None,
    device_class: str | None = None,
    count: int = 1,
    payload: str = "list",
    command: list[str] | None = None,
    image: str | None = None,
    node: str | None = None,
    run_id: str | None = None,
) -> CheckObjects:
    """The labelled objects of one check, validated before anything is applied."""
    chosen = [name for name, given in (("a template", template), ("a claim", claim), ("rendered manifests", rendered),
                                       ("a selector or class", selector or device_class)) if given]
    if len(chosen) > 1:
        raise UsageError(f"check one thing at a time: got {' and '.join(chosen)}",
                         hint="give a template, --claim NAME, or --selector/--class")
    options = {"run_id": run_id or new_run_id(), "namespace": namespace, "image": image, "node": node,
               "command": payload_command(payload, command)}
    if claim:
        if cluster.get("ResourceClaim", claim, namespace) is None:
            names = [c["metadata"]["name"] for c in cluster.list("ResourceClaim", namespace)]
            import difflib

            close = difflib.get_close_matches(claim, names, n=1)
            raise ClaimNotFound(f"no ResourceClaim {claim!r} in namespace {namespace!r}",
                                hint=f"did you mean {close[0]!r}?" if close else "list claims with `claims`")
        return from_claim(claim, **options)
    if rendered is not None:  # a drawb.render.Rendered (``r = %dra render ...``) or a list of manifests
        documents = getattr(rendered, "documents", rendered)
        objects = from_documents(list(documents), f"rendered {getattr(rendered, 'template', 'manifests')}", **options)
    elif template:
        from drawb import render as rendering

        try:
            rendered = rendering.render(template, dict(values or {}), namespace=namespace, cluster=cluster,
                                        template_dirs=template_dirs)
        except rendering.RenderError as exc:
            raise UsageError(f"template {template!r}: {exc}", hint="`templates NAME` lists its parameters") from None
        objects = from_documents(rendered.documents, f"template {template}", **options)
    else:
        objects = from_selector(selector, device_class=device_class or DEFAULT_CLASS, count=count, **options)
    _validate(objects, cluster)
    return objects


def _validate(objects: CheckObjects, cluster: Cluster) -> None:
    """Schema, cross-reference and CEL checks of drawb.render, as for any manifest drawb applies."""
    from drawb import render as rendering

    issues = rendering.validate_documents(objects.documents, kubernetes_version=cluster.server_version(),
                                          cluster=cluster)
    errors = [i for i in issues if i.level == "error"]
    if errors:
        raise UsageError("the check's manifests are invalid: " + "; ".join(map(str, errors)),
                         hint="fix the selector or the class; nothing was applied")


def check(
    cluster: Cluster,
    *,
    namespace: str = "default",
    timeout: float = 120,
    keep: bool = False,
    progress: Progress | None = None,
    why_hint: str | None = None,
    **what: Any,
) -> Verdict:
    """Run one check (what to check as for ``build_objects``) and return its verdict; always cleans up unless keep."""
    payload = what.get("payload", "list")
    objects = build_objects(cluster, namespace=namespace, **what)
    return run_check(cluster, objects, payload=payload, timeout=timeout, keep=keep, progress=progress,
                     why_hint=why_hint)
