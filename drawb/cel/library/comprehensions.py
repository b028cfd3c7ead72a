"""cel-go's two-variable comprehensions: the map insertion behind transformMap and transformMapEntry."""

from __future__ import annotations

from typing import Any

from drawb.cel.library._registry import fn
from drawb.cel.values import CelError, map_find


@fn("cel.@mapInsert")
def _map_insert(m: Any, key: Any, value: Any = None) -> dict:
    out = dict(m)
    if isinstance(key, dict) and value is None:
        for k, v in key.items():
            if map_find(out, k)[0]:
                raise CelError(f"insert failed: key {k} already exists")
            out[k] = v
        return out
    if map_find(out, key)[0]:
        raise CelError(f"insert failed: key {key} already exists")
    out[key] = value
    return out
