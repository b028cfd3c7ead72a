"""Why a pod is pending, or why its claims got these devices (``%dra why``): pure logic on objects.

``explain(state, kind, namespace, name)`` reads the scheduler's view (``drawb.alloc.view.PlanState``: the
objects and the scheduler's version and gates) and returns an ``Explanation``: the state (a template's
claim not created yet, a DeviceClass missing, a claim reserved by another pod, allocated but not bound,
pending, allocated and starting or running, ended with what became of its claims), for pending pods the funnel per request recomputed with ``drawb.alloc`` and the first stage that
empties, near misses and what would make it fit.
"""

from drawb.explain.pod import explain
from drawb.explain.result import Explanation, Remedy

__all__ = ["Explanation", "Remedy", "explain"]
