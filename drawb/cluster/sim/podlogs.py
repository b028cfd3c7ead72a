"""What a container's command does on a simulated node: its output, how long it runs, its exit code.

The simulation runs the commands whose output it can know: ``nvidia-smi`` (``-L``,
``--query-gpu=... --format=csv[,noheader][,nounits]`` and plain), ``echo``, ``sleep N`` and
``sleep infinity``, ``true`` and ``exit N``, alone or joined by ``;``/``&&``/``||`` in a
``sh -c``/``bash -c`` script. Any other program (a training script, a server, an image's own
entrypoint) is one it cannot run: the container keeps running and prints nothing.
The real control plane's fake driver (drawb.testing) prints the same lines for the same devices.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from drawb.gpu.smi import nvidia_smi_list
from drawb.gpu.smi_render import QueryError, VisibleGpu, nvidia_smi_query, nvidia_smi_table, visible_gpus

SMI_SECONDS = 0.5  # how long one nvidia-smi call takes on a node
NO_DEVICES = "No devices were found"
NO_DEVICES_EXIT = 6  # nvidia-smi's exit code when it finds no GPU
_SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash", "/usr/bin/sh"}


@dataclass
class Run:
    """A container's simulated run: the lines it prints, then an exit code (None: runs on)."""

    lines: list[str] = field(default_factory=list)
    seconds: float = 0.0
    exit_code: int | None = 0


def _smi(args: list[str], devices: list[dict], gpus: list[VisibleGpu], when: str) -> tuple[list[str], int]:
    if not gpus:
        return [NO_DEVICES], NO_DEVICES_EXIT
    if "-L" in args or "--list-gpus" in args:
        return nvidia_smi_list(devices).splitlines(), 0
    query = next((a.split("=", 1)[1] for a in args if a.startswith("--query-gpu=")), None)
    if query is not None:
        options = next((a.split("=", 1)[1] for a in args if a.startswith("--format=")), "")
        flags = set(options.split(","))
        if "csv" not in flags:
            return ['"--format=" switch is missing. Please use "--format=csv" or "--format=csv,noheader"'], 2
        try:
            text = nvidia_smi_query(gpus, [f.strip() for f in query.split(",") if f.strip()],
                                    header="noheader" not in flags, units="nounits" not in flags)
        except QueryError as err:
            return [str(err)], 2
        return text.splitlines(), 0
    return nvidia_smi_table(gpus, when).splitlines(), 0


def _split_script(script: str) -> list[tuple[str, list[str]]]:
    """(operator before it, words) for each simple command of a shell script."""
    lexer = shlex.shlex(script.replace("\n", " ; "), posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    commands: list[tuple[str, list[str]]] = []
    words: list[str] = []
    operator = ";"
    for token in lexer:
        if token in (";", "&&", "||"):
            if words:
                commands.append((operator, words))
            words, operator = [], token
        else:
            words.append(token)
    if words:
        commands.append((operator, words))
    return commands


def simulate(argv: list[str], devices: list[dict], when: str, parent_memory_mib: dict[str, int] | None = None) -> Run:
    """Run ``argv`` (command + args) in a container that sees ``devices`` (ResourceSlice devices)."""
    if not argv:
        return Run(exit_code=None)
    if argv[0] in _SHELLS and len(argv) >= 3 and argv[1] in ("-c", "-ec", "-ce", "-xc"):
        steps = _split_script(argv[2])
    else:
        steps = [(";", argv)]
    gpus = visible_gpus(devices, parent_memory_mib)
    run = Run()
    status = 0
    for operator, words in steps:
        if operator == "&&" and status != 0 or operator == "||" and status == 0:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program == "nvidia-smi":
            lines, status = _smi(words[1:], devices, gpus, when)
            run.lines += lines
            run.seconds += SMI_SECONDS
        elif program == "echo":
            run.lines.append(" ".join(words[1:]))
            status = 0
        elif program == "sleep":
            if words[1:] == ["infinity"]:
                run.exit_code = None
                return run
            try:
                run.seconds += float(words[1])
            except (IndexError, ValueError):
                run.lines.append(f"sleep: invalid time interval '{' '.join(words[1:])}'")
                status = 1
                continue
            status = 0
        elif program == "true":
            status = 0
        elif program == "false":
            status = 1
        elif program == "exit":
            run.exit_code = int(words[1]) if len(words) > 1 and words[1].isdigit() else status
            return run
        else:
            run.exit_code = None  # a program the simulation cannot run: it keeps running
            return run
    run.exit_code = status
    return run


def pod_logs(cluster, pod: str, namespace: str, container: str | None, follow: bool):
    """The log of one container of a simulated pod, with the API server's errors.

    ``cluster`` is the SimCluster. With ``follow`` the lines are streamed until the container
    ends (simulated time passes meanwhile); like the API server, a container that has not
    started yet is an error, not a wait.
    """
    from drawb.cluster.protocol import ClusterError

    obj = cluster.get("Pod", pod, namespace)
    if obj is None:
        raise ClusterError(f'pods "{pod}" not found', status=404, reason="NotFound")
    names = [c["name"] for c in obj["spec"]["containers"]]
    if container is None:
        if len(names) > 1:
            raise ClusterError(f"a container name must be specified for pod {pod}, choose one of: [{' '.join(names)}]",
                               status=400, reason="BadRequest")
        container = names[0]
    if container not in names:
        raise ClusterError(f"container {container} is not valid for pod {pod}", status=400, reason="BadRequest")
    if not obj["spec"].get("nodeName"):
        raise ClusterError(f"pod {pod} does not have a host assigned", status=400, reason="BadRequest")
    key = (namespace, pod)
    lines = cluster.lifecycle.container_log(key, container)
    if lines is None:
        status = next((s for s in obj.get("status", {}).get("containerStatuses") or () if s["name"] == container), {})
        reason = (status.get("state", {}).get("waiting") or {}).get("reason", "ContainerCreating")
        raise ClusterError(f'container "{container}" in pod "{pod}" is waiting to start: {reason}',
                           status=400, reason="BadRequest")
    yield from lines
    sent = len(lines)
    while follow:
        state = cluster.lifecycle.container_state(key, container)
        due = cluster.lifecycle.next_due()
        if state is None or state == "ended" or due is None:
            return
        cluster.sleep(max(0.0, due - cluster.lifecycle.clock.now()))
        lines = cluster.lifecycle.container_log(key, container) or []
        yield from lines[sent:]
        sent = len(lines)
