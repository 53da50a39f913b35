"""ValidatingAdmissionPolicy on a real server, as users meet it: a policy and its bindings
applied with kubectl 1.33, a Deployment refused (kubectl's error line, the official client's
ApiException with upstream's 422 Status), a Warn binding's Warning printed by kubectl, and a
policy whose expression does not compile refused when applied."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from minik3s.embed import Cluster
from minik3s.pytest_plugin import cluster_fixture

pytestmark = pytest.mark.usefixtures("kubectl_bin")

minik3s_cluster = cluster_fixture(scope="module", name="minik3s_cluster", nodes=1)

POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: object.spec.replicas <= 5
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas-NS}
spec:
  policyName: max-replicas
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {vap-test: NS}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: labelled}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [deployments]
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: deployments should carry a team label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: labelled-NS}
spec:
  policyName: labelled
  validationActions: [Warn]
  matchResources:
    namespaceSelector:
      matchLabels: {vap-test: NS}
"""


def kubectl(binary: Path, cluster: Cluster, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), "--kubeconfig", str(cluster.kubeconfig_path), *args], capture_output=True,
                          text=True, timeout=60, input=stdin)


def test_a_policy_refuses_and_warns_for_every_client(http: httpx.Client, kubectl_bin: Path,
                                                      minik3s_cluster: Cluster) -> None:
    ns = "vap-e2e"
    r = http.post("/api/v1/namespaces", json={"metadata": {"name": ns, "labels": {"vap-test": ns}}})
    assert r.status_code == 201, r.text
    applied = kubectl(kubectl_bin, minik3s_cluster, "apply", "-f", "-", stdin=POLICY.replace("NS", ns))
    assert applied.returncode == 0, applied.stderr
    denied = ("deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding "
              f"'max-replicas-{ns}' denied request: failed expression: object.spec.replicas <= 5")
    k = kubectl(kubectl_bin, minik3s_cluster, "create", "deployment", "big", "-n", ns, "--image", "nginx:1.27",
                "--replicas", "7")
    assert k.returncode == 1 and denied in k.stderr, k.stderr
    ok = kubectl(kubectl_bin, minik3s_cluster, "create", "deployment", "small", "-n", ns, "--image", "nginx:1.27",
                 "--replicas", "2")
    assert ok.returncode == 0, ok.stderr
    assert (f"Warning: Validation failed for ValidatingAdmissionPolicy 'labelled' with binding 'labelled-{ns}': "
            "deployments should carry a team label") in ok.stderr
    api = config.new_client_from_config(config_file=str(minik3s_cluster.kubeconfig_path))
    try:
        body = client.V1Deployment(
            metadata=client.V1ObjectMeta(name="big"),
            spec=client.V1DeploymentSpec(
                replicas=9, selector=client.V1LabelSelector(match_labels={"app": "big"}),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels={"app": "big"}),
                    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1.27")]))))
        with pytest.raises(ApiException) as e:
            client.AppsV1Api(api).create_namespaced_deployment(ns, body)
    finally:
        api.close()
    assert e.value.status == 422
    st = json.loads(e.value.body)
    assert (st["reason"], st["code"]) == ("Invalid", 422)
    assert st["message"] == denied
    assert st["details"]["causes"] == [{"message": denied.split("is forbidden: ", 1)[1]}]
    # outside the bound namespace the policy does not apply
    other = kubectl(kubectl_bin, minik3s_cluster, "create", "deployment", "big", "-n", "default", "--image",
                    "nginx:1.27", "--replicas", "7")
    assert other.returncode == 0, other.stderr


def test_a_policy_that_does_not_compile_is_refused(kubectl_bin: Path, minik3s_cluster: Cluster) -> None:
    bad = POLICY.split("---")[0].replace("object.spec.replicas <= 5", "object.spec.replicas <= (").replace(
        "max-replicas", "broken")
    k = kubectl(kubectl_bin, minik3s_cluster, "apply", "-f", "-", stdin=bad)
    assert k.returncode == 1
    assert 'spec.validations[0].expression: Invalid value: "object.spec.replicas <= (": compilation failed' \
        in k.stderr, k.stderr
