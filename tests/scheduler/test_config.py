"""KubeSchedulerConfiguration: defaults, plugin merging, validation messages, out-of-tree plugins."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.config import (
    DEFAULT_MULTI_POINT,
    ConfigError,
    build_registry,
    load_config,
    parse_config,
    profile_spec,
)
from scheduler.framework.runtime import expand_plugins

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "out_of_tree_plugin"


def test_defaults_match_upstream_v1():
    cfg = parse_config({})
    assert (cfg.percentage_of_nodes_to_score, cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds,
            cfg.parallelism) == (0, 1, 10, 16)
    # minik3s also serves Volcano's pods (schedulerName: volcano) with the same plugins
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "volcano"]
    assert cfg.profiles[1].plugins == cfg.profiles[0].plugins
    mp = cfg.profiles[0].plugins.multi_point.enabled
    assert [(r.name, r.weight or 0) for r in mp] == DEFAULT_MULTI_POINT
    weights = {r.name: r.weight for r in mp if r.weight}
    assert weights == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
                       "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}


@pytest.mark.parametrize(("plugins", "want_first", "want_len"), [
    pytest.param({"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "X"}]}}, ["X"], 1,
                 id="disable-all-defaults"),
    pytest.param({"multiPoint": {"disabled": [{"name": "ImageLocality"}]}}, ["SchedulingGates"],
                 len(DEFAULT_MULTI_POINT) - 1, id="disable-one-default"),
    pytest.param({"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 9}]}}, ["SchedulingGates"],
                 len(DEFAULT_MULTI_POINT), id="reconfigured-default-replaced-in-place"),
    pytest.param({"multiPoint": {"enabled": [{"name": "Extra"}]}}, ["SchedulingGates"],
                 len(DEFAULT_MULTI_POINT) + 1, id="custom-appended"),
])
def test_profile_plugins_merge_with_defaults(plugins, want_first, want_len):
    cfg = parse_config({"profiles": [{"plugins": plugins}]})
    mp = cfg.profiles[0].plugins.multi_point.enabled
    assert [r.name for r in mp[:len(want_first)]] == want_first and len(mp) == want_len
    if "TaintToleration" in str(plugins):
        assert next(r for r in mp if r.name == "TaintToleration").weight == 9


@pytest.mark.parametrize(("data", "msg"), [
    pytest.param({"profiles": [{"plugins": {"score": {"enabled": [{"name": "A"}, {"name": "B", "weight": -1}]}}}]},
                 "profiles[0].plugins.score.enabled[1].weight: Invalid value: -1: must be a non-negative integer",
                 id="negative-score-weight"),
    pytest.param({"percentageOfNodesToScore": 101},
                 "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]", id="percentage-range"),
    pytest.param({"podInitialBackoffSeconds": 0},
                 "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0", id="initial-backoff"),
    pytest.param({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
                 "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
                 id="max-below-initial"),
    pytest.param({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
                 'profiles[1].schedulerName: Duplicate value: "profiles[0].schedulerName"', id="duplicate-profile"),
    pytest.param({"profiles": [{"schedulerName": ""}]}, "profiles[0].schedulerName: Required value",
                 id="empty-scheduler-name"),
    pytest.param({"profiles": [{"pluginConfig": [{"name": "A"}, {"name": "A"}]}]},
                 'profiles[0].pluginConfig[1]: Duplicate value: "A"', id="duplicate-plugin-config"),
    pytest.param({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
                 "apiVersion: Unsupported value", id="old-api-version"),
    pytest.param({"profiles": [{"bogus": 1}]}, "profiles[0].bogus", id="unknown-profile-field"),
])
def test_validation_errors_name_the_field(data, msg):
    with pytest.raises(ConfigError) as ei:
        parse_config(data)
    assert msg in str(ei.value)


def test_load_config_from_yaml(tmp_path):
    p = tmp_path / "cfg.yaml"
    p.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                 "percentageOfNodesToScore: 30\nprofiles:\n- schedulerName: fast\n  percentageOfNodesToScore: 70\n")
    cfg = load_config(p)
    assert cfg.profiles[0].scheduler_name == "fast"
    spec = profile_spec(cfg.profiles[0], {}, global_percentage=cfg.percentage_of_nodes_to_score)
    assert spec.percentage_of_nodes_to_score == 70


def test_profile_spec_drops_default_plugins_missing_from_registry():
    from scheduler.framework.interface import FilterPlugin, QueueSortPlugin

    class Coscheduling(QueueSortPlugin):
        NAME = "Coscheduling"

    class NodeName(FilterPlugin):
        NAME = "NodeName"

    reg = {"Coscheduling": Coscheduling, "NodeName": NodeName}
    spec = profile_spec(parse_config({}).profiles[0], reg)
    assert [e.name for e in spec.plugins["multiPoint"].enabled] == ["NodeName", "Coscheduling"]
    assert [e.name for e in expand_plugins(spec, reg)["filter"]] == ["NodeName"]


def test_plugin_registry_rejects_bad_targets():
    with pytest.raises(ConfigError, match="must be"):
        parse_config({"pluginRegistry": {"X": "no_colon"}})
    cfg = parse_config({"pluginRegistry": {"X": "no_such_module_xyz:Thing"}})
    with pytest.raises(ConfigError, match="cannot import"):
        build_registry(cfg, {})
    cfg = parse_config({"pluginRegistry": {"X": "json:dumps"}})
    with pytest.raises(ConfigError, match="is not a scheduler framework Plugin"):
        build_registry(cfg, {})


async def test_out_of_tree_plugin_loads_and_takes_effect(monkeypatch, real_api, env, make_scheduler, base_config,
                                                         base_registry):

    monkeypatch.syspath_prepend(str(EXAMPLE))
    example = load_config(EXAMPLE / "scheduler-config.yaml")
    assert example.plugin_registry == {"PreferLabeledNodes": "prefer_labeled:PreferLabeledNodes"}
    cfg: dict[str, Any] = base_config
    cfg["pluginRegistry"] = dict(example.plugin_registry)
    prof = cfg["profiles"][0]
    prof["plugins"]["multiPoint"]["enabled"].append({"name": "PreferLabeledNodes", "weight": 5})
    prof["pluginConfig"] = [{"name": "PreferLabeledNodes", "args": {"label": "example.com/tier", "values": ["fast"]}}]
    reg = build_registry(parse_config(copy.deepcopy(cfg)), base_registry)
    s = make_scheduler(cfg, registry=reg)
    fw = s.frameworks["default-scheduler"]
    assert fw.plugins["PreferLabeledNodes"].args.label == "example.com/tier"
    assert fw.score_weights["PreferLabeledNodes"] == 5
    await env.add(make_node("plain").capacity(cpu="4").obj(),
                  make_node("fast").capacity(cpu="4").labels({"example.com/tier": "fast"}).obj(),
                  make_node("slow").capacity(cpu="4").labels({"example.com/tier": "slow"}).obj())
    for i in range(3):
        await env.add(make_pod(f"p{i}").req(cpu="100m").obj())
        await s.schedule_one()
        await s.wait_for_bindings()
        await real_api.settle()
    # LeastPods alone would spread them; weight 5 x 100 keeps them on the labelled node
    assert [b[2] for b in env.binds()] == ["fast", "fast", "fast"]
    assert [env.node_name(f"p{i}") for i in range(3)] == ["fast", "fast", "fast"]
    ex = s.explain("default", "p2")
    assert ex["nodes"]["fast"]["scores"]["PreferLabeledNodes"]["weighted"] == 500
    assert ex["nodes"]["slow"]["scores"]["PreferLabeledNodes"]["weighted"] == 0


async def test_bad_plugin_args_and_unknown_plugins_raise_config_errors(make_scheduler, base_config, base_registry):
    from pydantic import BaseModel

    from scheduler.framework.interface import FilterPlugin

    class Strict(FilterPlugin):
        NAME = "Strict"

        class Args(BaseModel):
            limit: int = 1

    reg = {**base_registry, "Strict": Strict}
    cfg = copy.deepcopy(base_config)
    cfg["profiles"][0]["plugins"]["multiPoint"]["enabled"].append({"name": "Strict"})
    cfg["profiles"][0]["pluginConfig"] = [{"name": "Strict", "args": {"limit": "lots"}}]
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.pluginConfig\[0\]\.args\.limit: Invalid value: 'lots'"):
        make_scheduler(cfg, registry=reg)
    cfg = copy.deepcopy(base_config)
    cfg["profiles"][0]["plugins"]["filter"] = {"enabled": [{"name": "Missing"}]}
    with pytest.raises(ConfigError, match=r'profiles\[0\]\.plugins: filter plugin "Missing" does not exist'):
        make_scheduler(cfg, registry=reg)


@pytest.mark.parametrize(("name", "args", "path", "want"), [
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated", "resources": []}},
                 ("scoringStrategy", "resources"), [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                 id="fit-empty-resources-become-cpu-and-memory"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated",
                                                          "resources": [{"name": "cpu", "weight": 0},
                                                                        {"name": "nvidia.com/gpu"}]}},
                 ("scoringStrategy", "resources"), [{"name": "cpu", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}],
                 id="fit-zero-or-missing-weight-becomes-one"),
    pytest.param("NodeResourcesFit", {}, ("scoringStrategy", "type"), "LeastAllocated", id="fit-no-strategy"),
    pytest.param("NodeResourcesBalancedAllocation", {"resources": []}, ("resources",),
                 [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}], id="balanced-empty-resources"),
])
def test_plugin_args_get_the_v1_api_defaults(name, args, path, want):
    """kubescheduler.config.k8s.io/v1 SetDefaults_NodeResourcesFitArgs /
    SetDefaults_NodeResourcesBalancedAllocationArgs: what a configuration file leaves out or sets
    to zero is defaulted before validation (a weight of 0 is not an error there)."""
    cfg = parse_config({"profiles": [{"pluginConfig": [{"name": name, "args": args}]}]})
    got: Any = cfg.profiles[0].plugin_config[0].args
    for key in path:
        got = got[key]
    assert got == want
