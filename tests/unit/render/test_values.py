"""Values are checked before rendering, and refused with a message that names the problem."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drawb.render import ParameterError, RenderError, render


def refused(name, values, compile_selector, **kwargs) -> str:
    with pytest.raises(ParameterError) as exc:
        render(name, values, compile_selector=compile_selector, **kwargs)
    return str(exc.value)


def test_missing_parameter_is_named_with_the_valid_ones(user_dir, compile_selector):
    msg = refused("note", {}, compile_selector, template_dirs=[user_dir])
    assert "needs a value for 'claim_name'" in msg
    assert "claim_name, note, product" in msg


def test_unknown_parameter_is_named_with_a_suggestion_and_the_valid_ones(compile_selector):
    msg = refused("multi-gpu-one-node", {"cuont": 4}, compile_selector)
    assert "unknown parameter 'cuont'" in msg and "Did you mean 'count'?" in msg
    assert "template_name, pod_name, count" in msg


@pytest.mark.parametrize("bad", ["My-GPU", "gpu_claim", "-gpu", "a" * 254, "gpu\nkind: Secret", ""])
def test_invalid_names_are_refused(bad, compile_selector):
    msg = refused("single-gpu", {"template_name": bad}, compile_selector)
    assert "'template_name'" in msg
    assert any(reason in msg for reason in ("not a DNS subdomain", "characters long", "control character"))


@pytest.mark.parametrize("bad", ["40GB", "forty", "40 Gi", "4e", "1.5.0Gi"])
def test_a_quantity_like_40GB_is_refused(bad, compile_selector):
    msg = refused("gpu-by-memory", {"min_memory": bad}, compile_selector)
    assert "'min_memory'" in msg and "not a Kubernetes quantity" in msg and repr(bad) in msg


def test_a_quantity_given_as_a_number_is_accepted(compile_selector):
    r = render("mps", {"pinned_memory_limit": 1073741824}, compile_selector=compile_selector)
    mps = r.documents[0]["spec"]["spec"]["devices"]["config"][0]["opaque"]["parameters"]["sharing"]["mpsConfig"]
    assert mps["defaultPinnedDeviceMemoryLimit"] == "1073741824"


def test_a_selector_that_does_not_compile_is_refused_with_the_compiler_message(compile_selector):
    msg = refused("extended-resource", {"selector": "device.attributes['gpu.nvidia.com'].type = 'gpu'"},
                  compile_selector)
    assert "'selector'" in msg and "does not compile" in msg


def test_a_selector_comparing_a_quantity_with_a_string_is_refused(compile_selector):
    msg = refused("extended-resource", {"selector": "device.capacity['gpu.nvidia.com'].memory >= '40Gi'"},
                  compile_selector)
    assert "'selector'" in msg and "does not compile" in msg


@pytest.mark.parametrize("bad", ["{{ 7 * 7 }}", "{% include 'x' %}", "{# c #}", "H100{{x}}"])
def test_values_carrying_jinja_syntax_are_refused(bad, user_dir, compile_selector):
    msg = refused("note", {"claim_name": "c", "note": bad}, compile_selector, template_dirs=[user_dir])
    assert "'note'" in msg and "Jinja syntax" in msg


@pytest.mark.parametrize("bad", ["a: b", "x\nkind: Secret", "[1, 2]", "- item", "text # comment", "&anchor",
                                 "---", "key:"])
def test_values_carrying_yaml_syntax_are_refused(bad, user_dir, compile_selector):
    msg = refused("note", {"claim_name": "c", "note": bad}, compile_selector, template_dirs=[user_dir])
    assert "'note'" in msg and ("YAML" in msg or "control character" in msg)


def test_pattern_restricted_strings_name_the_pattern(compile_selector):
    msg = refused("mig-profile", {"profile": "1g-10gb"}, compile_selector)
    assert "'profile'" in msg and "pattern" in msg


@pytest.mark.parametrize(
    ("values", "fragment"),
    [
        ({"count": 0}, "below the minimum 1"),
        ({"count": 9}, "above the maximum 7"),
        ({"count": "two"}, "not an integer"),
        ({"count": True}, "not an integer"),
        ({"same_gpu": "maybe"}, "not a boolean"),
        ({"image": "Not An Image"}, "not a container image"),
    ],
)
def test_typed_values_are_checked(values, fragment, compile_selector):
    msg = refused("mig-profile", values, compile_selector)
    assert fragment in msg and repr(next(iter(values))) in msg


def test_text_forms_of_typed_values_are_converted(compile_selector):
    r = render("mig-profile", {"count": "3", "same_gpu": "false"}, compile_selector=compile_selector)
    spec = r.documents[0]["spec"]["spec"]["devices"]
    assert spec["requests"][0]["exactly"]["count"] == 3
    assert "constraints" not in spec


def test_enum_values_are_listed(compile_selector):
    msg = refused("time-slicing", {"interval": "VeryLong"}, compile_selector)
    assert "Default, Short, Medium, Long" in msg


def test_list_values_accept_comma_separated_text(compile_selector):
    r = render("first-available", {"products": "H200, L4"}, compile_selector=compile_selector)
    subs = r.documents[0]["spec"]["spec"]["devices"]["requests"][0]["firstAvailable"]
    assert [s["name"] for s in subs] == ["h200", "l4", "any"]


def test_namespace_is_checked_and_set_on_namespaced_objects_only(compile_selector):
    r = render("extended-resource", namespace="gpu-test", compile_selector=compile_selector)
    assert "namespace" not in r.documents[0]["metadata"]  # DeviceClass is cluster-scoped
    assert r.documents[1]["metadata"]["namespace"] == "gpu-test"
    msg = refused("single-gpu", {}, compile_selector, namespace="GPU Test")
    assert "'namespace'" in msg


_free_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(note=_free_text, product=_free_text)
def test_no_value_can_change_the_structure_of_the_output(note, product, user_dir, compile_selector):
    """Any text is either refused by name, or lands exactly where the template put it and nowhere else."""
    try:
        r = render("note", {"claim_name": "c", "note": note, "product": product}, template_dirs=[user_dir],
                   compile_selector=compile_selector)
    except ParameterError as e:
        assert e.parameter in ("note", "product")
        return
    [doc] = r.documents
    assert set(doc) == {"apiVersion", "kind", "metadata", "spec"}
    assert doc["metadata"] == {"name": "c", "annotations": {"drawb.example/note": note}}
    [request] = doc["spec"]["devices"]["requests"]
    assert set(request["exactly"]) == {"deviceClassName", "selectors"}
    assert yaml.safe_load_all(r.yaml) is not None


def test_an_unknown_kubernetes_version_is_named(compile_selector):
    with pytest.raises(RenderError, match="not a Kubernetes version: 'latest'"):
        render("single-gpu", kubernetes_version="latest", compile_selector=compile_selector)


_cel_ish = st.one_of(
    _free_text,
    st.builds(lambda s: f"device.driver == {s!r}", _free_text),
    st.builds(lambda s: f"true\n  {s}: x", _free_text),
)


@settings(max_examples=200, deadline=None)
@given(selector=_cel_ish)
def test_no_selector_value_can_change_the_structure_of_the_output(selector):
    """A CEL parameter is either refused (it does not compile) or lands verbatim as the one expression."""
    from drawb.render import default_selector_compiler

    try:
        r = render("extended-resource", {"selector": selector}, compile_selector=default_selector_compiler)
    except ParameterError as e:
        assert e.parameter == "selector"
        return
    device_class, pod = r.documents
    assert device_class["spec"]["selectors"] == [{"cel": {"expression": selector}}]
    assert set(device_class["spec"]) == {"extendedResourceName", "selectors"}
    assert set(pod["spec"]) == {"restartPolicy", "containers"}
