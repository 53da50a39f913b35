"""The composition root's descheduler wiring (minik3s.server): built only with a policy and when
enabled, loop avoidance through the embedded scheduler, the config-only plugin warning."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from minik3s.config import ServerConfig
from minik3s.server import build_components, start, stop

CONFIG_ONLY = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "seed", "pluginConfig": [{"name": "LowNodeUtilization", "args": {
        "thresholds": {"cpu": 30}, "targetThresholds": {"cpu": 50}}}],
    "plugins": {"deschedule": {"enabled": ["RemovePodsViolatingInterPodAntiAffinity"]}}}]}


@pytest.mark.parametrize(("policy", "disable", "scheduler", "expect_desched"), [
    pytest.param(True, set(), True, True, id="policy-given-runs-with-loop-avoidance"),
    pytest.param(False, set(), True, False, id="no-policy-no-descheduler"),
    pytest.param(True, {"descheduler"}, True, False, id="disabled"),
    pytest.param(True, {"scheduler"}, False, True, id="without-scheduler-no-loop-avoidance"),
])
async def test_wiring(tmp_path: Path, caplog: Any, policy: bool, disable: set[str], scheduler: bool,
                      expect_desched: bool) -> None:
    caplog.set_level(logging.WARNING, logger="minik3s.server")
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(CONFIG_ONLY))
    cfg = ServerConfig(data_dir=tmp_path / "srv", port=0, nodes="0", disable={"controllers", "kubelet", *disable},
                       descheduler_policy=path if policy else None)
    rs = await start(cfg)
    try:
        names = [n for n, _ in build_components(rs)]
        assert ("descheduler" in names) is expect_desched
        if expect_desched:
            d = rs.components["descheduler"]
            assert d.options.loop_avoidance is scheduler
            assert (d.evictor.placement is not None) is scheduler
            assert ("descheduler plugin has args in pluginConfig but is enabled at no extension point, it will "
                    "not run profile=seed plugin=LowNodeUtilization") in caplog.text
    finally:
        await stop(rs)
