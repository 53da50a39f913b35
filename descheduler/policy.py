"""`DeschedulerPolicy` (`descheduler/v1alpha2`) loading, defaulting and validation (layer L4),
after sigs descheduler's pkg/api/v1alpha2 (types, defaults) and pkg/api/validation.

Defaults: DefaultEvictor is enabled at `filter` and `preEvictionFilter` of every profile
(unless disabled there) and gets default args. Extension point keys are matched without case
(`preevictionfilter` and `preEvictionFilter` both work, as upstream's decoding does).
Errors are `PolicyError` (a ValueError) whose message names the field, e.g.
`profiles[0].pluginConfig[0].args.thresholds: cpu threshold not in [0, 100] range`; the server
fails at start with it. A plugin with args in `pluginConfig` but enabled at no extension point
is reported by `unused_plugin_configs()` (upstream silently ignores it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from descheduler.framework.interface import (
    EXTENSION_POINTS,
    BalancePlugin,
    DeschedulePlugin,
    EvictorPlugin,
    Plugin,
    PluginArgs,
)
from minik3s.api.selectors import parse_label_selector

DEFAULT_EVICTOR = "DefaultEvictor"


class PolicyError(ValueError):
    """An invalid descheduler policy; the message names the field(s)."""


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


class PluginSet(_Model):
    enabled: list[str] = Field(default_factory=list)
    disabled: list[str] = Field(default_factory=list)


class Plugins(_Model):
    presort: PluginSet = Field(default_factory=PluginSet, alias="presort")
    sort: PluginSet = Field(default_factory=PluginSet)
    deschedule: PluginSet = Field(default_factory=PluginSet)
    balance: PluginSet = Field(default_factory=PluginSet)
    filter: PluginSet = Field(default_factory=PluginSet)
    pre_eviction_filter: PluginSet = Field(default_factory=PluginSet, alias="preEvictionFilter")

    @model_validator(mode="before")
    @classmethod
    def _case_insensitive(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        canon = {p.lower(): p for p in EXTENSION_POINTS}
        return {canon.get(str(k).lower(), k): v for k, v in data.items()}

    def point(self, name: str) -> PluginSet:
        return self.pre_eviction_filter if name == "preEvictionFilter" else getattr(self, name)


class PluginConfig(_Model):
    name: str
    args: dict[str, Any] | None = None


class Profile(_Model):
    name: str
    plugin_config: list[PluginConfig] = Field(default_factory=list, alias="pluginConfig")
    plugins: Plugins = Field(default_factory=Plugins)


class DeschedulerPolicy(_Model):
    api_version: Literal["descheduler/v1alpha2"] = Field(alias="apiVersion")
    kind: Literal["DeschedulerPolicy"]
    profiles: list[Profile] = Field(default_factory=list)
    node_selector: str | None = Field(None, alias="nodeSelector")
    max_no_of_pods_to_evict_per_node: int | None = Field(None, ge=0, alias="maxNoOfPodsToEvictPerNode")
    max_no_of_pods_to_evict_per_namespace: int | None = Field(None, ge=0, alias="maxNoOfPodsToEvictPerNamespace")
    max_no_of_pods_to_evict_total: int | None = Field(None, ge=0, alias="maxNoOfPodsToEvictTotal")
    grace_period_seconds: int | None = Field(None, ge=0, alias="gracePeriodSeconds")
    eviction_failure_event_notification: bool | None = Field(None, alias="evictionFailureEventNotification")
    metrics_collector: dict[str, Any] | None = Field(None, alias="metricsCollector")
    metrics_providers: list[dict[str, Any]] | None = Field(None, alias="metricsProviders")


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _errors(e: ValidationError, prefix: str = "") -> str:
    msgs = []
    for err in e.errors():
        loc = _loc(tuple(err["loc"]))
        field = f"{prefix}.{loc}" if prefix and loc else (prefix or loc)
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            msgs.append(f"{field}: Required value")
        elif err["type"] == "extra_forbidden":
            msgs.append(f"{field}: Invalid value: unknown field {str(err['loc'][-1])!r}")
        else:
            msgs.append(f"{field}: Invalid value: {msg}" if field else msg)
    return "; ".join(msgs)


class ParsedProfile:
    """A validated profile: enabled plugin names per extension point and parsed args."""

    def __init__(self, name: str, enabled: dict[str, list[str]], args: dict[str, PluginArgs | None]) -> None:
        self.name = name
        self.enabled = enabled
        self.args = args


def parse_policy(data: Mapping[str, Any] | None, registry: Mapping[str, type[Plugin]]
                 ) -> tuple[DeschedulerPolicy, list[ParsedProfile]]:
    try:
        policy = DeschedulerPolicy.model_validate(dict(data or {}))
    except ValidationError as e:
        raise PolicyError(_errors(e)) from None
    errs: list[str] = []
    if policy.node_selector:
        try:
            parse_label_selector(policy.node_selector)
        except ValueError as e:
            errs.append(f"nodeSelector: Invalid value: {e}")
    if policy.metrics_collector and policy.metrics_collector.get("enabled"):
        errs.append("metricsCollector.enabled: Invalid value: no metrics.k8s.io API is available in minik3s")
    if policy.metrics_providers:
        errs.append("metricsProviders: Invalid value: no metrics source is available in minik3s "
                    "(no metrics.k8s.io API, no Prometheus client)")
    seen: set[str] = set()
    parsed: list[ParsedProfile] = []
    for i, prof in enumerate(policy.profiles):
        base = f"profiles[{i}]"
        if not prof.name:
            errs.append(f"{base}.name: Required value: profile name is required")
        elif prof.name in seen:
            errs.append(f"{base}.name: Duplicate value: {prof.name!r}")
        seen.add(prof.name)
        enabled: dict[str, list[str]] = {}
        for ep in EXTENSION_POINTS:
            ps = prof.plugins.point(ep)
            names = list(ps.enabled)
            if ep in ("filter", "preEvictionFilter") and DEFAULT_EVICTOR not in names \
                    and DEFAULT_EVICTOR not in ps.disabled and "*" not in ps.disabled:
                names.insert(0, DEFAULT_EVICTOR)
            names = [n for n in names if n not in ps.disabled]
            for j, n in enumerate(ps.enabled):
                if n not in registry:
                    errs.append(f"{base}.plugins.{ep}.enabled[{j}]: Invalid value: {n!r}: plugin not found "
                                f"(known: {', '.join(sorted(registry))})")
                elif ep in ("deschedule", "balance", "filter", "preEvictionFilter") and not _implements(
                        registry[n], ep):
                    errs.append(f"{base}.plugins.{ep}.enabled[{j}]: Invalid value: {n!r} does not implement "
                                f"the {ep} extension point")
            if ep in ("presort", "sort") and ps.enabled:
                errs.append(f"{base}.plugins.{ep}: Invalid value: no {ep} plugins exist")
            enabled[ep] = [n for n in names if n in registry]
        args: dict[str, PluginArgs | None] = {}
        config_names: set[str] = set()
        for j, pc in enumerate(prof.plugin_config):
            where = f"{base}.pluginConfig[{j}]"
            if pc.name in config_names:
                errs.append(f"{where}.name: Duplicate value: {pc.name!r}")
                continue
            config_names.add(pc.name)
            cls = registry.get(pc.name)
            if cls is None:
                errs.append(f"{where}.name: Invalid value: {pc.name!r}: plugin not found")
                continue
            model = cls.Args
            if model is None:
                if pc.args:
                    errs.append(f"{where}.args: Invalid value: plugin {pc.name} takes no args")
                continue
            try:
                args[pc.name] = model.model_validate(pc.args or {})
            except ValidationError as e:
                errs.append(_errors(e, f"{where}.args"))
        used = {n for names in enabled.values() for n in names}
        for n in used:
            if n in args:
                continue
            model = registry[n].Args
            if model is None:
                args[n] = None
                continue
            try:
                args[n] = model.model_validate({})
            except ValidationError as e:
                errs.append(f"{base}.plugins: plugin {n} is enabled but needs args in pluginConfig: "
                            f"{_errors(e, 'args')}")
        parsed.append(ParsedProfile(prof.name, enabled, args))
    if errs:
        raise PolicyError("; ".join(errs))
    return policy, parsed


def _implements(cls: type[Plugin], ep: str) -> bool:
    want = {"deschedule": DeschedulePlugin, "balance": BalancePlugin, "filter": EvictorPlugin,
            "preEvictionFilter": EvictorPlugin}[ep]
    return issubclass(cls, want)


def unused_plugin_configs(policy: DeschedulerPolicy, parsed: list[ParsedProfile]) -> list[tuple[str, str]]:
    """(profile, plugin) pairs with args in pluginConfig but enabled at no extension point."""
    out: list[tuple[str, str]] = []
    for prof, pp in zip(policy.profiles, parsed, strict=True):
        used = {n for names in pp.enabled.values() for n in names}
        out.extend((prof.name, pc.name) for pc in prof.plugin_config if pc.name not in used)
    return out


def load_policy(path: str | Path, registry: Mapping[str, type[Plugin]]
                ) -> tuple[DeschedulerPolicy, list[ParsedProfile]]:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise PolicyError(f"{path}: cannot read the descheduler policy: {e.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise PolicyError(f"{path}: invalid YAML: {e}") from None
    if data is not None and not isinstance(data, dict):
        raise PolicyError(f"{path}: a DeschedulerPolicy must be a mapping")
    try:
        return parse_policy(data, registry)
    except PolicyError as e:
        raise PolicyError(f"{path}: {e}") from None
