"""The selector builder widget, driven through its traits in a real IPython shell on the simulated cluster."""

from __future__ import annotations

import pytest
from traitlets import TraitError

from drawb.cel import select
from drawb.cli import main as cli_main
from drawb.notebook.widgets import MAX_ROWS, SelectorBuilder
from drawb.session import Session

PROFILE = "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
H200 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'"
MIG_CLASS = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"


@pytest.fixture(scope="module")
def devices():
    return Session().devices()


@pytest.fixture
def builder(shell) -> SelectorBuilder:
    widget = shell.run("%dra builder")
    assert isinstance(widget, SelectorBuilder)
    return widget


def test_starts_empty_and_asks_for_a_selector(builder):
    assert (builder.expression, builder.match_count, builder.error_count, builder.compile_error) == ("", 0, 0, None)
    assert builder.result is None
    assert "Type a CEL selector" in builder._status.value


@pytest.mark.parametrize(
    "expression",
    [
        "device.driver == 'gpu.nvidia.com'",
        "device.attributes['gpu.nvidia.com'].type == 'mig'",
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
        "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H')",
    ],
)
def test_match_count_is_what_select_counts(builder, devices, expression):
    builder.expression = expression
    expected = select(devices, expression)
    assert builder.match_count == expected.match_count > 0
    assert builder.error_count == expected.error_count
    assert builder.compile_error is None
    assert f"<b>{expected.match_count}</b> of {len(devices)} devices match" in builder._status.value
    assert builder._matches.value.count("<tr>") == expected.match_count  # body rows (the header row has a style)
    assert "NA&gt;" not in builder._matches.value
    assert builder._compile_box.layout.display == "none"


def test_the_match_table_shows_node_device_type_product_memory_profile(builder):
    builder.expression = "device.attributes['gpu.nvidia.com'].profile == '7g.80gb'"
    table = builder._matches.value
    for header in ("node", "device", "type", "product", "memory", "profile"):
        assert f"<th>{header}</th>" in table
    for cell in ("dgx-h100-02", "gpu-6-mig-7g80gb-0-0", "mig", "NVIDIA H100 80GB HBM3", "81152Mi", "7g.80gb"):
        assert f"<td>{cell}</td>" in table


def test_compile_error_shows_the_caret_and_no_matches(builder):
    builder.expression = "device.driver == 'gpu.nvidia.com'"
    assert builder.match_count == 38
    builder.expression = "device.driver =="
    assert builder.compile_error.startswith("compilation failed: ERROR: <input>:1:17: Syntax error")
    assert builder.compile_error.splitlines()[-1] == " | " + "." * 16 + "^"
    assert (builder.match_count, builder.error_count) == (0, 0)
    assert builder._compile_box.layout.display is None
    assert "<pre" in builder._compile_box.value and "^</pre>" in builder._compile_box.value
    assert builder._matches.value == builder._errors.value == ""
    assert "CELCompileError" in builder._status.value


def test_type_errors_are_compile_errors_too(builder):
    builder.expression = "device.driver > 3"
    assert "found no matching overload for '_>_' applied to '(string, int)'" in builder.compile_error
    assert builder.match_count == 0


def test_runtime_errors_are_listed_with_the_schedulers_message(builder, devices):
    builder.expression = PROFILE
    expected = select(devices, PROFILE)
    assert (builder.match_count, builder.error_count) == (9, expected.error_count) == (9, 32)
    assert builder.compile_error is None
    assert "no such key: profile" in builder._errors.value
    assert "<td>hgx-h200-03</td>" in builder._errors.value
    assert "<b>32</b> devices error" in builder._status.value
    assert set(builder.result.errors["error"].str.slice(0, 20)) == {"no such key: profile"}


def test_the_class_runs_first_and_narrows(builder):
    builder.expression = "true"
    assert builder.match_count == 46
    builder.device_class = "mig.nvidia.com"
    assert builder.match_count == 14 and builder._class_menu.value == "mig.nvidia.com"
    builder.expression = PROFILE
    assert (builder.match_count, builder.error_count) == (9, 0)  # the class keeps GPUs without a profile out
    builder.device_class = "gpu.nvidia.com"
    assert (builder.match_count, builder.error_count) == (0, 24)
    assert "DeviceClass gpu.nvidia.com first" in builder._status.value


def test_the_node_filter_narrows(builder):
    builder.expression = "true"
    builder.node = "dgx-h100-02"
    assert builder.match_count == 20 and builder.result.total == 20
    builder.node = ""
    assert builder.match_count == 46


def test_the_controls_and_the_traits_are_twins(builder):
    builder.text.value = MIG_CLASS
    assert builder.expression == MIG_CLASS and builder.match_count == 14
    builder._class_menu.value = "gpu.nvidia.com"
    assert builder.device_class == "gpu.nvidia.com" and builder.match_count == 0
    builder._node_menu.value = "hgx-h200-03"
    assert builder.node == "hgx-h200-03"
    builder.expression = "true"
    assert builder.text.value == "true" and builder.match_count == 8


def test_unknown_class_or_node_is_refused(builder):
    with pytest.raises(TraitError, match="no DeviceClass 'nope'; known: .*mig.nvidia.com"):
        builder.device_class = "nope"
    with pytest.raises(TraitError, match="no device on node 'nope'"):
        builder.node = "nope"


def test_refresh_rereads_the_cluster(shell):
    builder = shell.run("%dra builder")
    cluster = builder._session.cluster
    h200 = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "h200.example.com"},
        "spec": {"selectors": [{"cel": {"expression": H200}}]},
    }
    cluster.apply([h200])
    with pytest.raises(TraitError):
        builder.device_class = "h200.example.com"
    builder.refresh()
    builder.device_class, builder.expression = "h200.example.com", "true"
    assert builder.match_count == 8


def test_magic_options_and_errors(shell, capsys):
    builder = shell.run("%dra builder --class mig.nvidia.com --node dgx-h100-02")
    assert (builder.device_class, builder.node) == ("mig.nvidia.com", "dgx-h100-02")
    err = shell.fails("%dra builder --class nope")
    assert err.startswith("UsageError: no DeviceClass 'nope'") and "Hint: `%dra classes`" in err


def test_the_command_line_says_it_is_a_notebook_widget(capsys):
    assert cli_main(["builder"]) == 2
    assert "UsageError: builder is a notebook widget" in capsys.readouterr().err


def test_tables_show_the_first_rows_and_the_counts_cover_everything():
    session = Session(scenario="synthetic:40x10")
    builder = SelectorBuilder(session, expression="true")
    total = len(session.devices())
    assert builder.match_count == total > MAX_ROWS
    assert builder._matches.value.count("<tr>") == MAX_ROWS
    assert f"First {MAX_ROWS} of {total} shown." in builder._matches.value
    builder.expression = PROFILE
    assert builder.error_count > MAX_ROWS
    assert f"First {MAX_ROWS} of {builder.error_count} shown." in builder._errors.value
