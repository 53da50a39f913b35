"""A small kopf operator, the example of docs/testing-your-operator.md.

For every `Greeting` (greetings.demo.minik3s.io/v1) it keeps a ConfigMap `<name>-greeting` whose
`data.message` says hello to `spec.to`, owned by the Greeting, and reports the message in the
Greeting's status. Deleting the Greeting runs the delete handler behind kopf's finalizer, which
deletes the ConfigMap before the Greeting goes away.

    kopf run --standalone -A examples/operator/greeter.py
"""

from __future__ import annotations

import os
from typing import Any

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "demo.minik3s.io", "v1", "greetings"


def message_for(spec: Any) -> str:
    return f"Hello, {spec.get('to') or 'world'}!"


@kopf.on.login()
def credentials(**kwargs: Any) -> kopf.ConnectionInfo | None:
    # kopf's own kubeconfig reader takes $KUBECONFIG when the operator starts (the official
    # client's default login fixes its default location at import time)
    return kopf.login_with_kubeconfig(**kwargs)


@kopf.on.startup()
def login(settings: kopf.OperatorSettings, **_: Any) -> None:
    # the handlers write through the official client, configured from $KUBECONFIG like kopf
    # itself (read now: the client's default location is fixed when it is imported)
    kubernetes.config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
    settings.posting.level = 20  # INFO and above become Events on the Greeting


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_configmap(spec: Any, name: str, namespace: str, logger: Any, **_: Any) -> dict[str, str]:
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{name}-greeting", "labels": {"app.kubernetes.io/managed-by": "greeter"}},
            "data": {"message": message_for(spec)}}
    kopf.adopt(body)  # namespace + ownerReference to the Greeting
    kubernetes.client.CoreV1Api().create_namespaced_config_map(namespace, body)
    logger.info("greeting configmap created")
    return {"message": message_for(spec), "configMap": f"{name}-greeting"}


@kopf.on.update(GROUP, VERSION, PLURAL, field="spec.to")
def update_configmap(spec: Any, name: str, namespace: str, **_: Any) -> dict[str, str]:
    kubernetes.client.CoreV1Api().patch_namespaced_config_map(
        f"{name}-greeting", namespace, {"data": {"message": message_for(spec)}})
    return {"message": message_for(spec), "configMap": f"{name}-greeting"}


@kopf.on.delete(GROUP, VERSION, PLURAL)
def delete_configmap(name: str, namespace: str, **_: Any) -> None:
    try:
        kubernetes.client.CoreV1Api().delete_namespaced_config_map(f"{name}-greeting", namespace)
    except kubernetes.client.ApiException as e:
        if e.status != 404:
            raise
