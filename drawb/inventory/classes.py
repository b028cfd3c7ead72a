"""DeviceClasses to a frame: name, CEL selectors, extended resource name and config."""

from __future__ import annotations

from typing import Any

import pandas as pd

from drawb.inventory._frame import object_array, string_array
from drawb.inventory._read import list_items

IMPLICIT_EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"


def selector_expressions(spec: Any) -> list[str]:
    """The CEL expressions of a DeviceClass (or request) spec's selectors, in order."""
    selectors = spec.get("selectors") if isinstance(spec, dict) else None
    out = []
    for selector in selectors or ():
        cel = selector.get("cel") if isinstance(selector, dict) else None
        if isinstance(cel, dict) and isinstance(cel.get("expression"), str):
            out.append(cel["expression"])
    return out


def class_frame(classes: list[dict]) -> pd.DataFrame:
    """One row per DeviceClass: name, selectors (CEL list), extended_resource_name, config (or None)."""
    rows = [c for c in list_items(classes) if isinstance(c, dict)]
    specs = [c.get("spec") if isinstance(c.get("spec"), dict) else {} for c in rows]
    names = [(c.get("metadata") or {}).get("name") for c in rows]
    return pd.DataFrame(
        {
            "name": string_array(names),
            "selectors": object_array([selector_expressions(s) for s in specs]),
            "extended_resource_name": string_array([s.get("extendedResourceName") for s in specs]),
            "implicit_extended_resource_name": string_array(
                [None if n is None else IMPLICIT_EXTENDED_PREFIX + n for n in names]
            ),
            "config": object_array([s.get("config") or None for s in specs]),
        }
    )
