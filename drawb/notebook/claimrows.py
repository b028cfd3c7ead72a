"""The rows of the claim builder: one condition, one constraint. Each row edits one part of the model and
calls back; it never evaluates anything itself."""

from __future__ import annotations

import re
from collections.abc import Callable

import ipywidgets as widgets

from drawb.build import CONDITION_KINDS, OPERATORS, BuildError, Condition, Constraint
from drawb.build.conditions import STRING_OPERATORS

UNITS = ("Gi", "Mi", "Ti", "G", "M")
NARROW = widgets.Layout(width="auto")


def kind_options() -> list[tuple[str, str]]:
    """(label, kind) of every condition kind, for a dropdown."""
    return [(k.label, name) for name, k in CONDITION_KINDS.items()]


def ops_of(kind: str) -> list[str]:
    """The comparisons a condition of ``kind`` offers."""
    spec = CONDITION_KINDS[kind]
    return list(STRING_OPERATORS) if spec.value_type == "string" else list(OPERATORS) if spec.field else []


def split_quantity(text: str) -> tuple[str, str]:
    """``40Gi`` -> (``40``, ``Gi``); a unit not in UNITS stays in the number."""
    m = re.fullmatch(r"([0-9.]+)(Gi|Mi|Ti|G|M)", text)
    return (m[1], m[2]) if m else (text, "")


class ConditionRow(widgets.HBox):
    """kind, comparison, value (a dropdown of the values present, a number and unit, or text) and remove."""

    def __init__(self, condition: Condition, present: list[str], *, on_change: Callable[[Condition | None, str | None], None],
                 on_kind: Callable[[str], None], on_remove: Callable[[], None]):
        self.condition = condition
        self._on_change = on_change
        kind = condition.kind
        self.kind = widgets.Dropdown(options=kind_options(), value=kind, layout=NARROW)
        ops = ops_of(kind)
        self.op = widgets.Dropdown(options=ops or [""], value=condition.op if ops else "", layout=NARROW,
                                   disabled=not ops)
        self.unit = None
        value_type = CONDITION_KINDS[kind].value_type
        if value_type == "string":
            options = sorted(set(present) | {condition.value})
            self.value = widgets.Dropdown(options=options, value=condition.value, layout=widgets.Layout(width="280px"))
        elif value_type == "quantity":
            number, unit = split_quantity(condition.value)
            self.value = widgets.Text(value=number, continuous_update=True, layout=widgets.Layout(width="90px"))
            self.unit = widgets.Dropdown(options=list(UNITS) + ([""] if not unit else []), value=unit, layout=NARROW)
        elif value_type == "version":
            self.value = widgets.Combobox(value=condition.value, options=sorted(set(present)), ensure_option=False,
                                          continuous_update=True, layout=widgets.Layout(width="160px"))
        else:
            self.value = widgets.Text(value=condition.value, continuous_update=True, layout=widgets.Layout(width="60%"),
                                      placeholder="device.attributes['gpu.nvidia.com'].type == 'gpu'")
        self.remove = widgets.Button(icon="trash", tooltip="remove this condition", layout=NARROW)
        self.problem = widgets.HTML()
        parts = [self.kind, self.op, self.value] + ([self.unit] if self.unit else []) + [self.remove, self.problem]
        super().__init__(parts)
        self.add_class("drawb-build-condition")
        for part, name in ((self.kind, "kind"), (self.op, "op"), (self.value, "value"), (self.remove, "remove-condition"),
                           (self.problem, "condition-problem")):
            part.add_class(f"drawb-build-{name}" if name.startswith("remove") else f"drawb-build-condition-{name}")
        self.kind.observe(lambda change: on_kind(change["new"]), names="value")
        for part in (self.op, self.value, self.unit):
            if part is not None:
                part.observe(lambda _change: self._changed(), names="value")
        if self.unit is not None:
            self.unit.add_class("drawb-build-condition-unit")
        self.remove.on_click(lambda _button: on_remove())

    def show(self, condition: Condition) -> None:
        """Show ``condition`` (same kind) in the controls without calling back: the model already has it."""
        self._silent = True
        try:
            self.condition = condition
            if isinstance(self.value, widgets.Dropdown) and condition.value not in self.value.options:
                self.value.options = sorted(set(self.value.options) | {condition.value})
            if self.unit is not None:
                number, unit = split_quantity(condition.value)
                if unit not in self.unit.options:
                    self.unit.options = [*self.unit.options, unit]
                self.value.value, self.unit.value = number, unit
            else:
                self.value.value = condition.value
            if not self.op.disabled:
                self.op.value = condition.op
            self.problem.value = ""
        finally:
            self._silent = False

    _silent = False

    def text(self) -> str:
        """The value as typed (the number and unit together for memory)."""
        return f"{self.value.value}{self.unit.value}" if self.unit is not None else str(self.value.value)

    def _changed(self) -> None:
        if self._silent:
            return
        try:
            condition = Condition(self.condition.kind, self.text(), self.op.value)
        except BuildError as exc:
            self.problem.value = f'<span style="color: #b00020">{exc}</span>'
            self._on_change(None, str(exc))
            return
        self.problem.value = ""
        self.condition = condition
        self._on_change(condition, None)


class ConstraintRow(widgets.HBox):
    """matchAttribute or distinctAttribute, the attribute, the requests it covers (empty: all), remove."""

    def __init__(self, constraint: Constraint, attributes: list[str], *, on_change: Callable[[Constraint], None],
                 on_remove: Callable[[], None]):
        self.kind = widgets.Dropdown(options=["matchAttribute", "distinctAttribute"], value=constraint.kind, layout=NARROW)
        self.attribute = widgets.Dropdown(options=sorted(set(attributes) | {constraint.attribute}),
                                          value=constraint.attribute, layout=widgets.Layout(width="320px"))
        self.requests = widgets.Text(value=", ".join(constraint.requests), placeholder="every request",
                                     description="requests", continuous_update=False)
        self.remove = widgets.Button(icon="trash", tooltip="remove this constraint", layout=NARROW)
        super().__init__([self.kind, self.attribute, self.requests, self.remove])
        self.add_class("drawb-build-constraint")
        for part, name in ((self.kind, "constraint-kind"), (self.attribute, "constraint-attribute"),
                           (self.requests, "constraint-requests"), (self.remove, "remove-constraint")):
            part.add_class(f"drawb-build-{name}")

        def changed(_change) -> None:
            names = [n.strip() for n in self.requests.value.split(",") if n.strip()]
            on_change(Constraint(self.kind.value, self.attribute.value, names))

        for part in (self.kind, self.attribute, self.requests):
            part.observe(changed, names="value")
        self.remove.on_click(lambda _button: on_remove())
