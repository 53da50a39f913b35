"""Simulated kubelets (layer L4): a fleet of fake nodes that behave like kubelet v1.33 to the API.

| I want to… | Touch | Test at |
|---|---|---|
| change simulated pod/node behaviour | `kubelet_sim/stages/defaults/*.yaml` | a golden input/output pair in `tests/kubelet_sim/golden/` |

Data flow: fleet spec (`config.parse_fleet`) → Node manifests → `NodeAgent` registers Nodes and
Leases and keeps them alive (one task for all nodes) → one shared pod informer → `StageController`
matches each pod bound to a simulated node against declarative stages → status writes / DELETE.
Entry points for the composition root: `KubeletFleet`, `run_standalone`, `fail_node`, `recover_node`
(all importable from `kubelet_sim.controller`).
"""
