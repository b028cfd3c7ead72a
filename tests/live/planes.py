"""The control plane of a live test module that needs a feature gate set otherwise than the session may have it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def plane_with_gate(control_plane: Any, start_control_plane: Callable[..., Any], gate: str, on: bool) -> Iterator[Any]:
    """The session's control plane if ``gate`` is already ``on`` (or off) there, else one started with it,
    stopped afterwards. A module overrides its ``control_plane`` fixture with it, so conftest's ``namespace``
    fixture makes the tests' namespaces there."""
    if control_plane.feature_enabled(gate) == on:
        yield control_plane
        return
    cp = start_control_plane({gate: on})
    yield cp
    cp.cluster.down()
