"""The Stage model: simulated behaviour as data (layer L4, kubelet_sim.stages).

Modelled on KWOK's `Stage` (kwok.x-k8s.io/v1alpha1): a stage has a `selector` over the object,
a `delay` and a `next` step. The stage controller evaluates the stages of a kind in file order and
takes the first whose selector matches (KWOK picks by weight among matches; order is simpler and
deterministic). When the same stage keeps matching, its delay runs from the moment it first
matched; once its step is applied the clock for that stage restarts.

    apiVersion: sim.minik3s.io/v1alpha1
    kind: Stage
    metadata: {name: pod-ready}
    spec:
      resourceRef: {kind: Pod}
      selector:
        matchExpressions:
        - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
        - {key: .status.phase, operator: In, values: [Pending]}
      delay:
        durationMilliseconds: 0
        durationFrom: {annotation: sim.minik3s.io/startup-seconds}   # seconds; overrides the default
        jitterDurationMilliseconds: 0
        notAfter: GracePeriodEnd      # optional: cap at the end of the deletion grace period
      next:
        status: Running               # a named step from kubelet_sim.stages.lifecycle
        finalizers: {add: [], remove: []}
        delete: false                 # DELETE gracePeriodSeconds=0 + uid precondition
        restartContainers: false      # the kubelet's restarts (kubelet_sim.stages.restarts),
                                      # timed by the containers, not by `delay`

Selector semantics: `In`/`NotIn` compare the value's string form; a missing field compares as ""
(so `.status.phase In [Pending, ""]` also matches a pod with no status yet). `Exists` is true for
any present, non-null value.
Worked example: pod {status: {phase: Running}} against `.status.phase NotIn [Succeeded, Failed]`
→ "Running" ∉ {Succeeded, Failed} → match.
"""

from __future__ import annotations

import logging
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from kubelet_sim.stages.init_containers import plays_init
from kubelet_sim.stages.paths import MISSING, compile_path, get_path
from kubelet_sim.stages.restarts import containers_end, restarts_containers
from kubelet_sim.stages.timing import parse_seconds
from minik3s.api.helpers.script import pod_outcome
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)


class ResourceRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    apiGroup: str = ""
    kind: str


class SelectorRequirement(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] = Field(default_factory=list)

    @field_validator("key")
    @classmethod
    def _path(cls, v: str) -> str:
        compile_path(v)
        return v

    def matches(self, obj: JsonDict) -> bool:
        value = get_path(obj, self.key)
        present = value is not MISSING and value is not None
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        s = _as_str(value) if present else ""
        return (s in self.values) == (self.operator == "In")


def _as_str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    return str(v)


class StageSelector(BaseModel):
    model_config = ConfigDict(extra="forbid")
    matchLabels: dict[str, str] = Field(default_factory=dict)
    matchAnnotations: dict[str, str] = Field(default_factory=dict)
    matchExpressions: list[SelectorRequirement] = Field(default_factory=list)
    # true: only pods whose containers all end on their own (a played command, see
    # minik3s.api.helpers.script.pod_outcome); false: only the others
    matchScript: bool | None = None
    # true: only pods whose containers the kubelet restarts when they end on their own
    # (kubelet_sim.stages.restarts.restarts_containers); false: only the others
    matchRestarts: bool | None = None
    # true: only pods with a container that ends on its own (run-seconds or a played command
    # that ends: kubelet_sim.stages.restarts.containers_end); false: only the others
    matchContainersEnd: bool | None = None
    # true: only pods whose init phase is played and not over
    # (kubelet_sim.stages.init_containers.plays_init); false: only the others
    matchInit: bool | None = None

    def matches(self, obj: JsonDict) -> bool:
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        for k, v in self.matchLabels.items():
            if labels.get(k) != v:
                return False
        annotations = meta.get("annotations") or {}
        for k, v in self.matchAnnotations.items():
            if annotations.get(k) != v:
                return False
        if not all(req.matches(obj) for req in self.matchExpressions):
            return False
        if self.matchScript is not None and (pod_outcome(obj) is not None) != self.matchScript:
            return False
        if self.matchInit is not None and plays_init(obj) != self.matchInit:
            return False
        if self.matchContainersEnd is not None and containers_end(obj) != self.matchContainersEnd:
            return False
        return self.matchRestarts is None or restarts_containers(obj) == self.matchRestarts


class DurationFrom(BaseModel):
    """Where a stage's delay comes from: an annotation's duration, else (with `script`) how long
    the pod's played commands run (minik3s.api.helpers.script)."""

    model_config = ConfigDict(extra="forbid")
    annotation: str | None = None
    script: bool = False


class StageDelay(BaseModel):
    model_config = ConfigDict(extra="forbid")
    durationMilliseconds: int = Field(default=0, ge=0)
    durationFrom: DurationFrom | None = None
    jitterDurationMilliseconds: int = Field(default=0, ge=0)
    notAfter: Literal["GracePeriodEnd"] | None = None

    def base_seconds(self, obj: JsonDict) -> float:
        """The delay before jitter: the annotation's value if present and valid, else the default."""
        source = self.durationFrom
        if source is not None and source.annotation is not None:
            raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(source.annotation)
            if raw is not None:
                secs = parse_seconds(raw)
                if secs is not None:
                    return secs
                logger.debug("ignoring invalid duration annotation %s=%r", source.annotation, raw)
        if source is not None and source.script:
            outcome = pod_outcome(obj)
            if outcome is not None:
                return outcome[0]
        return self.durationMilliseconds / 1000.0


class FinalizerChange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    add: list[str] = Field(default_factory=list)
    remove: list[str] = Field(default_factory=list)


class StageNext(BaseModel):
    model_config = ConfigDict(extra="forbid")
    status: str | None = None
    finalizers: FinalizerChange | None = None
    delete: bool = False
    # the kubelet's restarts with crash-loop back-off (kubelet_sim.stages.restarts): their own
    # timing, from the containers' statuses; the stage's delay does not apply
    restartContainers: bool = False
    # the init containers' played commands, one after another (kubelet_sim.stages.init_containers),
    # timed by the containers; the stage's delay does not apply
    initContainers: bool = False


class StageSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    resourceRef: ResourceRef
    selector: StageSelector = Field(default_factory=StageSelector)
    delay: StageDelay = Field(default_factory=StageDelay)
    next: StageNext


class Stage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    apiVersion: Literal["sim.minik3s.io/v1alpha1"] = "sim.minik3s.io/v1alpha1"
    kind: Literal["Stage"] = "Stage"
    metadata: dict[str, Any]
    spec: StageSpec

    @property
    def name(self) -> str:
        return str(self.metadata.get("name", ""))

    def matches(self, obj: JsonDict) -> bool:
        return self.spec.selector.matches(obj)


def select_stage(stages: list[Stage], obj: JsonDict) -> Stage | None:
    """The first stage, in order, whose selector matches `obj`."""
    for stage in stages:
        if stage.matches(obj):
            return stage
    return None


def load_stages(text: str, *, known_steps: set[str] | None = None) -> list[Stage]:
    """Parse multi-document YAML into stages; rejects unknown `next.status` steps when given."""
    stages: list[Stage] = []
    for doc in yaml.safe_load_all(text):
        if doc is None:
            continue
        stage = Stage.model_validate(doc)
        step = stage.spec.next.status
        if known_steps is not None and step is not None and step not in known_steps:
            raise ValueError(f"stage {stage.name}: unknown next.status step {step!r}")
        stages.append(stage)
    return stages


def load_stage_files(paths: list[Path], *, known_steps: set[str] | None = None) -> list[Stage]:
    out: list[Stage] = []
    for p in paths:
        out.extend(load_stages(p.read_text(), known_steps=known_steps))
    return out


def load_default_stages(kind: str = "Pod") -> list[Stage]:
    """The stages shipped in kubelet_sim/stages/defaults/*.yaml (file name order) for `kind`."""
    from kubelet_sim.stages.lifecycle import STATUS_STEPS

    root = importlib_resources.files("kubelet_sim.stages") / "defaults"
    names = sorted(e.name for e in root.iterdir() if e.name.endswith(".yaml"))
    stages: list[Stage] = []
    for name in names:
        stages.extend(load_stages((root / name).read_text(), known_steps=set(STATUS_STEPS)))
    return [s for s in stages if s.spec.resourceRef.kind == kind]
