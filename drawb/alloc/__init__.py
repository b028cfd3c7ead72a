"""The scheduler's DRA structured allocator (``k8s.io/dynamic-resource-allocation/structured``),
exact to the scheduler of Kubernetes 1.34 to 1.37 and its feature gates.

``allocate(claims, node=..., slices=..., classes=...)`` returns the ``status.allocation`` the
scheduler would write for each claim on that node, None when they do not fit, or raises
AllocationError with the scheduler's message. ``Allocator(claims, slices=..., classes=...)``
prepares the same for many nodes: ``.allocate(node)`` per node, as the scheduler's Filter. Pure:
no I/O.
"""

from drawb.alloc.allocator import Allocator, allocate
from drawb.alloc.errors import AllocationError, SchedulerCrash

__all__ = ["AllocationError", "Allocator", "SchedulerCrash", "allocate"]
