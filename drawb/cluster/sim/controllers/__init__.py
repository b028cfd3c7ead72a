"""The workload controllers of the simulated kube-controller-manager.

One module per controller. ``host`` is what the control plane offers them; the apps/v1 controllers
(``deployment``, ``replicaset``, ``statefulset``, ``daemonset``) and the garbage collector (``garbage``)
sit behind ``apps``, talk to it through ``api`` and read the objects ``index`` keeps; ``owners`` holds
what controllers share (owner references, generated names, template hashes, pods made from a template).
"""
