"""Requests and subrequests of a claim, read uniformly (the allocator's ``requestAccessor``), and
the per-request data the allocator gathers before its search."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

EXACT_COUNT = "ExactCount"
ALL = "All"


def kobj(claim: Mapping[str, Any]) -> str:
    """A claim as klog.KObj prints it: ``namespace/name``, or ``name`` without a namespace."""
    metadata = claim.get("metadata") or {}
    namespace, name = metadata.get("namespace") or "", metadata.get("name") or ""
    return f"{namespace}/{name}" if namespace else name


@dataclass(eq=False)
class Request:
    """One request (``exactly``) or subrequest, with the API server's defaults applied."""

    name: str
    class_name: str
    mode: str
    count: int
    admin_access: bool
    has_admin_access: bool
    selectors: list
    tolerations: list
    capacity: Mapping[str, Any] | None
    derived: dict[str, str]  # 1.37 derivedAttributes: name -> CEL expression

    @classmethod
    def exact(cls, request: Mapping[str, Any]) -> Request:
        exactly = request.get("exactly") or {}
        return cls._make(request.get("name", ""), exactly, admin=exactly.get("adminAccess"))

    @classmethod
    def sub(cls, subrequest: Mapping[str, Any]) -> Request:
        return cls._make(subrequest.get("name", ""), subrequest, admin=None)

    @classmethod
    def _make(cls, name: str, spec: Mapping[str, Any], admin: Any) -> Request:
        mode = spec.get("allocationMode") or EXACT_COUNT
        count = spec.get("count")
        if count is None:
            count = 1 if mode == EXACT_COUNT else 0
        return cls(
            name=name,
            class_name=spec.get("deviceClassName") or "",
            mode=mode,
            count=int(count),
            admin_access=bool(admin),
            has_admin_access=admin is not None,
            selectors=list(spec.get("selectors") or []),
            tolerations=list(spec.get("tolerations") or []),
            capacity=spec.get("capacity"),
            derived={d.get("name", ""): d.get("expression", "") for d in spec.get("derivedAttributes") or []},
        )


@dataclass(eq=False)
class RequestData:
    """What validation learned about one request or subrequest."""

    request: Request
    parent: Request | None = None
    device_class: Mapping[str, Any] | None = None
    num_devices: int = 0
    selected_sub: int = 0
    all_devices: list = field(default_factory=list)
    class_selectors: list = field(default_factory=list)
    class_owner: str = ""

    @property
    def name(self) -> str:
        """``request`` or ``request/subrequest``: the name results carry."""
        if self.parent is not None:
            return f"{self.parent.name}/{self.request.name}"
        return self.request.name
