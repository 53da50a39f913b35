"""The official `kubernetes` Python client against a real minik3s server, unchanged."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from minik3s.testing.server import ServerProcess  # noqa: E402


@pytest.fixture(scope="module")
def api(minik3s_api: ServerProcess):
    api_client = config.new_client_from_config(config_file=str(minik3s_api.kubeconfig))
    yield api_client
    api_client.close()


@pytest.fixture
def namespace(api) -> str:
    name = "py-" + uuid.uuid4().hex[:8]
    client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    return name


def make_pod(name: str, labels: dict | None = None) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {"app": "demo"}),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name="c", image="nginx:1.25",
            resources=client.V1ResourceRequirements(requests={"cpu": "100m", "memory": "64Mi"}))]),
    )


def test_create_list_patch_delete(api, namespace):
    core = client.CoreV1Api(api)
    created = core.create_namespaced_pod(namespace, make_pod("p1"))
    assert created.metadata.uid and created.status.phase == "Pending"
    core.create_namespaced_pod(namespace, make_pod("p2", {"app": "other"}))
    pods = core.list_namespaced_pod(namespace, label_selector="app=demo")
    assert [p.metadata.name for p in pods.items] == ["p1"]
    # the client's default patch is a strategic merge patch (dict body)
    patched = core.patch_namespaced_pod("p1", namespace, {"metadata": {"labels": {"tier": "web"}},
                                                          "spec": {"containers": [{"name": "c", "image": "nginx:1.26"}]}})
    assert patched.metadata.labels == {"app": "demo", "tier": "web"}
    assert patched.spec.containers[0].image == "nginx:1.26"
    assert patched.spec.containers[0].resources.requests == {"cpu": "100m", "memory": "64Mi"}
    # json-patch via a list body
    patched = core.patch_namespaced_pod("p1", namespace, [{"op": "remove", "path": "/metadata/labels/tier"}])
    assert patched.metadata.labels == {"app": "demo"}
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_pod(namespace, make_pod("p1"))
    assert exc.value.status == 409
    core.delete_namespaced_pod("p1", namespace, grace_period_seconds=0)
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod("p1", namespace)
    assert exc.value.status == 404


def test_watch_stream(api, namespace):
    core = client.CoreV1Api(api)
    w = watch.Watch()
    seen: list[tuple[str, str]] = []

    def produce():
        time.sleep(0.3)
        core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm1")))
        core.patch_namespaced_config_map("cm1", namespace, {"data": {"a": "b"}})
        core.delete_namespaced_config_map("cm1", namespace)

    threading.Thread(target=produce).start()
    for ev in w.stream(core.list_namespaced_config_map, namespace, timeout_seconds=10):
        seen.append((ev["type"], ev["object"].metadata.name))
        if ev["type"] == "DELETED":
            w.stop()
    assert seen == [("ADDED", "cm1"), ("MODIFIED", "cm1"), ("DELETED", "cm1")]


def test_apps_and_custom_objects(api, namespace):
    apps = client.AppsV1Api(api)
    dep = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="d"),
        spec=client.V1DeploymentSpec(
            replicas=2, selector=client.V1LabelSelector(match_labels={"app": "d"}),
            template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels={"app": "d"}),
                                              spec=client.V1PodSpec(containers=[client.V1Container(name="c",
                                                                                                   image="nginx")]))))
    created = apps.create_namespaced_deployment(namespace, dep)
    assert created.spec.strategy.type == "RollingUpdate"
    scale = apps.patch_namespaced_deployment_scale("d", namespace, {"spec": {"replicas": 4}})
    assert scale.spec.replicas == 4
    assert apps.read_namespaced_deployment("d", namespace).spec.replicas == 4
