"""The claim builder widget (``%dra build``): build a whole ResourceClaimTemplate and Pod by pointing and clicking.

The model is ``drawb.build.ClaimSpec``; each change re-evaluates it with ``drawb.build.outcome.evaluate`` (the
CEL preview of each request, drawb.render's validation, the predicted allocation) and shows the result.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
from traitlets import Bool, Int, Unicode

from drawb.build import (
    DEFAULT_CLASS,
    INTERVALS,
    BuildError,
    Choice,
    ClaimSpec,
    Condition,
    Constraint,
    Request,
    Sharing,
    spec_from_claim_spec,
    spec_from_documents,
)
from drawb.build.outcome import Outcome, evaluate
from drawb.errors import DrawbError
from drawb.notebook.claimrows import NARROW, ConditionRow, ConstraintRow
from drawb.notebook.selection_html import compile_error_html, errors_html, matches_html, status_html
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

DEBOUNCE_S = 0.3  # typing pauses this long before the preview updates
SHOWN_ROWS = 20  # devices in each table of a request (the counts cover every device)
DEFAULT_VALUES = {"product": "productName", "mig_profile": "profile", "architecture": "architecture",
                  "compute_capability": "cudaComputeCapability", "driver_version": "driverVersion"}


class Debouncer:
    """Calls ``fn`` once typing pauses for ``delay`` seconds (on the kernel's event loop); at once without one."""

    def __init__(self, fn: Callable[[], None], delay: float):
        self.fn, self.delay, self._handle = fn, delay, None

    def __call__(self) -> None:
        try:
            loop = asyncio.get_running_loop() if self.delay > 0 else None
        except RuntimeError:
            loop = None
        if loop is None:
            self.fn()
            return
        if self._handle is not None:
            self._handle.cancel()
        self._handle = loop.call_later(self.delay, self.fn)


def _html_pre(text: str, cls: str = "") -> str:
    return f'<pre class="{cls}" style="margin: 0; white-space: pre-wrap">{html.escape(text)}</pre>'


class ClaimBuilder(widgets.VBox):
    """Build a ResourceClaimTemplate and Pod from the cluster's DeviceClasses and the devices really present.

    Programmatic twins of every control: ``add_request``, ``remove_request``, ``add_condition``,
    ``set_condition``, ``remove_condition``, ``set_count`` (a number or ``"All"``), ``add_alternative``,
    ``remove_alternative``, ``add_constraint``, ``remove_constraint``, ``set_sharing``; the traits
    ``template_name``, ``pod_name``, ``containers``, ``namespace``; ``export(path)``, ``dry_run()``,
    ``apply()``, ``check()``, ``refresh()``. Start from an existing object with ``from_claim``,
    ``from_claim_template``, ``from_template`` (bundled) or ``from_documents``.

    DOM hooks (CSS classes) for browser tests: ``drawb-build`` (the whole widget); ``drawb-build-template-name``,
    ``-pod-name``, ``-containers``, ``-add-request``; per request ``drawb-build-request``, ``-request-name``,
    ``-add-alternative``, ``-remove-request``; per alternative ``drawb-build-choice``, ``-choice-name``,
    ``-class``, ``-count``, ``-all``, ``-add-condition``, ``-remove-alternative``, ``-selector`` (the generated
    CEL), ``-compile-error``, ``-status`` (match count), ``-matches``, ``-errors``; per condition row
    ``drawb-build-condition``, ``-condition-kind``, ``-condition-op``, ``-condition-value``, ``-condition-unit``,
    ``-condition-problem``, ``-remove-condition``; constraints ``drawb-build-add-constraint``,
    ``-constraint``, ``-constraint-kind``, ``-constraint-attribute``, ``-constraint-requests``,
    ``-remove-constraint``; sharing ``drawb-build-sharing-strategy``, ``-sharing-interval``,
    ``-sharing-threads``, ``-sharing-pinned``; results ``drawb-build-allocation``, ``-issues``, ``-yaml``;
    actions ``drawb-build-export-path``, ``-export``, ``-dry-run``, ``-apply``, ``-check``, ``-result``.
    """

    template_name = Unicode("built-claim", help="name of the ResourceClaimTemplate")
    pod_name = Unicode("built-claim-pod", help="name of the Pod")
    containers = Int(1, help="containers of the pod, all sharing the claim")
    namespace = Unicode("", help="namespace of the manifests ('' for the session's)")
    match_count = Int(0, read_only=True, help="devices the first request (its first alternative) matches")
    predicted_node = Unicode(None, allow_none=True, read_only=True, help="the node the simulated scheduler would pick")
    valid = Bool(False, read_only=True, help="whether the manifests can be exported, dry-run and applied")
    yaml = Unicode("", read_only=True, help="the ResourceClaimTemplate and Pod as YAML")

    def __init__(self, session: Session, spec: ClaimSpec | None = None, *, debounce: float = DEBOUNCE_S, **kwargs):
        self._session = session
        self.spec = spec or ClaimSpec()
        self._outcome: Outcome | None = None
        self._problems: dict[int, str] = {}  # id(row) -> the value typed there that is not valid
        self._later = Debouncer(self.update, debounce)
        self._frame: pd.DataFrame | None = None
        self._classes: list[dict] = []
        self._state: Any = None
        self._present: dict[str, list[str]] = {}
        self._rows: dict[tuple[int, int], ConditionRow] = {}
        self._build_controls()
        super().__init__(children=self._layout(), **kwargs)
        self.add_class("drawb-build")
        self.template_name, self.pod_name, self.containers = self.spec.template_name, self.spec.pod_name, self.spec.containers
        self._template_box.value, self._pod_box.value = self.template_name, self.pod_name
        self._containers_box.value = self.containers
        self.observe(self._on_names, names=["template_name", "pod_name", "containers", "namespace"])
        self.refresh()

    # --- starting points ------------------------------------------------------------------------

    @classmethod
    def from_documents(cls, session: Session, documents: list[dict], **kwargs) -> ClaimBuilder:
        """A builder holding the claim of ``documents`` (one ResourceClaimTemplate or ResourceClaim, a Pod)."""
        return cls(session, spec_from_documents(documents), **kwargs)

    @classmethod
    def from_template(cls, session: Session, name: str, values: dict | None = None, **kwargs) -> ClaimBuilder:
        """A builder holding bundled template ``name`` rendered with ``values``."""
        from drawb import render as rendering

        dirs = [session.template_dir] if session.template_dir else []
        rendered = rendering.render(name, values or {}, kubernetes_version=session.rules_version, template_dirs=dirs)
        return cls.from_documents(session, rendered.documents, **kwargs)

    @classmethod
    def from_claim(cls, session: Session, name: str, namespace: str | None = None, **kwargs) -> ClaimBuilder:
        """A builder holding a copy of the existing ResourceClaim ``name`` (the claim itself is never changed)."""
        claim = _get(session, "ResourceClaim", name, namespace)
        return cls(session, spec_from_claim_spec(claim.get("spec") or {}, template_name=name, pod_name=f"{name}-pod"),
                   **kwargs)

    @classmethod
    def from_claim_template(cls, session: Session, name: str, namespace: str | None = None, **kwargs) -> ClaimBuilder:
        """A builder holding a copy of the cluster's ResourceClaimTemplate ``name``."""
        return cls.from_documents(session, [_get(session, "ResourceClaimTemplate", name, namespace)], **kwargs)

    # --- the model, programmatically ----------------------------------------------------------------

    @property
    def outcome(self) -> Outcome | None:
        """The last evaluation: documents, issues, per-request matches, predicted allocation."""
        return self._outcome

    def _choice(self, request: str | None, alternative: str | None) -> Choice:
        req = self.spec.request(request) if request else self.spec.requests[0]
        if alternative is None:
            return req.choices[0]
        for choice in req.choices:
            if choice.name == alternative:
                return choice
        raise BuildError(f"request {req.name!r} has no alternative {alternative!r}",
                         hint=f"alternatives: {', '.join(c.name for c in req.choices)}")

    def add_request(self, name: str | None = None, device_class: str = DEFAULT_CLASS) -> str:
        """Add a request asking for one device of ``device_class``; returns its name."""
        taken = {r.name for r in self.spec.requests}
        name = name or next(f"gpu-{i}" for i in range(1, 100) if f"gpu-{i}" not in taken)
        self.spec.requests.append(Request(name, [Choice(name, device_class)]))
        self._rebuild()
        return name

    def remove_request(self, name: str) -> None:
        """Remove request ``name``."""
        self.spec.requests.remove(self.spec.request(name))
        self._rebuild()

    def add_condition(self, kind: str, value: str | None = None, op: str = "", *, request: str | None = None,
                      alternative: str | None = None) -> int:
        """Add a condition (``value`` defaults to the first value present); returns its index."""
        choice = self._choice(request, alternative)
        choice.conditions.append(Condition(kind, value if value is not None else self._default_value(kind), op))
        self._rebuild()
        return len(choice.conditions) - 1

    def set_condition(self, index: int, value: str | None = None, op: str | None = None, *, kind: str | None = None,
                      request: str | None = None, alternative: str | None = None) -> None:
        """Change condition ``index``: its value, comparison or kind (the programmatic twin of typing)."""
        choice = self._choice(request, alternative)
        old = choice.conditions[index]
        kind = kind or old.kind
        if value is None:
            value = old.value if kind == old.kind else self._default_value(kind)
        new = Condition(kind, value, (op if op is not None else old.op) if kind == old.kind else (op or ""))
        choice.conditions[index] = new
        row = self._rows.get((id(choice), index))
        if row is None or kind != old.kind:
            self._rebuild()
            return
        row.show(new)  # the same controls: no rebuild, as when the value is typed
        row.condition_before = new
        self._problems.pop(id(row), None)
        self.update()

    def remove_condition(self, index: int, *, request: str | None = None, alternative: str | None = None) -> None:
        """Remove condition ``index``."""
        del self._choice(request, alternative).conditions[index]
        self._rebuild()

    def set_count(self, count: int | str, *, request: str | None = None, alternative: str | None = None) -> None:
        """Ask for ``count`` devices, or every matching device with ``"All"``."""
        choice = self._choice(request, alternative)
        if str(count).lower() == "all":
            choice.all_devices = True
        else:
            if int(count) < 1:
                raise BuildError(f"count {count} is below 1", hint="ask for 1 or more, or All")
            choice.all_devices, choice.count = False, int(count)
        self._rebuild()

    def set_device_class(self, device_class: str, *, request: str | None = None, alternative: str | None = None) -> None:
        """Use DeviceClass ``device_class`` for the request (or alternative)."""
        known = [(c.get("metadata") or {}).get("name") for c in self._classes]
        if device_class not in known:
            raise BuildError(f"no DeviceClass {device_class!r} in the cluster", hint=f"classes: {', '.join(known)}")
        self._choice(request, alternative).device_class = device_class
        self._rebuild()

    def add_alternative(self, name: str | None = None, device_class: str = DEFAULT_CLASS, *,
                        request: str | None = None) -> str:
        """Add a ``firstAvailable`` alternative to the request (tried after the others); returns its name."""
        req = self.spec.request(request) if request else self.spec.requests[0]
        taken = {c.name for c in req.choices}
        name = name or next(f"alt-{i}" for i in range(1, 100) if f"alt-{i}" not in taken)
        req.choices.append(Choice(name, device_class))
        self._rebuild()
        return name

    def remove_alternative(self, name: str, *, request: str | None = None) -> None:
        """Remove alternative ``name`` (the last one cannot go: remove the request instead)."""
        req = self.spec.request(request) if request else self.spec.requests[0]
        if len(req.choices) == 1:
            raise BuildError(f"request {req.name!r} has one alternative left", hint="remove the request instead")
        req.choices.remove(self._choice(req.name, name))
        self._rebuild()

    def add_constraint(self, kind: str = "matchAttribute", attribute: str = "gpu.nvidia.com/productName",
                       requests: list[str] | tuple[str, ...] = ()) -> int:
        """Add a matchAttribute or distinctAttribute constraint over ``requests`` (empty: all); returns its index."""
        constraint = Constraint(kind, attribute, list(requests))
        constraint.body()  # a BuildError now for a bad kind
        self.spec.constraints.append(constraint)
        self._rebuild()
        return len(self.spec.constraints) - 1

    def remove_constraint(self, index: int) -> None:
        """Remove constraint ``index``."""
        del self.spec.constraints[index]
        self._rebuild()

    def set_sharing(self, strategy: str | None, *, interval: str = "Default", thread_percentage: int | None = None,
                    pinned_memory_limit: str | None = None, requests: list[str] | tuple[str, ...] = ()) -> None:
        """Share the devices between the containers: ``TimeSlicing`` (an interval), ``MPS``, or None for no sharing."""
        if strategy is None:
            self.spec.sharing = None
        else:
            sharing = Sharing(strategy, interval, thread_percentage, pinned_memory_limit, list(requests))
            sharing.check()
            self.spec.sharing = sharing
        self._rebuild()

    # --- the cluster and the evaluation --------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the cluster's devices, DeviceClasses and allocations, then re-evaluate."""
        from drawb.plan.read import read_view

        self._frame = self._session.devices()
        self._classes = self._session.cluster.list("DeviceClass")
        self._state = read_view(self._session.cluster, self._session.rules_version)
        self._present = {}
        for kind, field in DEFAULT_VALUES.items():
            column = f"gpu.nvidia.com/{field}"
            values = self._frame[column].dropna().unique() if column in self._frame else []
            self._present[kind] = sorted(str(v) for v in values)
        memory = "capacity:gpu.nvidia.com/memory"
        self._present["memory"] = sorted({str(v) for v in self._frame[memory].dropna().unique()}) if memory in self._frame else []
        self._attributes = sorted(self._frame.attrs.get("drawb", {}).get("attributes", {}))
        self._rebuild()

    def _default_value(self, kind: str) -> str:
        present = self._present.get(kind) or []
        if present:
            return present[0]
        return {"memory": "40Gi", "compute_capability": "8.0.0", "driver_version": "550.0.0"}.get(kind, "true")

    def update(self) -> None:
        """Re-evaluate the claim now and show it (typing calls this once it pauses)."""
        spec = self.spec
        spec.template_name, spec.pod_name, spec.containers = self.template_name, self.pod_name, self.containers
        namespace = self.namespace or self._session.namespace
        outcome = evaluate(spec, frame=self._frame, classes=self._classes, state=self._state, namespace=namespace,
                           kubernetes_version=self._session.cluster.server_version(),
                           feature_gates=getattr(self._state, "feature_gates", None), cluster=self._session.cluster)
        self._outcome = outcome
        first = outcome.choices[0].result if outcome.choices else None
        self.set_trait("match_count", first.match_count if first is not None else 0)
        allocation = outcome.allocation
        self.set_trait("predicted_node", allocation.node if allocation is not None else None)
        self.set_trait("valid", outcome.valid and not self._problems)
        self.set_trait("yaml", outcome.yaml)
        self._show(outcome)

    # --- actions -------------------------------------------------------------------------------

    def _documents(self) -> list[dict]:
        self.update()
        outcome = self._outcome
        problems = list(self._problems.values())
        if outcome.error:
            problems.append(outcome.error)
        problems += [f"{c.choice}: the selector does not compile" for c in outcome.choices if c.compile_error]
        problems += [str(i) for i in outcome.errors]
        if problems:
            raise BuildError("the claim is not valid yet: " + "; ".join(problems),
                             hint="fix what the builder shows in red; nothing was written or applied")
        return outcome.documents

    def export(self, path: str | Path) -> Path:
        """Write the ResourceClaimTemplate and Pod to ``path`` as YAML; returns the path."""
        from drawb.render.export import dump_documents
        from drawb.render.rendered import OutputPathError

        documents = self._documents()
        out = Path(path).expanduser()
        if out.is_dir():
            raise OutputPathError(f"{path} is a folder", hint=f"name a file in it, e.g. {out / 'claim.yaml'}")
        if not out.parent.is_dir():
            raise OutputPathError(f"{path}: the folder {out.parent} does not exist", hint=f"create it first: mkdir -p {out.parent}")
        out.write_text(dump_documents(documents), encoding="utf-8")
        self._result.value = f"Exported to <code>{html.escape(str(out))}</code>."
        return out

    def _apply(self, dry_run: bool):
        from drawb.commands.registry import run_line

        self._documents()  # refuses an invalid claim before anything reaches the cluster
        applied = run_line(self._session, "apply --dry-run" if dry_run else "apply", cell=self.yaml)
        self._result.value = applied._repr_html_()
        if not dry_run:
            self.refresh()
        return applied

    def dry_run(self):
        """Server-side dry run of the manifests through the connected cluster (as ``%dra apply --dry-run``)."""
        return self._apply(True)

    def apply(self):
        """Validate, dry-run, then apply the manifests through the connected cluster (as ``%dra apply``)."""
        return self._apply(False)

    def check(self, *, timeout: float = 120, keep: bool = False):
        """Run the pod as a CUDA check (as ``%dra check``): the GPUs it sees must be the devices allocated."""
        from drawb.check import check as run
        from drawb.commands.registry import COMMANDS

        documents = self._documents()
        lines: list[str] = []

        def progress(line: str) -> None:  # the check's stages and log lines, shown as they come
            lines.append(line)
            self._result.value = _html_pre("\n".join(lines[-40:]))

        verdict = run(self._session.cluster, namespace=self.namespace or self._session.namespace, timeout=timeout,
                      keep=keep, progress=progress, why_hint=f"{self._session.prog} why" if "why" in COMMANDS else None,
                      rendered=documents)
        self._result.value = verdict._repr_html_() if hasattr(verdict, "_repr_html_") else _html_pre(str(verdict))
        return verdict

    # --- widgets ---------------------------------------------------------------------------------

    def _build_controls(self) -> None:
        def text(description: str, cls: str, trait: str) -> widgets.Text:
            box = widgets.Text(description=description, continuous_update=False)
            box.add_class(f"drawb-build-{cls}")
            box.observe(lambda change: setattr(self, trait, change["new"]), names="value")
            return box

        self._template_box = text("template", "template-name", "template_name")
        self._pod_box = text("pod", "pod-name", "pod_name")
        self._containers_box = widgets.BoundedIntText(value=1, min=1, max=16, description="containers",
                                                      layout=widgets.Layout(width="160px"))
        self._containers_box.add_class("drawb-build-containers")
        self._containers_box.observe(lambda change: setattr(self, "containers", change["new"]), names="value")
        self._add_request = self._button("+ request", "add-request", lambda: self.add_request())
        self._requests_box = widgets.VBox()
        self._constraints_box = widgets.VBox()
        self._add_constraint = self._button("+ constraint", "add-constraint", lambda: self.add_constraint())
        self._strategy = widgets.Dropdown(options=[("no sharing", ""), ("TimeSlicing", "TimeSlicing"), ("MPS", "MPS")],
                                          description="sharing")
        self._interval = widgets.Dropdown(options=list(INTERVALS), description="interval")
        self._threads = widgets.BoundedIntText(value=50, min=0, max=100, description="threads %")
        self._pinned = widgets.Text(value="", placeholder="e.g. 10Gi", description="pinned mem", continuous_update=False)
        for part, cls in ((self._strategy, "strategy"), (self._interval, "interval"), (self._threads, "threads"),
                          (self._pinned, "pinned")):
            part.add_class(f"drawb-build-sharing-{cls}")
            part.observe(lambda _change: self._on_sharing(), names="value")
        self._allocation = widgets.HTML()
        self._issues = widgets.HTML()
        self._yaml = widgets.HTML()
        self._export_path = widgets.Text(value="claim.yaml", description="file", continuous_update=False)
        self._result = widgets.HTML()
        for part, cls in ((self._allocation, "allocation"), (self._issues, "issues"), (self._yaml, "yaml"),
                          (self._export_path, "export-path"), (self._result, "result")):
            part.add_class(f"drawb-build-{cls}")
        self._actions = widgets.HBox([
            self._export_path,
            self._button("Export", "export", lambda: self.export(self._export_path.value), icon="download"),
            self._button("Dry run", "dry-run", self.dry_run, icon="check"),
            self._button("Apply", "apply", self.apply, icon="upload"),
            self._button("Check", "check", self.check, icon="play"),
        ])

    def _layout(self) -> list[widgets.Widget]:
        return [
            widgets.HBox([self._template_box, self._pod_box, self._containers_box]),
            self._requests_box,
            self._add_request,
            widgets.HTML("<b>Constraints</b>"), self._constraints_box, self._add_constraint,
            widgets.HBox([self._strategy, self._interval, self._threads, self._pinned]),
            widgets.HTML("<b>Predicted allocation</b>"), self._allocation,
            self._issues,
            widgets.HTML("<b>Manifests</b>"), self._yaml,
            self._actions, self._result,
        ]

    def _button(self, description: str, cls: str, action: Callable[[], Any], icon: str = "") -> widgets.Button:
        button = widgets.Button(description=description, icon=icon, layout=NARROW)
        button.add_class(f"drawb-build-{cls}")

        def clicked(_button) -> None:
            try:
                action()
            except DrawbError as exc:  # shown in the widget; the programmatic twin raises it
                self._result.value = _html_pre(exc.render(prog=self._session.prog), "drawb-build-error")

        button.on_click(clicked)
        return button

    def _on_names(self, change) -> None:
        box = {"template_name": self._template_box, "pod_name": self._pod_box, "containers": self._containers_box}.get(change["name"])
        if box is not None and box.value != change["new"]:
            box.value = change["new"]
        self._later()

    def _on_sharing(self) -> None:
        strategy = self._strategy.value
        self._on_sharing_display()
        if self._syncing:
            return
        try:
            if strategy:
                self.set_sharing(strategy, interval=self._interval.value,
                                 thread_percentage=self._threads.value if strategy == "MPS" else None,
                                 pinned_memory_limit=(self._pinned.value or None) if strategy == "MPS" else None)
            else:
                self.set_sharing(None)
        except DrawbError as exc:
            self._result.value = _html_pre(exc.render(prog=self._session.prog), "drawb-build-error")

    _syncing = False

    def _rebuild(self) -> None:
        """Rebuild the request, constraint and sharing controls from the model, then evaluate."""
        if self._frame is None:
            return
        self._problems.clear()
        self._rows: dict[tuple[int, int], ConditionRow] = {}
        self._requests_box.children = [self._request_panel(r) for r in self.spec.requests]
        self._constraints_box.children = [self._constraint_row(i, c) for i, c in enumerate(self.spec.constraints)]
        self._syncing = True
        try:
            sharing = self.spec.sharing
            self._strategy.value = sharing.strategy if sharing else ""
            if sharing:
                self._interval.value = sharing.interval
                if sharing.thread_percentage is not None:
                    self._threads.value = int(sharing.thread_percentage)
                self._pinned.value = sharing.pinned_memory_limit or ""
        finally:
            self._syncing = False
        self._on_sharing_display()
        self.update()

    def _on_sharing_display(self) -> None:
        strategy = self._strategy.value
        self._interval.layout.display = None if strategy == "TimeSlicing" else "none"
        for part in (self._threads, self._pinned):
            part.layout.display = None if strategy == "MPS" else "none"

    def _request_panel(self, request: Request) -> widgets.VBox:
        name = widgets.Text(value=request.name, description="request", continuous_update=False)
        name.add_class("drawb-build-request-name")

        def renamed(change) -> None:
            old = request.name
            request.name = change["new"]
            if len(request.choices) == 1 and request.choices[0].name == old:
                request.choices[0].name = change["new"]
            self._later()

        name.observe(renamed, names="value")
        header = widgets.HBox([name,
                               self._button("+ alternative", "add-alternative", lambda: self.add_alternative(request=request.name)),
                               self._button("remove request", "remove-request", lambda: self.remove_request(request.name),
                                            icon="trash")])
        panel = widgets.VBox([header] + [self._choice_panel(request, c) for c in request.choices],
                             layout=widgets.Layout(border="1px solid #ddd", padding="4px", margin="2px 0"))
        panel.add_class("drawb-build-request")
        return panel

    def _choice_panel(self, request: Request, choice: Choice) -> widgets.VBox:
        classes = sorted((c.get("metadata") or {}).get("name") for c in self._classes)
        menu = widgets.Dropdown(options=sorted(set(classes) | {choice.device_class}), value=choice.device_class,
                                description="class")
        count = widgets.BoundedIntText(value=choice.count, min=1, max=1024, description="count",
                                       disabled=choice.all_devices, layout=widgets.Layout(width="160px"))
        every = widgets.Checkbox(value=choice.all_devices, description="All", indent=False, layout=NARROW)
        parts = [menu, count, every, self._button("+ condition", "add-condition",
                                                  lambda: self._add_row(choice))]
        alternatives = request.alternatives
        if alternatives:
            alt = widgets.Text(value=choice.name, description="alternative", continuous_update=False)
            alt.add_class("drawb-build-choice-name")

            def alt_renamed(change) -> None:
                choice.name = change["new"]
                self._later()

            alt.observe(alt_renamed, names="value")
            parts.insert(0, alt)
            parts.append(self._button("remove", "remove-alternative",
                                      lambda: self.remove_alternative(choice.name, request=request.name), icon="trash"))
        for part, cls in ((menu, "class"), (count, "count"), (every, "all")):
            part.add_class(f"drawb-build-{cls}")

        def on_class(change) -> None:
            choice.device_class = change["new"]
            self._later()

        def on_count(change) -> None:
            choice.count = int(change["new"])
            self._later()

        def on_all(change) -> None:
            choice.all_devices = bool(change["new"])
            count.disabled = choice.all_devices
            self._later()

        menu.observe(on_class, names="value")
        count.observe(on_count, names="value")
        every.observe(on_all, names="value")
        rows = [self._condition_row(choice, i, c) for i, c in enumerate(choice.conditions)]
        outputs = {cls: widgets.HTML() for cls in ("selector", "compile-error", "status", "matches", "errors")}
        for cls, out in outputs.items():
            out.add_class(f"drawb-build-{cls}")
        box = widgets.VBox([widgets.HBox(parts), *rows, *outputs.values()])
        box.add_class("drawb-build-choice")
        box._drawb_key = (request.name, choice.name) if alternatives else (request.name, request.name)
        box._drawb_outputs = outputs
        return box

    def _add_row(self, choice: Choice) -> None:
        choice.conditions.append(Condition("product", self._default_value("product")))
        self._rebuild()

    def _condition_row(self, choice: Choice, index: int, condition: Condition) -> ConditionRow:
        row: ConditionRow

        def on_change(new: Condition | None, problem: str | None) -> None:
            if new is None:
                self._problems[id(row)] = problem
                self.set_trait("valid", False)
                return
            self._problems.pop(id(row), None)
            choice.conditions[choice.conditions.index(row.condition_before)] = new
            row.condition_before = new
            self._later()

        def on_kind(kind: str) -> None:
            position = choice.conditions.index(row.condition_before)
            choice.conditions[position] = Condition(kind, self._default_value(kind))
            self._rebuild()

        def on_remove() -> None:
            choice.conditions.remove(row.condition_before)
            self._rebuild()

        row = ConditionRow(condition, self._present.get(condition.kind, []), on_change=on_change, on_kind=on_kind,
                           on_remove=on_remove)
        row.condition_before = condition
        self._rows[(id(choice), index)] = row
        return row

    def _constraint_row(self, index: int, constraint: Constraint) -> ConstraintRow:
        def on_change(new: Constraint) -> None:
            self.spec.constraints[index] = new
            self._later()

        return ConstraintRow(constraint, self._attributes, on_change=on_change,
                             on_remove=lambda: self.remove_constraint(index))

    # --- showing the outcome ---------------------------------------------------------------------

    def _show(self, outcome: Outcome) -> None:
        boxes = {getattr(b, "_drawb_key", None): b for panel in self._requests_box.children for b in panel.children[1:]}
        for item in outcome.choices:
            box = boxes.get((item.request, item.choice))
            if box is None:
                continue
            out = box._drawb_outputs
            out["selector"].value = (f"<code>{html.escape(item.selector)}</code>" if item.selector
                                     else "<i>no conditions: every device of the class</i>")
            error = item.compile_error
            out["compile-error"].value = compile_error_html(error) if error else ""
            if item.problem:
                out["status"].value = f'<span style="color: #b00020">{html.escape(item.problem)}</span>'
                out["matches"].value = out["errors"].value = ""
            elif item.result is not None:
                out["status"].value = status_html(item.result, item.device_class)
                out["matches"].value = "" if error else matches_html(item.result, limit=SHOWN_ROWS)
                out["errors"].value = "" if error else errors_html(item.result, limit=SHOWN_ROWS)
        self._allocation.value = _allocation_html(outcome, self._session)
        notes = list(self._problems.values()) + ([outcome.error] if outcome.error else [])
        notes += [f"{i.level}: {i}" for i in outcome.issues]
        self._issues.value = "".join(f'<div style="color: {"#b00020" if not n.startswith("warning") else "#8a6d00"}">'
                                     f"{html.escape(n)}</div>" for n in notes)
        self._yaml.value = _html_pre(outcome.yaml) if outcome.yaml else ""


def _allocation_html(outcome: Outcome, session: Session) -> str:
    allocation = outcome.allocation
    if allocation is None:
        return ""
    who = "the simulated scheduler" if getattr(session.cluster, "simulated", False) else \
        "drawb (nodes in name order; the real scheduler may pick another node that fits)"
    if allocation.node is None:
        return f"<span>No node now: {html.escape(allocation.reason or '')}</span>"
    rows = "".join(f"<tr><td>{html.escape(d['request'])}</td><td>{html.escape(d['pool'])}</td>"
                   f"<td>{html.escape(d['device'])}</td></tr>" for d in allocation.devices)
    return (f"<div>{html.escape(who)} would place the pod on <b>{html.escape(allocation.node)}</b>:</div>"
            f'<table style="margin-left: 0"><tr><th>request</th><th>pool</th><th>device</th></tr>{rows}</table>')


def _get(session: Session, kind: str, name: str, namespace: str | None) -> dict:
    namespace = namespace or session.namespace
    obj = session.cluster.get(kind, name, namespace)
    if obj is None:
        import difflib

        names = [o["metadata"]["name"] for o in session.cluster.list(kind, namespace)]
        close = difflib.get_close_matches(name, names, n=1)
        raise BuildError(f"no {kind} {name!r} in namespace {namespace!r}",
                         hint=f"did you mean {close[0]!r}?" if close else "check the name and the namespace (-n)")
    return obj
