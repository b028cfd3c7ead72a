"""Property: `select` over a frame equals `Selector.matches` on every device, errors included."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drawb.cel import CELCompileError, CELEvalError, compile_selector, select

from .helpers import frame_of, resource_slice

# More examples for a deeper search: DRAWB_HYPOTHESIS_EXAMPLES=2000 pytest tests/unit/cel/test_vectorized_property.py
EXAMPLES = int(os.environ.get("DRAWB_HYPOTHESIS_EXAMPLES", "150"))
DRIVERS = ("gpu.example.com", "nic.example.com")
OTHER = "other.example.org"
# Each attribute name has one type everywhere (the inventory frame has one column per name).
ATTRS = {"model": "string", "count": "int", "ready": "bool", "ver": "version", "tags": "strings", "ids": "ints"}
CAPS = ("memory", "cores")
STRINGS = ("a100", "h100", "l4", "", "A100-80GB")
# Mostly valid versions; a few the scheduler cannot parse (the device then errors as a whole).
VERSIONS = ("1.0.0", "8.9.0", "12.4.1", "1.2.3-rc.1", "8.0.0", "0.0.1", "2.0.0+build", "01.0.0", "v1.0.0", "1.0")
QUANTITIES = ("1", "40Gi", "80Gi", "1500m", "2e3", "0.5", "48G")


def _value(kind: str, draw) -> dict:
    if kind == "string":
        return {"string": draw(st.sampled_from(STRINGS))}
    if kind == "int":
        return {"int": draw(st.integers(-3, 3))}
    if kind == "bool":
        return {"bool": draw(st.booleans())}
    if kind == "version":
        return {"version": draw(st.sampled_from(VERSIONS))}
    if kind == "strings":
        return {"strings": draw(st.lists(st.sampled_from(STRINGS), max_size=3))}
    return {"ints": draw(st.lists(st.integers(-2, 2), max_size=3))}


@st.composite
def devices(draw, driver: str):
    out = []
    for i in range(draw(st.integers(1, 6))):
        attributes = {}
        for name, kind in ATTRS.items():
            rare = kind in ("strings", "ints", "version")  # they make the whole device error in some envs
            where = draw(st.sampled_from(("absent",) * (5 if rare else 1) + ("own", "other")))
            if where == "own":
                attributes[name] = _value(kind, draw)
            elif where == "other":
                attributes[f"{OTHER}/{name}"] = _value(kind, draw)
        ordered = dict(sorted(attributes.items(), key=lambda kv: kv[0] if "/" in kv[0] else f"{driver}/{kv[0]}"))
        capacity = {c: {"value": draw(st.sampled_from(QUANTITIES))} for c in CAPS if draw(st.booleans())}
        device = {"name": f"dev-{i}", "attributes": ordered, "capacity": capacity}
        if draw(st.booleans()):
            device["allowMultipleAllocations"] = True
        out.append(device)
    return out


DOMAIN = st.sampled_from([*DRIVERS, OTHER, "missing.example.com"])
LITERAL = st.sampled_from(['"a100"', '"h100"', '""', "1", "0", "-2", "true", "false", "1.5", 'semver("1.0.0")'])


@st.composite
def atoms(draw) -> str:
    dom = draw(DOMAIN)
    name = draw(st.sampled_from([*ATTRS, "nope"]))
    cap = draw(st.sampled_from([*CAPS, "nope"]))
    attr = f'device.attributes["{dom}"].{name}'
    capacity = f'device.capacity["{dom}"].{cap}'
    shapes = [
        f'device.driver == "{draw(st.sampled_from(DRIVERS))}"',
        f"{attr} == {draw(LITERAL)}",
        f"{attr} > {draw(st.integers(-2, 2))}",
        f'device.attributes["{dom}"]["{name}"].startsWith("{draw(st.sampled_from(["a", "h", ""]))}")',
        f'{attr}.isGreaterThan(semver("{draw(st.sampled_from(["1.0.0", "8.0.0"]))}"))',
        f'{capacity}.compareTo(quantity("{draw(st.sampled_from(QUANTITIES))}")) >= 0',
        f"{capacity}.isLessThan(quantity(\"{draw(st.sampled_from(QUANTITIES))}\"))",
        f"has({attr})",
        f'"{name}" in device.attributes["{dom}"]',
        f'"{dom}" in device.capacity',
        f"device.attributes[\"{dom}\"].?{name}.orValue({draw(LITERAL)}) == {draw(LITERAL)}",
        f'{attr} in ["a100", "h100"]',
        f'{attr}.matches("^[ah]1")',
        f'device.attributes.exists(d, d == "{dom}")',
        f'["a100", "l4"].exists(p, {attr} == p)',
        f'size(device.capacity["{dom}"]) > 1',
        f"{attr}.includes(1)",
        f"{attr}.exists(x, x > 0)",
        "device.allowMultipleAllocations",
        attr,
        f'size(device.attributes["{dom}"]) > 2',
        f'device.attributes["{dom}"].exists(k, device.attributes["{dom}"][k] == "a100")',
        f'device.attributes["{dom}"].all(k, k != "{name}" || device.attributes["{dom}"][k] > 0)',
        f'device.attributes["{dom}"].exists_one(k, device.attributes["{dom}"][k] == {draw(LITERAL)})',
        f'device.attributes["{dom}"].filter(k, k.startsWith("{draw(st.sampled_from(["m", "t", "c", ""]))}")).size() > 1',
        f'device.capacity["{dom}"].exists(k, device.capacity["{dom}"][k].isGreaterThan(quantity("40Gi")))',
        f"size(device.attributes) == {draw(st.integers(0, 2))}",
        f'device.capacity.exists(d, d == "{dom}") && size(device.capacity) > 0',
        f"cel.bind(a, {attr}, a == a)",
        f'{attr} == device.attributes["{draw(DOMAIN)}"].{draw(st.sampled_from([*ATTRS]))}',
        f'{capacity}.add(quantity("1")).isGreaterThan(quantity("{draw(st.sampled_from(QUANTITIES))}"))',
        f'{capacity} == quantity("{draw(st.sampled_from(QUANTITIES))}")',
        f'{capacity}.asInteger() > 10',
        f'device.attributes["{dom}"].?{name}.hasValue()',
        f'"{dom}" in device.attributes ? has({attr}) : device.driver.endsWith(".com")',
    ]
    return draw(st.sampled_from(shapes))


def selectors():
    return st.recursive(
        atoms(),
        lambda inner: st.one_of(
            st.tuples(inner, inner).map(lambda t: f"({t[0]}) && ({t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]}) || ({t[1]})"),
            inner.map(lambda a: f"!({a})"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]}) ? ({t[1]}) : ({t[2]})"),
        ),
        max_leaves=4,
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    expression=selectors(),
    version=st.sampled_from(["1.34", "1.36", "1.37"]),
    list_gate=st.booleans(),
)
def test_select_equals_matches(data, expression: str, version: str, list_gate: bool) -> None:
    try:
        selector = compile_selector(
            expression, kubernetes_version=version, stored=True, feature_gates={"DRAListTypeAttributes": list_gate}
        )
    except CELCompileError:
        return
    slices, expected = [], {}
    for n, driver in enumerate(DRIVERS):
        devs = data.draw(devices(driver))
        slices.append(resource_slice(devs, driver, node=f"node-{n}"))
        for d in devs:
            try:
                expected[(driver, d["name"])] = selector.matches(d, driver)
            except CELEvalError as err:
                expected[(driver, d["name"])] = str(err)
    result = select(frame_of(slices), selector)
    got = {}
    for driver, name in zip(result.matches["driver"], result.matches["device"]):
        got[(driver, name)] = True
    for driver, name, error in zip(result.errors["driver"], result.errors["device"], result.errors["error"]):
        got[(driver, name)] = error
    for key, value in expected.items():
        assert got.get(key, False) == value, (expression, key)
