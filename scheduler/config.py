"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): load, default, validate (layer L4).

Upstream: pkg/scheduler/apis/config/v1 (types, defaults.go, default_plugins.go) and
apis/config/validation. A profile's `plugins` are *merged* with the default plugin set the
way upstream's mergePlugins does: per extension point the default enabled plugins minus the
disabled ones (`*` disables all), a default re-listed in `enabled` is replaced in place, the
rest of `enabled` appended. multiPoint is then expanded per extension point by the
framework runtime (`expand_plugins`).

Out-of-tree plugins: `pluginRegistry` maps a plugin name to "module.path:ClassName"; the
class is imported when the configuration is turned into a registry (`build_registry`), and
the name can then be used anywhere a plugin name can. Example:

    pluginRegistry:
      PreferLabeledNodes: "examples.out_of_tree_plugin.prefer_labeled:PreferLabeledNodes"
    profiles:
    - schedulerName: default-scheduler
      plugins:
        multiPoint:
          enabled: [{name: PreferLabeledNodes, weight: 5}]

Validation errors raise `ConfigError`, whose message lists every problem in upstream's
field-path style: `profiles[0].plugins.score.enabled[1].weight: Invalid value: -1: ...`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from minik3s.client.leaderelection import LeaderElectionConfig
from scheduler.framework.interface import Plugin
from scheduler.framework.runtime import PluginEntry, PluginSetSpec, ProfileSpec

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

# v1.33 default_plugins.go, in order (weights for score plugins). Volume plugins
# (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone) and DynamicResources are in
# upstream's list; they are kept only when the registry provides them.
# minik3s departs in one place: gang scheduling is on by default. Coscheduling replaces
# PrioritySort as the QueueSort (same order for pods outside a gang) and, with GangScheduling,
# follows DefaultPreemption so PostFilter tries preemption before rejecting a gang.
DEFAULT_MULTI_POINT: list[tuple[str, int]] = [
    ("SchedulingGates", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("Coscheduling", 0),
    ("GangScheduling", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
]

_POINTS = ["multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
           "reserve", "permit", "preBind", "bind", "postBind"]


class ConfigError(ValueError):
    """An invalid scheduler configuration; the message names the field(s)."""


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


class PluginRef(_Model):
    name: str
    weight: int | None = None


class PluginSet(_Model):
    enabled: list[PluginRef] = Field(default_factory=list)
    disabled: list[PluginRef] = Field(default_factory=list)


class Plugins(_Model):
    multi_point: PluginSet = Field(default_factory=PluginSet, alias="multiPoint")
    pre_enqueue: PluginSet = Field(default_factory=PluginSet, alias="preEnqueue")
    queue_sort: PluginSet = Field(default_factory=PluginSet, alias="queueSort")
    pre_filter: PluginSet = Field(default_factory=PluginSet, alias="preFilter")
    filter: PluginSet = Field(default_factory=PluginSet)
    post_filter: PluginSet = Field(default_factory=PluginSet, alias="postFilter")
    pre_score: PluginSet = Field(default_factory=PluginSet, alias="preScore")
    score: PluginSet = Field(default_factory=PluginSet)
    reserve: PluginSet = Field(default_factory=PluginSet)
    permit: PluginSet = Field(default_factory=PluginSet)
    pre_bind: PluginSet = Field(default_factory=PluginSet, alias="preBind")
    bind: PluginSet = Field(default_factory=PluginSet)
    post_bind: PluginSet = Field(default_factory=PluginSet, alias="postBind")

    def point(self, name: str) -> PluginSet:
        return getattr(self, _ATTR[name])  # type: ignore[no-any-return]


_ATTR = {alias: attr for attr, f in Plugins.model_fields.items() for alias in [f.alias or attr]}


class PluginConfig(_Model):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Profile(_Model):
    scheduler_name: str = Field(DEFAULT_SCHEDULER_NAME, alias="schedulerName")
    percentage_of_nodes_to_score: int | None = Field(None, alias="percentageOfNodesToScore")
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = Field(default_factory=list, alias="pluginConfig")


class LeaderElection(_Model):
    """component-base LeaderElectionConfiguration as kube-scheduler defaults it (durations are Go
    duration strings: "15s", "1m30s")."""

    leader_elect: bool = Field(True, alias="leaderElect")
    lease_duration: str = Field("15s", alias="leaseDuration")
    renew_deadline: str = Field("10s", alias="renewDeadline")
    retry_period: str = Field("2s", alias="retryPeriod")
    resource_lock: str = Field("leases", alias="resourceLock")
    resource_name: str = Field("kube-scheduler", alias="resourceName")
    resource_namespace: str = Field("kube-system", alias="resourceNamespace")

    def election(self) -> LeaderElectionConfig:
        """The elector's settings (after validation: every duration parses)."""
        return LeaderElectionConfig(
            leader_elect=self.leader_elect, lease_duration=parse_duration(self.lease_duration) or 15.0,
            renew_deadline=parse_duration(self.renew_deadline) or 10.0,
            retry_period=parse_duration(self.retry_period) or 2.0,
            resource_name=self.resource_name, resource_namespace=self.resource_namespace)


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(value: str) -> float | None:
    """A Go duration string in seconds ("1m30s" -> 90.0, "0" -> 0.0); None when unparsable."""
    text = value.strip()
    sign = -1.0 if text.startswith("-") else 1.0
    text = text.lstrip("+-")
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(text):
        m = _DURATION_PART.match(text, pos)
        if m is None:
            return None
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return sign * total if text else None


class KubeSchedulerConfiguration(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    api_version: str = Field(API_VERSION, alias="apiVersion")
    kind: str = KIND
    parallelism: int = 16
    percentage_of_nodes_to_score: int | None = Field(0, alias="percentageOfNodesToScore")
    pod_initial_backoff_seconds: int = Field(1, alias="podInitialBackoffSeconds")
    pod_max_backoff_seconds: int = Field(10, alias="podMaxBackoffSeconds")
    profiles: list[Profile] = Field(default_factory=list)
    plugin_registry: dict[str, str] = Field(default_factory=dict, alias="pluginRegistry")
    leader_election: LeaderElection = Field(default_factory=LeaderElection, alias="leaderElection")

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


def default_plugins() -> Plugins:
    return Plugins.model_validate({"multiPoint": {"enabled": [{"name": n, "weight": w or None}
                                                              for n, w in DEFAULT_MULTI_POINT]}})


def _merge_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    disabled = {d.name for d in custom.disabled}
    custom_idx = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for p in default.enabled:
            if p.name in disabled:
                continue
            if p.name in custom_idx:
                i = custom_idx[p.name]
                replaced.add(i)
                p = custom.enabled[i]
            enabled.append(p)
    enabled += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return PluginSet(enabled=enabled, disabled=list(custom.disabled))


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    if custom is None:
        return default.model_copy(deep=True)
    merged = {}
    for point in _POINTS:
        merged[_ATTR[point]] = _merge_set(default.point(point), custom.point(point))
    return Plugins.model_validate(merged)


def parse_config(data: Mapping[str, Any] | None) -> KubeSchedulerConfiguration:
    """Decode, default and validate a configuration dict."""
    data = dict(data or {})
    api_version = data.get("apiVersion", API_VERSION)
    if api_version != API_VERSION:
        raise ConfigError(f"apiVersion: Unsupported value: {api_version!r}: supported values: {API_VERSION!r}")
    if data.get("kind", KIND) != KIND:
        raise ConfigError(f"kind: Unsupported value: {data.get('kind')!r}: supported values: {KIND!r}")
    try:
        cfg = KubeSchedulerConfiguration.model_validate(data)
    except ValidationError as e:
        raise ConfigError("; ".join(f"{_loc(err['loc'])}: {err['msg']}" for err in e.errors())) from None
    set_defaults(cfg)
    validate(cfg)
    return cfg


def load_config(path: str | Path) -> KubeSchedulerConfiguration:
    text = Path(path).read_text()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: invalid YAML: {e}") from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a KubeSchedulerConfiguration object")
    return parse_config(data)


# Without configured profiles minik3s serves `default-scheduler` and, for Volcano's pods
# (`schedulerName: volcano`), a second profile with the same (gang-aware) plugins.
VOLCANO_SCHEDULER_NAME = "volcano"


def _default_resource_specs(specs: Any) -> Any:
    """kubescheduler.config.k8s.io/v1 defaulting of a ResourceSpec list: none given means cpu and
    memory, a weight left out or 0 means 1 (anything else is left for validation to judge)."""
    if specs is None or (isinstance(specs, list) and not specs):
        return [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    if not isinstance(specs, list):
        return specs
    return [{**r, "weight": 1} if isinstance(r, dict) and not r.get("weight") else r for r in specs]


def _default_plugin_args(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The v1 API's SetDefaults for a plugin's args (SetDefaults_NodeResourcesFitArgs,
    SetDefaults_NodeResourcesBalancedAllocationArgs); other plugins' models default themselves."""
    if name == "NodeResourcesFit":
        strategy = args.get("scoringStrategy")
        if strategy is None:
            return {**args, "scoringStrategy": {"type": "LeastAllocated",
                                                "resources": _default_resource_specs(None)}}
        if isinstance(strategy, dict):
            return {**args, "scoringStrategy": {**strategy,
                                                "resources": _default_resource_specs(strategy.get("resources"))}}
    elif name == "NodeResourcesBalancedAllocation":
        return {**args, "resources": _default_resource_specs(args.get("resources"))}
    return args


def set_defaults(cfg: KubeSchedulerConfiguration) -> None:
    if not cfg.profiles:
        cfg.profiles = [Profile.model_validate({}),
                        Profile.model_validate({"schedulerName": VOLCANO_SCHEDULER_NAME})]
    for prof in cfg.profiles:
        prof.plugins = merge_plugins(default_plugins(), prof.plugins)
        for pc in prof.plugin_config:
            pc.args = _default_plugin_args(pc.name, pc.args)


def validate(cfg: KubeSchedulerConfiguration) -> None:
    errs: list[str] = []
    if cfg.parallelism <= 0:
        errs.append(f"parallelism: Invalid value: {cfg.parallelism}: should be an integer value greater than zero")
    pct = cfg.percentage_of_nodes_to_score
    if pct is not None and (pct < 0 or pct > 100):
        errs.append(f"percentageOfNodesToScore: Invalid value: {pct}: not in valid range [0-100]")
    if cfg.pod_initial_backoff_seconds <= 0:
        errs.append(f"podInitialBackoffSeconds: Invalid value: {cfg.pod_initial_backoff_seconds}: "
                    "must be greater than 0")
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        errs.append(f"podMaxBackoffSeconds: Invalid value: {cfg.pod_max_backoff_seconds}: "
                    "must be greater than or equal to PodInitialBackoffSeconds")
    errs.extend(_validate_leader_election(cfg.leader_election))
    seen: dict[str, int] = {}
    for i, prof in enumerate(cfg.profiles):
        path = f"profiles[{i}]"
        if not prof.scheduler_name:
            errs.append(f"{path}.schedulerName: Required value")
        elif prof.scheduler_name in seen:
            errs.append(f"{path}.schedulerName: Duplicate value: \"profiles[{seen[prof.scheduler_name]}].schedulerName\"")
        else:
            seen[prof.scheduler_name] = i
        p = prof.percentage_of_nodes_to_score
        if p is not None and (p < 0 or p > 100):
            errs.append(f"{path}.percentageOfNodesToScore: Invalid value: {p}: not in valid range [0-100]")
        plugins = prof.plugins or Plugins()
        for point in ("multiPoint", "score"):
            for j, ref in enumerate(plugins.point(point).enabled):
                if ref.weight is not None and ref.weight < 0:
                    errs.append(f"{path}.plugins.{point}.enabled[{j}].weight: Invalid value: {ref.weight}: "
                                "must be a non-negative integer")
        names: set[str] = set()
        for j, pc in enumerate(prof.plugin_config):
            if pc.name in names:
                errs.append(f"{path}.pluginConfig[{j}]: Duplicate value: \"{pc.name}\"")
            names.add(pc.name)
        qs = plugins.queue_sort.enabled
        if i > 0 and cfg.profiles[0].plugins is not None:
            canon = [r.name for r in cfg.profiles[0].plugins.queue_sort.enabled]
            if [r.name for r in qs] != canon:
                errs.append(f"{path}.plugins.queueSort: Invalid value: {[r.name for r in qs]}: "
                            "has to match for all profiles")
    for name, target in cfg.plugin_registry.items():
        if ":" not in target:
            errs.append(f"pluginRegistry[{name}]: Invalid value: {target!r}: must be \"module.path:ClassName\"")
    if errs:
        raise ConfigError("; ".join(errs))


def _validate_leader_election(le: LeaderElection) -> list[str]:
    """component-base's ValidateLeaderElectionConfiguration (only when leaderElect is on), plus
    the lock types client-go 1.33 still builds (only `leases`)."""
    if not le.leader_elect:
        return []
    errs: list[str] = []
    durations: dict[str, float] = {}
    for key, raw in (("leaseDuration", le.lease_duration), ("renewDeadline", le.renew_deadline),
                     ("retryPeriod", le.retry_period)):
        d = parse_duration(raw)
        if d is None:
            errs.append(f"leaderElection.{key}: Invalid value: {raw!r}: time: invalid duration {raw!r}")
            continue
        durations[key] = d
        if d <= 0:
            errs.append(f"leaderElection.{key}: Invalid value: {raw!r}: must be greater than zero")
    if "leaseDuration" in durations and "renewDeadline" in durations \
            and durations["leaseDuration"] <= durations["renewDeadline"]:
        errs.append(f"leaderElection.leaseDuration: Invalid value: {le.renew_deadline!r}: "
                    "LeaseDuration must be greater than RenewDeadline")
    if not le.resource_lock:
        errs.append('leaderElection.resourceLock: Invalid value: "": resourceLock is required')
    elif le.resource_lock != "leases":
        errs.append(f"leaderElection.resourceLock: Invalid value: {le.resource_lock!r}: "
                    f"Invalid lock-type {le.resource_lock}")
    if not le.resource_namespace:
        errs.append('leaderElection.resourceNamespace: Invalid value: "": resourceNamespace is required')
    if not le.resource_name:
        errs.append('leaderElection.resourceName: Invalid value: "": resourceName is required')
    return errs


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def import_plugin(target: str) -> type[Plugin]:
    """Import "module.path:ClassName" and check it is a Plugin subclass."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, attr)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"pluginRegistry: cannot import {target!r}: {e}") from None
    if not isinstance(cls, type) or not issubclass(cls, Plugin):
        raise ConfigError(f"pluginRegistry: {target!r} is not a scheduler framework Plugin")
    return cls


def build_registry(cfg: KubeSchedulerConfiguration,
                   in_tree: Mapping[str, type[Plugin]]) -> dict[str, type[Plugin]]:
    """In-tree plugins plus the configuration's out-of-tree `pluginRegistry` entries."""
    reg = dict(in_tree)
    for name, target in cfg.plugin_registry.items():
        if name in reg:
            raise ConfigError(f"pluginRegistry[{name}]: Invalid value: a plugin named {name!r} already exists")
        reg[name] = import_plugin(target)
    return reg


def validate_plugin_args(cfg: KubeSchedulerConfiguration, registry: Mapping[str, type[Plugin]]) -> None:
    """Validate every pluginConfig entry against its plugin's `Args` model; errors name the field:
    `profiles[0].pluginConfig[1].args.minCandidateNodesPercentage: Input should be ...`."""
    errs: list[str] = []
    for i, prof in enumerate(cfg.profiles):
        for j, pc in enumerate(prof.plugin_config):
            model = getattr(registry.get(pc.name), "Args", None)
            if model is None or not hasattr(model, "model_validate"):
                continue
            try:
                model.model_validate(pc.args)
            except ValidationError as e:
                for err in e.errors():
                    loc = _loc(err["loc"])
                    path = f"profiles[{i}].pluginConfig[{j}].args" + (f".{loc}" if loc else "")
                    errs.append(f"{path}: Invalid value: {err.get('input')!r}: {err['msg']}")
            except ValueError as e:
                errs.append(f"profiles[{i}].pluginConfig[{j}].args: Invalid value: {e}")
    if errs:
        raise ConfigError("; ".join(errs))


def profile_spec(profile: Profile, registry: Mapping[str, type[Plugin]],
                 *, global_percentage: int | None = None) -> ProfileSpec:
    """Turn a (defaulted) profile into the runtime's ProfileSpec. Default multiPoint plugins the
    registry does not provide (volume plugins we do not implement) are dropped."""
    plugins = profile.plugins or default_plugins()
    default_names = {n for n, _ in DEFAULT_MULTI_POINT}
    sets: dict[str, PluginSetSpec] = {}
    for point in _POINTS:
        ps = plugins.point(point)
        enabled = [PluginEntry(r.name, r.weight or 0) for r in ps.enabled
                   if r.name in registry or r.name not in default_names]
        sets[point] = PluginSetSpec(enabled, [PluginEntry(r.name) for r in ps.disabled])
    pct = profile.percentage_of_nodes_to_score
    if pct is None:
        pct = global_percentage
    return ProfileSpec(
        scheduler_name=profile.scheduler_name,
        plugins=sets,
        plugin_args={pc.name: pc.args for pc in profile.plugin_config},
        percentage_of_nodes_to_score=pct,
    )
