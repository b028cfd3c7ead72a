"""The DRA CEL environment: compile selectors as the API server does, evaluate them as the scheduler does.

`compile_selector` checks an expression (same accept/reject and message as the API server of a given
Kubernetes version), `Selector.matches` evaluates it on one ResourceSlice device, and `select` runs it
over a whole inventory frame in one vectorized pass with identical results.
"""

from drawb.cel.preview import SelectResult, preview, select
from drawb.cel.selector import CELCompileError, CELEvalError, Selector, compile_selector

__all__ = ["CELCompileError", "CELEvalError", "SelectResult", "Selector", "compile_selector", "preview", "select"]
