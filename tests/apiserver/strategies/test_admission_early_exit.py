"""Built-in admission's early exits: a pod that needs no change from ServiceAccount,
DefaultTolerationSeconds or RuntimeClass leaves each plugin before its full path, and the
admitted object is byte for byte what the full paths produce. On the real API's lookup
(`real_api`: RuntimeClasses, PriorityClasses and namespaces written through the in-process
client)."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from apiserver.strategies import admission
from minik3s.api.errors import ForbiddenError
from minik3s.api.resources import PRIORITYCLASSES, RUNTIMECLASSES
from minik3s.api.types import JsonDict

NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
               "tolerationSeconds": 300}
GPU = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}


def pod(**spec: Any) -> JsonDict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


async def full_path(obj: JsonDict, lookup: admission.Lookup) -> None:
    """The plugins' chain for a pod create with every full path taken."""
    admission.admit_namespace_lifecycle("", "Pod", "CREATE", obj, lookup)
    spec = obj["spec"]
    admission._resolve_service_account(spec)
    admission.admit_pod_priority(obj, lookup)
    admission._add_default_tolerations(spec, spec.get("tolerations"))
    admission._admit_runtime_class_full(obj, spec, lookup)


SA = {"serviceAccountName": "default", "serviceAccount": "default"}
BOTH = [NOT_READY, UNREACHABLE]

# (spec, plugins whose full path runs: service account, tolerations, runtime class)
CASES: list[Any] = [
    pytest.param({**SA, "tolerations": BOTH}, set(), id="admitted-before: all exits"),
    pytest.param({**SA, "tolerations": [GPU, UNREACHABLE, NOT_READY]}, set(), id="defaults among others"),
    pytest.param({"tolerations": BOTH}, {"sa"}, id="no service account"),
    pytest.param({"serviceAccountName": "robot", "tolerations": BOTH}, {"sa"}, id="deprecated mirror unset"),
    pytest.param({"serviceAccount": "legacy", "tolerations": BOTH}, {"sa"}, id="only the deprecated field"),
    pytest.param({"serviceAccountName": "a", "serviceAccount": "b", "tolerations": BOTH}, {"sa"},
                 id="mirror disagrees"),
    pytest.param({**SA}, {"tol"}, id="no tolerations"),
    pytest.param({**SA, "tolerations": [NOT_READY]}, {"tol"}, id="one default"),
    pytest.param({**SA, "tolerations": [{**NOT_READY, "tolerationSeconds": 60}, UNREACHABLE]}, {"tol"},
                 id="other seconds"),
    pytest.param({**SA, "tolerations": [{"operator": "Exists"}]}, {"tol"}, id="wildcard toleration"),
    pytest.param({**SA, "tolerations": BOTH, "runtimeClassName": "kata"}, {"rc"}, id="runtime class"),
    pytest.param({**SA, "tolerations": BOTH, "runtimeClassName": "kata", "overhead": {"cpu": "250m"}}, {"rc"},
                 id="runtime class with its overhead"),
    pytest.param({**SA, "tolerations": BOTH, "runtimeClassName": ""}, set(), id="empty runtime class name"),
    pytest.param({"priorityClassName": "high"}, {"sa", "tol"}, id="priority class"),
]


@pytest.fixture
async def lookup(real_api: Any) -> admission.Lookup:
    c = real_api._client
    await c.create(RUNTIMECLASSES, {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                                    "metadata": {"name": "kata"}, "handler": "kata",
                                    "overhead": {"podFixed": {"cpu": "250m"}},
                                    "scheduling": {"nodeSelector": {"sandbox": "kata"},
                                                   "tolerations": [GPU]}})
    await c.create(PRIORITYCLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                     "metadata": {"name": "high"}, "value": 1000})
    return real_api.core.lookup  # type: ignore[no-any-return]


@pytest.mark.parametrize(("spec", "full"), CASES)
async def test_the_early_exit_admits_what_the_full_path_admits(lookup, monkeypatch, spec, full):
    ran: set[str] = set()
    for tag, fn_name in (("sa", "_resolve_service_account"), ("tol", "_add_default_tolerations"),
                         ("rc", "_admit_runtime_class_full")):
        real = getattr(admission, fn_name)

        def spy(*args: Any, _real: Any = real, _tag: str = tag) -> Any:
            ran.add(_tag)
            return _real(*args)
        monkeypatch.setattr(admission, fn_name, spy)
    admitted = pod(**copy.deepcopy(spec))
    await admission.admit("", "Pod", "CREATE", admitted, None, lookup)
    assert ran == full
    monkeypatch.undo()
    expected = pod(**copy.deepcopy(spec))
    await full_path(expected, lookup)
    assert orjson.dumps(admitted) == orjson.dumps(expected)  # same content, same key order


@pytest.mark.parametrize(("spec", "message"), [
    pytest.param({"overhead": {"cpu": "1"}}, "Pod Overhead set without corresponding RuntimeClass", id="overhead"),
    pytest.param({"runtimeClassName": "missing"}, 'RuntimeClass "missing" not found', id="unknown class"),
    pytest.param({"runtimeClassName": "kata", "overhead": {"cpu": "1"}}, "doesn't match", id="other overhead"),
])
async def test_bad_pods_are_refused_on_either_path(lookup, spec, message):
    for run in (lambda o: admission.admit("", "Pod", "CREATE", o, None, lookup), lambda o: full_path(o, lookup)):
        with pytest.raises(ForbiddenError, match=message):
            await run(pod(**SA, tolerations=BOTH, **copy.deepcopy(spec)))
