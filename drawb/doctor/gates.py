"""One check per DRA feature gate: the probe's answer, what it cannot prove, and the fix."""

from __future__ import annotations

from drawb.cluster.protocol import Cluster
from drawb.doctor.probes import DEVICE_STATUS_GATE, OFF, ON, PROBES, GateProbe, Outcome, run_probe
from drawb.doctor.report import PASS, WARN, Report
from drawb.versions import Rules


def _metric(metric: dict[str, bool] | None, gate: str) -> str:
    if not metric or gate not in metric:
        return ""
    return f"; kubernetes_feature_enabled{{name=\"{gate}\"}} = {int(metric[gate])}"


_STAGE_NAMES = {"alpha": "alpha", "beta": "beta", "ga": "GA", "deprecated": "deprecated"}


def _expected(gate: str, rules: Rules | None) -> str:
    if rules is None or gate not in rules.gates:
        return ""
    spec = rules.gates[gate]
    return f"{_STAGE_NAMES[spec.stage]} in {rules.minor}, {'on' if spec.default else 'off'} by default"


def _turn_on(gate: str, components: tuple[str, ...], rules: Rules | None) -> str:
    where = ", ".join(("kube-apiserver",) + components)
    alpha = rules is not None and gate in rules.gates and rules.gates[gate].stage == "alpha"
    return (f"set --feature-gates={gate}=true on {where}"
            + (" (alpha: for test clusters; it changes how the scheduler allocates)" if alpha else ""))


LIVE_HINT = "run `{prog} doctor --live` (creates a labelled claim and pod, then removes them)"


def gate_check(report: Report, probe: GateProbe, outcome: Outcome, rules: Rules | None,
               metric: dict[str, bool] | None) -> None:
    """Record what one gate probe found."""
    expected = _expected(probe.gate, rules)
    evidence = f"{outcome.evidence}{_metric(metric, probe.gate)}" + (f" ({expected})" if expected else "")
    if outcome.state == ON:
        rest = (f"this proves the API server only; {probe.others} must have it too: check their --feature-gates "
                f"or /metrics, or {LIVE_HINT}") if probe.others else ""
        report.add(probe.gate, PASS, f"on: {evidence}", rest)
    elif outcome.state == OFF:
        report.add(probe.gate, WARN, f"off: {evidence}", _turn_on(probe.gate, probe.components, rules))
    else:
        report.add(probe.gate, WARN, evidence,
                   "allow drawb to dry-run create the probe object (RBAC `create` on it), or check the "
                   "API server's --feature-gates")


def device_status_check(report: Report, binding: Outcome | None, rules: Rules | None,
                        metric: dict[str, bool] | None) -> None:
    """DRAResourceClaimDeviceStatus: implied by the binding-conditions probe, else read from the metric."""
    gate = DEVICE_STATUS_GATE
    expected = f" ({_expected(gate, rules)})" if rules is not None else ""
    unprovable = ("no dry-run create can show it (it guards only ResourceClaim status.devices, and a create "
                  "discards the status)")
    if binding is not None and binding.state == ON:
        report.add(gate, PASS, "on in the API server: implied, since the API server keeps binding-condition "
                   f"fields only while it and DRADeviceBindingConditions are both on{_metric(metric, gate)}{expected}")
    elif metric and gate in metric:
        state = "on" if metric[gate] else "off"
        report.add(gate, PASS if metric[gate] else WARN,
                   f"{state} in the API server by its own metric{_metric(metric, gate)}; {unprovable}{expected}",
                   "" if metric[gate] else _turn_on(gate, (), rules))
    else:
        report.add(gate, WARN, f"unknown: {unprovable}, and the API server's metrics are not readable{expected}",
                   f"read `kubectl get --raw /metrics | grep 'kubernetes_feature_enabled{{name=\"{gate}\"'` "
                   "with a user allowed to, or check kube-apiserver's --feature-gates")


def check_gates(report: Report, cluster: Cluster, namespace: str, rules: Rules | None,
                metric: dict[str, bool] | None) -> dict[str, Outcome]:
    """Probe every DRA gate; the outcomes by gate name."""
    outcomes = {}
    for probe in PROBES:
        if rules is not None and probe.gate not in rules.gates:
            continue  # the minor lacks the gate, and its API server the probe's fields
        outcomes[probe.gate] = run_probe(cluster, probe, namespace)
        gate_check(report, probe, outcomes[probe.gate], rules, metric)
    device_status_check(report, outcomes.get("DRADeviceBindingConditions"), rules, metric)
    for gate in sorted(set(rules.gates if rules is not None else ()) - set(outcomes) - {DEVICE_STATUS_GATE}):
        metric_check(report, gate, rules, metric)
    return outcomes


def metric_check(report: Report, gate: str, rules: Rules, metric: dict[str, bool] | None) -> None:
    """A gate of the minor that no dry-run probe shows: its value by the API server's metric, when readable."""
    if not metric or gate not in metric:
        return
    spec = rules.gates[gate]
    others = [c for c in spec.components if c != "kube-apiserver"]
    evidence = (f"{'on' if metric[gate] else 'off'} in the API server by its own metric{_metric(metric, gate)}; no "
                f"dry-run create shows it ({_expected(gate, rules)})")
    if metric[gate]:
        their = "its" if len(others) == 1 else "their"
        report.add(gate, PASS, evidence,
                   f"{', '.join(others)} must have it too: check {their} --feature-gates or /metrics" if others else "")
    else:
        alpha = " (alpha: for test clusters)" if spec.stage == "alpha" else ""
        report.add(gate, WARN, evidence,
                   f"set --feature-gates={gate}=true on {', '.join(('kube-apiserver', *others))}{alpha}")
