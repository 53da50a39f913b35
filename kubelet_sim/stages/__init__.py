"""Declarative pod behaviour, KWOK-style (layer L4, kubelet_sim): stages are data.

`model` holds the Stage schema and selector matching, `paths` the jq-like field paths the selectors
use, `lifecycle` the named status steps a stage's `next.status` refers to, `podstatus` the
kubelet's getPhase and condition generators the steps derive a pod's phase and conditions from,
and `defaults/*.yaml` the stages shipped as package data (`load_default_stages()`).
"""

from kubelet_sim.stages.model import Stage, load_default_stages, load_stages, select_stage

__all__ = ["Stage", "load_default_stages", "load_stages", "select_stage"]
