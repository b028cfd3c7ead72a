"""compile_selector: the API server's environment per version and gates, its limits and message shapes."""

from __future__ import annotations

import pytest

from drawb import versions
from drawb.cel import CELCompileError, compile_selector
from drawb.cel.selector import MAX_EXPRESSION_BYTES

GPU = 'device.attributes["gpu.nvidia.com"]'


def rejects(expression: str, **kwargs) -> str:
    with pytest.raises(CELCompileError) as info:
        compile_selector(expression, **kwargs)
    return str(info.value)


def test_message_has_position_source_line_and_caret():
    assert rejects(f"{GPU}.productName == 1 && nope") == (
        "compilation failed: ERROR: <input>:1:57: undeclared reference to 'nope' (in container '')\n"
        f" | {GPU}.productName == 1 && nope\n"
        " | " + "." * 56 + "^"
    )


def test_multi_line_expression_points_at_the_right_line():
    message = rejects('device.driver == "gpu.nvidia.com" &&\n  device.capacity["gpu.nvidia.com"].memory > 1')
    assert message.startswith("compilation failed: ERROR: <input>:2:44: found no matching overload for '_>_'")
    assert message.endswith(' |   device.capacity["gpu.nvidia.com"].memory > 1\n | ...........................................^')


def test_capacity_is_a_quantity_attributes_are_checked_at_run_time():
    assert "(kubernetes.Quantity, string)" in rejects('device.capacity["gpu.nvidia.com"].memory == "80Gi"')
    compile_selector(f'{GPU}.memory == "80Gi"')  # attributes are `any`: a runtime matter


def test_result_must_be_bool_or_the_attribute_type():
    assert rejects('device.driver') == "must evaluate to bool or the unknown type, not string"
    assert rejects("dyn(true)") == "must evaluate to bool or the unknown type, not dyn"
    compile_selector(f"{GPU}.ready")  # `any` on 1.34
    compile_selector("dyn(true)", kubernetes_version="1.36", feature_gates={"DRAListTypeAttributes": True})


def test_length_limit_is_the_api_servers_only():
    long = '"' + "a" * (MAX_EXPRESSION_BYTES - 8) + '" != ""'
    compile_selector(long)
    longer = long.replace('"a', '"aa', 1)
    assert rejects(longer) == "may not be more than 10240 bytes"
    # every known release's validation calls field.TooLong: "may not be more than" (the real 1.37.2 server says it)
    assert all(rejects(longer, kubernetes_version=v) == "may not be more than 10240 bytes" for v in versions.known())
    compile_selector(longer, stored=True)


def test_cost_limit_is_estimated_for_new_expressions_only():
    expensive = "device.attributes.all(d, device.attributes[d].all(k, device.attributes.all(e, device.attributes[e].all(j, true))))"
    assert rejects(expensive) == "too complex, exceeds cost limit"
    selector = compile_selector(expensive, stored=True)
    assert selector.estimated_cost > 1_000_000


def test_new_expressions_use_the_previous_minor_versions_libraries():
    sort = f'[3, 1].sort()[0] == 1 && {GPU}.type == "gpu"'
    assert "undeclared reference to 'sort'" in rejects(sort, kubernetes_version="1.34")
    compile_selector(sort, kubernetes_version="1.34", stored=True)
    compile_selector(sort, kubernetes_version="1.35")


def test_gated_fields_and_functions():
    multi = "device.allowMultipleAllocations"
    assert "undefined field 'allowMultipleAllocations'" in rejects(multi, kubernetes_version="1.34")
    compile_selector(multi, kubernetes_version="1.34", feature_gates={"DRAConsumableCapacity": True})
    compile_selector(multi, kubernetes_version="1.36")  # beta, on by default
    compile_selector(multi, kubernetes_version="1.34", stored=True)  # stored expressions ignore gates
    includes = f'{GPU}.tags.includes("a")'
    assert "undeclared reference to 'includes'" in rejects(includes, kubernetes_version="1.36")
    compile_selector(includes, kubernetes_version="1.36", feature_gates={"DRAListTypeAttributes": True})
    compile_selector(includes, kubernetes_version="1.36", stored=True)
    assert "undeclared reference to 'includes'" in rejects(includes, kubernetes_version="1.35", stored=True)


def test_comprehensions_over_attribute_values_need_list_type_attributes():
    expression = f"{GPU}.ids.exists(i, i == 1)"
    assert "cannot be the range of a comprehension" in rejects(expression, kubernetes_version="1.35", stored=True)
    compile_selector(expression, kubernetes_version="1.37", stored=True)


def test_duration_of_an_int_is_gone_from_1_37():
    # cel-go v0.29 (Kubernetes 1.37) dropped the int64_to_duration overload; earlier minors have it
    before = rejects("duration(1) == 1", kubernetes_version="1.36")
    assert "found no matching overload for '_==_' applied to '(duration, int)'" in before
    for stored in (False, True):
        message = rejects("duration(1) == 1", kubernetes_version="1.37", stored=stored)
        assert "<input>:1:9: found no matching overload for 'duration' applied to '(int)'" in message
    compile_selector('duration(1) < duration("1s")', kubernetes_version="1.36")
    compile_selector('duration("1ns") < duration("1s")', kubernetes_version="1.37")


def test_literal_validators():
    assert "invalid matches argument" in rejects('device.driver.matches("[")')
    assert rejects('matches(device.driver, "(")') == "program instantiation failed: error parsing regexp: missing closing ): `(`"
    assert "expected type 'int' but found 'string'" in rejects('[1, "a"].size() == 2')
    compile_selector('"%s-%d".format(["a", 1]) == "a-1"')
    assert "too many arguments supplied to string.format (expected 1, got 2)" in rejects('"%d".format([1, 2]) == ""')
    assert "invalid duration argument" in rejects('duration("1x") < duration("1s")')


def test_bad_arguments():
    with pytest.raises(ValueError, match="drawb models"):
        compile_selector("true", kubernetes_version="1.30")
    with pytest.raises(ValueError, match="unknown feature gate"):
        compile_selector("true", feature_gates={"DRANope": True})


def test_nesting_limits():
    compile_selector("(" * 30 + "true" + ")" * 30)
    deep = rejects("(" * 260 + "true" + ")" * 260)
    assert deep == "compilation failed: ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
    with pytest.raises(CELCompileError) as info:
        compile_selector("(" * 40 + "true" + ")" * 40)
    assert info.value.reason == "unsupported"  # accepted by the API server; beyond drawb's checker
