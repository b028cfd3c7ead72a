"""What decides a DRA CEL environment's declarations, resolved once (``drawb.cel.env.env_spec`` makes it):
the environment builder, the device variable and the libraries read it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EnvSpec:
    """Which declarations an environment has; derived from version, stored flag and gates."""

    minor: int
    stored: bool
    allow_multiple_allocations: bool  # device.allowMultipleAllocations declared
    list_attributes: bool  # attribute values typed dyn, `includes` declared
    ext_lists: bool  # cel-go ext.Lists v3 (slice, flatten, sort, ...)
    convert_list_attributes: bool  # the scheduler turns list-valued attributes into CEL lists
    int_to_duration: bool = True  # CEL's duration(int) conversion exists (cel-go before v0.29)

    @property
    def attribute_type(self) -> str:
        """The declared type of one attribute value: `dyn` with list attributes, else `any`."""
        return "dyn" if self.list_attributes else "any"
