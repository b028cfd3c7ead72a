"""The allocator's error: what the scheduler reports when an allocation attempt aborts."""

from __future__ import annotations

from drawb.errors import DrawbError


class AllocationError(DrawbError):
    """The allocator refused the input (bad claim, class, selector or pool); the message is the scheduler's own text."""


class SchedulerCrash(AllocationError):
    """The scheduler of this release crashes on the input (a bug a later patch fixed): it gives no verdict at all."""
