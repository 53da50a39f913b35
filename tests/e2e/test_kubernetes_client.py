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

    # Watching from the list's resourceVersion: events written before the watch is registered
    # are replayed, after it streamed, so the writer need not wait for the watch to start.
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version

    def produce():
        core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm1")))
        core.patch_namespaced_config_map("cm1", namespace, {"data": {"a": "b"}})
        core.delete_namespaced_config_map("cm1", namespace)

    threading.Thread(target=produce).start()
    for ev in w.stream(core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=10):
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


def test_strategic_patch_deletes_keyed_list_items_and_keeps_the_rest(api, namespace):
    """The client's default PATCH is SMP: `$patch: delete` removes a container and an env var by
    their merge key (`name`), `$setElementOrder` reorders, unmentioned fields survive."""
    apps = client.AppsV1Api(api)
    c = client.V1Container(name="c", image="nginx:1.25",
                           env=[client.V1EnvVar(name="A", value="1"), client.V1EnvVar(name="B", value="2")],
                           ports=[client.V1ContainerPort(container_port=80), client.V1ContainerPort(container_port=443)])
    side = client.V1Container(name="side", image="busybox")
    dep = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="smp"),
        spec=client.V1DeploymentSpec(
            replicas=1, selector=client.V1LabelSelector(match_labels={"app": "smp"}),
            template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels={"app": "smp"}),
                                              spec=client.V1PodSpec(containers=[c, side]))))
    apps.create_namespaced_deployment(namespace, dep)
    patched = apps.patch_namespaced_deployment("smp", namespace, {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "c"}],
        "containers": [
            {"name": "c", "image": "nginx:1.26", "$setElementOrder/env": [{"name": "A"}],
             "env": [{"name": "B", "$patch": "delete"}],
             "ports": [{"containerPort": 443, "$patch": "delete"}]},
            {"name": "side", "$patch": "delete"}]}}}})
    containers = patched.spec.template.spec.containers
    assert [x.name for x in containers] == ["c"]
    assert containers[0].image == "nginx:1.26"
    assert [(e.name, e.value) for e in containers[0].env] == [("A", "1")]
    assert [p.container_port for p in containers[0].ports] == [80]
    assert patched.spec.template.spec.restart_policy == "Always"
    # a directive never reaches storage
    raw = apps.read_namespaced_deployment("smp", namespace, _preload_content=False).data
    assert b"$setElementOrder" not in raw and b"$patch" not in raw


def test_create_without_content_type_is_read_as_json(api, namespace):
    """The client sends POST/PUT bodies without a Content-Type header; the server reads JSON."""
    import json as _json

    import urllib3

    cfg = api.configuration
    http = urllib3.PoolManager()
    r = http.request("POST", f"{cfg.host}/api/v1/namespaces/{namespace}/configmaps",
                     body=_json.dumps({"metadata": {"name": "no-ct"}, "data": {"k": "v"}}).encode(), headers={})
    assert r.status == 201, r.data
    assert client.CoreV1Api(api).read_namespaced_config_map("no-ct", namespace).data == {"k": "v"}


def test_watch_retries_one_410_then_raises(minik3s_server_factory):
    """watch.Watch().stream without timeout_seconds: an ERROR 410 is retried once with the same
    resourceVersion; the second 410 raises ApiException(410) (kubernetes/watch/watch.py)."""
    srv = minik3s_server_factory("--disable", "scheduler", "--disable", "controllers", "--disable", "kubelet",
                                 "--history-window", "100", "--compact-interval", "0.2")
    api_client = config.new_client_from_config(config_file=str(srv.kubeconfig))
    try:
        core = client.CoreV1Api(api_client)
        first_rv = core.list_namespaced_config_map("default").metadata.resource_version
        for i in range(300):
            core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(
                name=f"churn-{i}")))
        deadline = time.monotonic() + 30
        err: ApiException | None = None
        while time.monotonic() < deadline and err is None:
            w = watch.Watch()
            try:
                for _ in w.stream(core.list_namespaced_config_map, "default", resource_version=first_rv):
                    break  # history not compacted yet: an ordinary event arrived
            except ApiException as e:
                err = e
            w.stop()
            if err is None:
                time.sleep(0.3)
        assert err is not None, "no 410 after churn"
        assert err.status == 410
        assert "too old resource version" in str(err.reason)
    finally:
        api_client.close()
