"""Planning on the cluster as it is now, with ``drawb.alloc``: where a workload fits (``preview``)
and how many more copies fit (``capacity``). Pure: no I/O; the commands read the objects.
"""

from drawb.alloc.view import PlanState
from drawb.plan.capacity import Capacity, NodeCapacity, SharedClaimsOnly, capacity
from drawb.plan.errors import NoClaims, NotAManifest, ObjectNotFound, OtherNamespace
from drawb.plan.preview import NodeFit, Preview, preview
from drawb.plan.workload import Workload, resolve

__all__ = ["Capacity", "NoClaims", "NodeCapacity", "NodeFit", "NotAManifest", "ObjectNotFound", "OtherNamespace", "PlanState",
           "Preview", "SharedClaimsOnly", "Workload", "capacity", "preview", "resolve"]
