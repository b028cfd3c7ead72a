"""CEL functions, one module per CEL library: each declares a function once, its checker
declaration beside its implementation (`_registry.fn`), so adding a function is a one-file change.

Kubernetes libraries: `quantity`, `semver`, `k8s_lists`, `regex`, `urls`, `ip`, `cidr`, `format`, and
DRA's `dra`; cel-go's: `standard` (with the ordering operators' declarations), `strings`, `lists`,
`sets`, `optional`, `comprehensions`. The evaluators find an implementation with `lookup`; the
checker environment (drawb.cel.env) takes `declarations(spec)` and `yaml_declarations()`.
A function whose cost is not cel-go's default gives its estimate (`cost=`); drawb.cel.cost asks `cost_of`.
"""

# Imported for their declarations, in the order the checker receives them.
from drawb.cel.library import (  # noqa: F401
    quantity,
    semver,
    k8s_lists,
    strings,
    regex,
    urls,
    ip,
    cidr,
    format,
    standard,
    dra,
    sets,
    lists,
    comprehensions,
    optional,
)
from drawb.cel.library._registry import Impl, cost_of, declarations, lookup, yaml_declarations
from drawb.cel.library.regex import compile_re

__all__ = ["Impl", "compile_re", "cost_of", "declarations", "lookup", "yaml_declarations"]
