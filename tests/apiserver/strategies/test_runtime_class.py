"""RuntimeClass (node.k8s.io/v1): validation and immutability of the kind, and the RuntimeClass
admission plugin on pod create, against the real in-process API (storage, strategies, admission)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from minik3s.api.errors import ForbiddenError, InvalidError
from minik3s.api.helpers.taints import merge_tolerations
from minik3s.api.resources import PODS, RUNTIMECLASSES
from minik3s.api.types import JsonDict
from minik3s.config import ServerConfig
from minik3s.server import start, stop

DEFAULT_TOLS = [
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
]


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Any]:
    cfg = ServerConfig(
        data_dir=tmp_path / "srv", port=0, disable={"scheduler", "controllers", "kubelet", "descheduler"}
    )
    rs = await start(cfg)
    try:
        yield rs.client
    finally:
        await stop(rs)


def rc(name: str = "kata", handler: Any = "kata", **extra: Any) -> JsonDict:
    obj: JsonDict = {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": name},
        **extra,
    }
    if handler is not None:
        obj["handler"] = handler
    return obj


def pod(name: str = "p", **spec: Any) -> JsonDict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}], **spec},
    }


def causes(err: InvalidError) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in err.details.get("causes") or ()]


_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


async def test_valid_class_round_trips(client: Any) -> None:
    created = await client.create(
        RUNTIMECLASSES,
        rc(
            overhead={"podFixed": {"cpu": "250m", "memory": "120Mi"}},
            scheduling={
                "nodeSelector": {"runtime": "kata"},
                "tolerations": [{"key": "kata", "operator": "Exists", "effect": "NoSchedule"}],
            },
        ),
    )
    assert created["handler"] == "kata"
    assert created["overhead"] == {"podFixed": {"cpu": "250m", "memory": "120Mi"}}
    assert "namespace" not in created["metadata"]  # cluster-scoped
    got = await client.get(RUNTIMECLASSES, "kata")
    assert got["scheduling"]["nodeSelector"] == {"runtime": "kata"}


@pytest.mark.parametrize(
    "obj, expected",
    [
        pytest.param(
            rc(handler="Not_A_Label"),
            [f'handler: Invalid value: "Not_A_Label": {_LABEL_MSG}'],
            id="handler-not-a-dns-label",
        ),
        pytest.param(rc(handler=None), [f'handler: Invalid value: "": {_LABEL_MSG}'], id="handler-missing"),
        pytest.param(
            rc(overhead={"podFixed": {"cpu": "-1"}}),
            ['overhead.podFixed[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
            id="negative-overhead",
        ),
        pytest.param(
            rc(scheduling={"nodeSelector": {"bad key!": "x"}}),
            [
                'scheduling.nodeSelector: Invalid value: "bad key!": name part must consist of alphanumeric '
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
            id="bad-node-selector-key",
        ),
        pytest.param(
            rc(
                scheduling={
                    "tolerations": [
                        {"key": "a", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "a", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
                    ]
                }
            ),
            ["scheduling.tolerations[1]: Duplicate value"],
            id="duplicate-toleration-key-effect",
        ),
    ],
)
async def test_invalid_class_rejected(client: Any, obj: JsonDict, expected: list[str]) -> None:
    with pytest.raises(InvalidError) as ei:
        await client.create(RUNTIMECLASSES, obj)
    got = causes(ei.value)
    # a Duplicate cause renders the whole toleration after the colon; compare its prefix only
    assert [g.split(":", 2)[0] + ":" + g.split(":", 2)[1] if "Duplicate" in g else g for g in got] == expected
    assert ei.value.code == 422


async def test_handler_is_immutable_but_overhead_is_not(client: Any) -> None:
    created = await client.create(RUNTIMECLASSES, rc())
    created["handler"] = "runc"
    with pytest.raises(InvalidError) as ei:
        await client.update(RUNTIMECLASSES, created)
    assert causes(ei.value) == ['handler: Invalid value: "runc": field is immutable']
    cur = await client.get(RUNTIMECLASSES, "kata")
    cur["overhead"] = {"podFixed": {"cpu": "100m"}}
    assert (await client.update(RUNTIMECLASSES, cur))["overhead"] == {"podFixed": {"cpu": "100m"}}


# --- admission -------------------------------------------------------------------------------


async def test_pod_gets_overhead_selector_and_tolerations_from_its_class(client: Any) -> None:
    await client.create(
        RUNTIMECLASSES,
        rc(
            overhead={"podFixed": {"cpu": "250m", "memory": "120Mi"}},
            scheduling={
                "nodeSelector": {"runtime": "kata"},
                "tolerations": [
                    {"key": "kata", "operator": "Exists", "effect": "NoSchedule"},
                    # covered by the pod's own toleration below: dropped
                    {"key": "gpu", "operator": "Equal", "value": "a100", "effect": "NoSchedule"},
                ],
            },
        ),
    )
    created = await client.create(
        PODS,
        pod(
            runtimeClassName="kata",
            nodeSelector={"zone": "a"},
            tolerations=[{"key": "gpu", "operator": "Exists"}],
        ),
        "default",
    )
    spec = created["spec"]
    assert spec["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert spec["nodeSelector"] == {"zone": "a", "runtime": "kata"}
    assert spec["tolerations"] == [
        {"key": "gpu", "operator": "Exists"},
        *DEFAULT_TOLS,
        {"key": "kata", "operator": "Exists", "effect": "NoSchedule"},
    ]


async def test_same_overhead_given_by_the_pod_is_accepted(client: Any) -> None:
    await client.create(RUNTIMECLASSES, rc(overhead={"podFixed": {"cpu": "1"}}))
    created = await client.create(PODS, pod(runtimeClassName="kata", overhead={"cpu": "1000m"}), "default")
    assert created["spec"]["overhead"] == {"cpu": "1"}


async def test_class_without_scheduling_or_overhead_changes_nothing(client: Any) -> None:
    await client.create(RUNTIMECLASSES, rc(name="runc", handler="runc"))
    created = await client.create(PODS, pod(runtimeClassName="runc"), "default")
    assert "overhead" not in created["spec"] and "nodeSelector" not in created["spec"]
    assert created["spec"]["tolerations"] == DEFAULT_TOLS


@pytest.mark.parametrize(
    "classes, spec, message",
    [
        pytest.param(
            [],
            {"runtimeClassName": "missing"},
            'pods "p" is forbidden: pod rejected: RuntimeClass "missing" not found',
            id="unknown-class",
        ),
        pytest.param(
            [rc(overhead={"podFixed": {"cpu": "250m"}})],
            {"runtimeClassName": "kata", "overhead": {"cpu": "1"}},
            "pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined "
            "Overhead",
            id="overhead-differs-from-class",
        ),
        pytest.param(
            [rc()],
            {"runtimeClassName": "kata", "overhead": {"cpu": "1"}},
            'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass '
            "defined Overhead",
            id="overhead-with-class-without-overhead",
        ),
        pytest.param(
            [],
            {"overhead": {"cpu": "1"}},
            'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass '
            "defined Overhead",
            id="overhead-without-class",
        ),
        pytest.param(
            [rc(scheduling={"nodeSelector": {"runtime": "kata"}})],
            {"runtimeClassName": "kata", "nodeSelector": {"runtime": "runc"}},
            'pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; '
            "pod.spec.nodeSelector[runtime] = runc",
            id="node-selector-conflict",
        ),
    ],
)
async def test_pod_rejected(client: Any, classes: list[JsonDict], spec: JsonDict, message: str) -> None:
    for c in classes:
        await client.create(RUNTIMECLASSES, c)
    with pytest.raises(ForbiddenError) as ei:
        await client.create(PODS, pod(**spec), "default")
    assert ei.value.code == 403
    assert ei.value.message == message


@pytest.mark.parametrize(
    "first, second, expected",
    [
        pytest.param(
            [{"key": "a", "operator": "Exists"}],
            [{"key": "a", "value": "x"}, {"key": "b", "operator": "Exists"}],
            [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}],
            id="covered-dropped",
        ),
        pytest.param(
            [{"key": "a", "value": "x", "effect": "NoSchedule"}],
            [{"operator": "Exists"}],
            [{"operator": "Exists"}],
            id="later-superset-wins",
        ),
        pytest.param(
            [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}],
            [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 120}],
            [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 120}],
            id="longer-toleration-covers-shorter",
        ),
        pytest.param(
            [{"key": "a", "operator": "Exists"}],
            [{"key": "a", "operator": "Exists"}],
            [{"key": "a", "operator": "Exists"}],
            id="equal-kept-once",
        ),
    ],
)
def test_merge_tolerations(first: list[JsonDict], second: list[JsonDict], expected: list[JsonDict]) -> None:
    assert merge_tolerations(first, second) == expected
