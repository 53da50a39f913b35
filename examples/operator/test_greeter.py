"""Tests of the example operator (greeter.py) against a real minik3s cluster, using only the
fixtures of the minik3s pytest plugin (registered by installing minik3s): what a user's operator
test suite looks like. kopf runs in a thread (kopf.testing.KopfRunner) and finds the cluster
through $KUBECONFIG, which the `kubeconfig` fixture exports for the test.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from kopf.testing import KopfRunner

HERE = Path(__file__).parent
GROUP, VERSION, PLURAL = "demo.minik3s.io", "v1", "greetings"

pytestmark = pytest.mark.minik3s(nodes=1, export_kubeconfig=True)


def eventually(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Poll until `check()` returns a truthy value (or stops raising); return it."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
            if value:
                return value
        except kubernetes.client.ApiException as e:
            if e.status != 404 or time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s (last value {value!r})")
        time.sleep(0.05)


@pytest.fixture
def operator(minik3s_cluster: Any, kubeconfig: Path, k8s_client: Any) -> Iterator[KopfRunner]:
    crd = yaml.safe_load((HERE / "crd.yaml").read_text())
    kubernetes.client.ApiextensionsV1Api(k8s_client).create_custom_resource_definition(crd)
    with KopfRunner(["run", "--standalone", "--all-namespaces", str(HERE / "greeter.py")], timeout=30) as runner:
        yield runner
    assert runner.exit_code == 0, runner.output
    assert runner.exception is None


def test_greeting_gets_a_configmap_and_status(operator: KopfRunner, k8s_client: Any, minik3s_namespace: str) -> None:
    custom = kubernetes.client.CustomObjectsApi(k8s_client)
    core = kubernetes.client.CoreV1Api(k8s_client)
    custom.create_namespaced_custom_object(GROUP, VERSION, minik3s_namespace, PLURAL, {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "Greeting", "metadata": {"name": "hi"}, "spec": {"to": "minik3s"}})

    cm = eventually(lambda: core.read_namespaced_config_map("hi-greeting", minik3s_namespace))
    assert cm.data == {"message": "Hello, minik3s!"}
    owner = cm.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.controller) == ("Greeting", "hi", True)
    status = eventually(lambda: custom.get_namespaced_custom_object(
        GROUP, VERSION, minik3s_namespace, PLURAL, "hi").get("status", {}).get("create_configmap"))
    assert status == {"message": "Hello, minik3s!", "configMap": "hi-greeting"}

    # a spec change reaches the ConfigMap
    custom.patch_namespaced_custom_object(GROUP, VERSION, minik3s_namespace, PLURAL, "hi", {"spec": {"to": "you"}})
    eventually(lambda: core.read_namespaced_config_map("hi-greeting", minik3s_namespace).data
               == {"message": "Hello, you!"})


def test_deleting_a_greeting_runs_its_finalizer_and_removes_the_configmap(operator: KopfRunner, k8s_client: Any,
                                                          minik3s_namespace: str) -> None:
    custom = kubernetes.client.CustomObjectsApi(k8s_client)
    core = kubernetes.client.CoreV1Api(k8s_client)
    custom.create_namespaced_custom_object(GROUP, VERSION, minik3s_namespace, PLURAL, {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "Greeting", "metadata": {"name": "bye"}, "spec": {}})
    cm = eventually(lambda: core.read_namespaced_config_map("bye-greeting", minik3s_namespace))
    assert cm.data == {"message": "Hello, world!"}
    greeting = custom.get_namespaced_custom_object(GROUP, VERSION, minik3s_namespace, PLURAL, "bye")
    assert "kopf.zalando.org/KopfFinalizerMarker" in greeting["metadata"]["finalizers"]

    custom.delete_namespaced_custom_object(GROUP, VERSION, minik3s_namespace, PLURAL, "bye")

    def gone(read: Callable[[], Any]) -> bool:
        try:
            read()
        except kubernetes.client.ApiException as e:
            return e.status == 404
        return False

    # the API keeps the Greeting (deletionTimestamp set) until kopf's handler removed its finalizer
    eventually(lambda: gone(lambda: core.read_namespaced_config_map("bye-greeting", minik3s_namespace)))
    eventually(lambda: gone(lambda: custom.get_namespaced_custom_object(
        GROUP, VERSION, minik3s_namespace, PLURAL, "bye")))
