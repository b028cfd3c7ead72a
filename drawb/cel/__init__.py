"""The DRA CEL environment: compile selectors as the API server does, evaluate them as the scheduler does.

`compile_selector` checks an expression (same accept/reject and message as the API server of a given
Kubernetes version), `Selector.matches` evaluates it on one ResourceSlice device, and `select` runs it
over a whole inventory frame in one vectorized pass with identical results (`preview` reports a
compile error in its result instead of raising it).

Compiling (`selector.compile_selector`):

1. `env.env_spec`: version, stored flag (scheduler or API server) and feature gates -> `EnvSpec`.
2. length limit; `rewrite`: `has(device.<field>)` made to mean what it means in cel-go.
3. `env.checker_env`: the C++ checker's environment, declared from `library` (one module per CEL
   library) and `device` (the `device` variable); the checker parses and type-checks.
4. on a rejection, `diagnostics` rewords the checker's text as cel-go's; on success, `ast` decodes
   the checked tree and `validators` runs cel-go's extra checks (literals, format calls, regexes).
5. result type bool; `cost` estimates the worst-case cost as the API server does (limit 1,000,000).

Evaluating:

- one device (`Selector.matches`): `device.from_json` builds the `device` variable, `interp`
  compiles the checked tree into closures over `operators` and the `library` implementations,
  on `values` (CEL runtime values); the result must be a bool.
- a frame (`frames.select`): `vector` evaluates each node over factorized frame columns with the
  same scalar functions, falling back per distinct device (`device.from_row`) where needed;
  class selectors first, then the request's, as the scheduler runs them.
"""

from typing import Any

from drawb.cel.selector import CELCompileError, CELEvalError, Selector, compile_selector

_ON_FRAMES = frozenset({"SelectResult", "preview", "select"})  # drawb.cel.frames's, imported on first use


def __getattr__(name: str) -> Any:
    """The frame functions, imported on first use: compiling and evaluating a selector on one device
    (the allocator, ``drawb why``) needs no pandas."""
    if name in _ON_FRAMES:
        from drawb.cel import frames

        return getattr(frames, name)
    raise AttributeError(f"module 'drawb.cel' has no attribute {name!r}")

__all__ = ["CELCompileError", "CELEvalError", "SelectResult", "Selector", "compile_selector", "preview", "select"]
