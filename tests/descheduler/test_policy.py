"""DeschedulerPolicy parsing, defaulting and validation: bad input names the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from descheduler.plugins.registry import in_tree_registry
from descheduler.policy import PolicyError, load_policy, parse_policy, unused_plugin_configs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "descheduler" / "policy.yaml"


def pol(profile: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    prof = {"name": "p", **(profile or {})}
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [prof], **top}


LNU = {"pluginConfig": [{"name": "LowNodeUtilization", "args": {"thresholds": {"cpu": 20},
                                                                "targetThresholds": {"cpu": 50}}}],
       "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}


def test_seed_example_loads_with_the_default_evictor() -> None:
    policy, profiles = load_policy(EXAMPLE, in_tree_registry())
    assert profiles[0].enabled["balance"] == ["LowNodeUtilization", "RemovePodsViolatingTopologySpread"]
    assert profiles[0].enabled["deschedule"] == ["RemovePodsViolatingInterPodAntiAffinity"]
    assert profiles[0].enabled["filter"] == ["DefaultEvictor"]
    assert profiles[0].enabled["preEvictionFilter"] == ["DefaultEvictor"]
    assert unused_plugin_configs(policy, profiles) == []


def test_plugin_configured_but_not_enabled_is_reported() -> None:
    policy, profiles = parse_policy(pol({"pluginConfig": LNU["pluginConfig"]}), in_tree_registry())
    assert unused_plugin_configs(policy, profiles) == [("p", "LowNodeUtilization")]


def test_extension_point_keys_are_case_insensitive() -> None:
    _, profiles = parse_policy(pol({**LNU, "plugins": {**LNU["plugins"], "preevictionfilter": {
        "disabled": ["DefaultEvictor"]}}}), in_tree_registry())
    assert profiles[0].enabled["preEvictionFilter"] == []


@pytest.mark.parametrize(("doc", "field"), [
    pytest.param({"apiVersion": "descheduler/v1alpha1", "kind": "DeschedulerPolicy"}, "apiVersion",
                 id="wrong-api-version"),
    pytest.param({"kind": "DeschedulerPolicy", "profiles": []}, "apiVersion: Required value",
                 id="missing-api-version"),
    pytest.param({"apiVersion": "descheduler/v1alpha2", "kind": "KubeSchedulerConfiguration"}, "kind",
                 id="wrong-kind"),
    pytest.param(pol(maxNoOfPodsToEvictPerNode=-1), "maxNoOfPodsToEvictPerNode", id="negative-limit"),
    pytest.param(pol(gracePeriodSeconds="soon"), "gracePeriodSeconds", id="grace-period-not-int"),
    pytest.param(pol(nodeSelector="a in (b"), "nodeSelector", id="bad-node-selector"),
    pytest.param(pol(strategies={}), "strategies: Invalid value: unknown field 'strategies'",
                 id="unknown-top-level-field"),
    pytest.param({"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
                  "profiles": [{"name": "a"}, {"name": "a"}]}, "profiles[1].name", id="duplicate-profile"),
    pytest.param(pol({"plugins": {"balance": {"enabled": ["Nope"]}}}), "profiles[0].plugins.balance.enabled[0]",
                 id="unknown-plugin"),
    pytest.param(pol({"plugins": {"deschedule": {"enabled": ["LowNodeUtilization"]}}}),
                 "profiles[0].plugins.deschedule.enabled[0]", id="plugin-at-wrong-extension-point"),
    pytest.param(pol({"pluginConfig": [{"name": "Nope", "args": {}}]}), "profiles[0].pluginConfig[0].name",
                 id="unknown-plugin-config"),
    pytest.param(pol({**LNU, "pluginConfig": [{"name": "LowNodeUtilization", "args": {
        "thresholds": {"cpu": 120}, "targetThresholds": {"cpu": 150}}}]}),
        "profiles[0].pluginConfig[0].args: Invalid value: cpu threshold not in [0, 100] range", id="threshold-range"),
    pytest.param(pol({**LNU, "pluginConfig": [{"name": "LowNodeUtilization", "args": {
        "thresholds": {"cpu": 60}, "targetThresholds": {"cpu": 50}}}]}),
        "thresholds' cpu percentage is greater than targetThresholds'", id="threshold-above-target"),
    pytest.param(pol({**LNU, "pluginConfig": [{"name": "LowNodeUtilization", "args": {
        "thresholds": {"cpu": 20}, "targetThresholds": {"memory": 50}}}]}),
        "thresholds and targetThresholds configured different resources", id="threshold-resources-differ"),
    pytest.param(pol({"plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}),
                 "plugin LowNodeUtilization is enabled but needs args", id="enabled-without-required-args"),
    pytest.param(pol({"pluginConfig": [{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": "x"}}]}),
                 "profiles[0].pluginConfig[0].args.maxPodLifeTimeSeconds", id="arg-wrong-type"),
    pytest.param(pol({"pluginConfig": [{"name": "RemovePodsHavingTooManyRestarts",
                                        "args": {"podRestartThreshold": 0}}]}),
                 "profiles[0].pluginConfig[0].args.podRestartThreshold", id="restart-threshold-zero"),
    pytest.param(pol({"pluginConfig": [{"name": "DefaultEvictor", "args": {"minPodAge": "ten minutes"}}]}),
                 "profiles[0].pluginConfig[0].args.minPodAge", id="bad-duration"),
    pytest.param(pol({"pluginConfig": [{"name": "DefaultEvictor", "args": {
        "priorityThreshold": {"name": "x", "value": 1}}}]}), "only one of priorityThreshold fields",
        id="priority-threshold-both"),
    pytest.param(pol({"pluginConfig": [{"name": "RemovePodsViolatingNodeTaints", "args": {
        "includedTaints": ["a"], "excludedTaints": ["b"]}}]}), "either includedTaints or excludedTaints",
        id="taints-both-lists"),
    pytest.param(pol({"pluginConfig": [{"name": "RemoveDuplicates", "args": {"namespaces": {
        "include": ["a"], "exclude": ["b"]}}}]}), "only one of Include/Exclude namespaces", id="namespaces-both"),
    pytest.param(pol(metricsProviders=[{"source": "KubernetesMetrics"}]), "metricsProviders",
                 id="metrics-providers-unavailable"),
])
def test_invalid_policy_names_the_field(doc: dict[str, Any], field: str) -> None:
    with pytest.raises(PolicyError) as e:
        parse_policy(doc, in_tree_registry())
    assert field in str(e.value)


def test_load_reports_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("profiles: [\n")
    with pytest.raises(PolicyError, match="p.yaml: invalid YAML"):
        load_policy(bad, in_tree_registry())
    with pytest.raises(PolicyError, match="cannot read"):
        load_policy(tmp_path / "missing.yaml", in_tree_registry())
