"""The ServiceAccount admission plugin on the real in-process API (ApiCore + LocalClient):
defaulting to `default`, the account's existence (and the wait for `default`), the projected
`kube-api-access-*` volume and its mounts, automount opt-outs, pull secrets, mountable-secret
enforcement and mirror pods. Upstream: plugin/pkg/admission/serviceaccount."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from apiserver.strategies import ServiceAccountAdmission
from minik3s.api.errors import ForbiddenError, NotFoundError
from minik3s.api.resources import NAMESPACES, PODS, SERVICEACCOUNTS
from minik3s.api.types import JsonDict

TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME_SOURCE = {
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ],
    "defaultMode": 420,
}
NAME = re.compile(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}\Z")


class Sleeps:
    """The plugin's sleep: counts the waits and runs `on_sleep(n)` at each (n from 1)."""

    def __init__(self, on_sleep: Any = None) -> None:
        self.seconds: list[float] = []
        self.on_sleep = on_sleep

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)
        if self.on_sleep is not None:
            await self.on_sleep(len(self.seconds))


@pytest.fixture
def sleeps(real_api: Any) -> Sleeps:
    s = Sleeps()
    real_api.core.service_accounts = ServiceAccountAdmission(random.Random(3), s)
    return s


def pod(name: str = "p", namespace: str = "default", **spec: Any) -> JsonDict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


def sa(name: str = "default", namespace: str = "default", **fields: Any) -> JsonDict:
    annotations = fields.pop("annotations", None)
    meta: JsonDict = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta, **fields}


async def create(real_api: Any, obj: JsonDict) -> JsonDict:
    return await real_api._client.create(PODS, obj)  # type: ignore[no-any-return]


async def test_a_pod_without_an_account_runs_as_default_and_mounts_a_projected_token(real_api: Any,
                                                                                      sleeps: Sleeps) -> None:
    await real_api._client.create(SERVICEACCOUNTS, sa())
    p = await create(real_api, pod(initContainers=[{"name": "init", "image": "i"}]))
    spec = p["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    [vol] = spec["volumes"]
    assert NAME.match(vol["name"]), vol["name"]
    assert vol == {"name": vol["name"], "projected": TOKEN_VOLUME_SOURCE}
    mount = {"name": vol["name"], "readOnly": True, "mountPath": TOKEN_PATH}
    assert spec["containers"][0]["volumeMounts"] == [mount]
    assert spec["initContainers"][0]["volumeMounts"] == [mount]
    assert "imagePullSecrets" not in spec
    assert sleeps.seconds == []  # found at once: no wait
    # what admission added belongs to no manager (upstream records the creator's fields first)
    [entry] = p["metadata"]["managedFields"]
    owned = entry["fieldsV1"]["f:spec"]
    assert "f:volumes" not in owned and "f:serviceAccountName" not in owned and "f:tolerations" not in owned
    assert "f:volumeMounts" not in owned["f:containers"]['k:{"name":"c"}']


async def test_existing_mounts_at_the_token_path_and_an_existing_token_volume_are_kept(real_api: Any,
                                                                                        sleeps: Sleeps) -> None:
    await real_api._client.create(SERVICEACCOUNTS, sa())
    own = {"name": "mine", "mountPath": TOKEN_PATH}
    p = await create(real_api, pod(containers=[{"name": "a", "image": "i", "volumeMounts": [own]},
                                               {"name": "b", "image": "i"}],
                                   volumes=[{"name": "mine", "emptyDir": {}}]))
    vols = p["spec"]["volumes"]
    assert [v["name"] for v in vols][0] == "mine" and len(vols) == 2
    assert p["spec"]["containers"][0]["volumeMounts"] == [own]  # its own mount wins
    assert p["spec"]["containers"][1]["volumeMounts"] == [
        {"name": vols[1]["name"], "readOnly": True, "mountPath": TOKEN_PATH}]

    # every container already has something at the path: no token volume at all
    p = await create(real_api, pod("q", containers=[{"name": "a", "image": "i", "volumeMounts": [own]}],
                                   volumes=[{"name": "mine", "emptyDir": {}}]))
    assert [v["name"] for v in p["spec"]["volumes"]] == ["mine"]

    # a kube-api-access-* volume the pod brings is the one mounted, not a second
    mine = {"name": "kube-api-access-abcde", "emptyDir": {}}
    p = await create(real_api, pod("r", volumes=[mine]))
    assert p["spec"]["volumes"] == [mine]
    assert p["spec"]["containers"][0]["volumeMounts"] == [
        {"name": "kube-api-access-abcde", "readOnly": True, "mountPath": TOKEN_PATH}]


@pytest.mark.parametrize(("pod_pref", "sa_pref", "mounted"), [
    pytest.param(False, None, False, id="pod opts out"),
    pytest.param(None, False, False, id="account opts out"),
    pytest.param(True, False, True, id="pod wins over account"),
    pytest.param(False, True, False, id="pod out, account in"),
])
async def test_automount_preferences(real_api: Any, sleeps: Sleeps, pod_pref: bool | None, sa_pref: bool | None,
                                     mounted: bool) -> None:
    extra = {} if sa_pref is None else {"automountServiceAccountToken": sa_pref}
    await real_api._client.create(SERVICEACCOUNTS, sa("robot", **extra))
    spec: JsonDict = {"serviceAccountName": "robot"}
    if pod_pref is not None:
        spec["automountServiceAccountToken"] = pod_pref
    p = await create(real_api, pod(**spec))
    assert ("volumes" in p["spec"]) is mounted
    assert ("volumeMounts" in p["spec"]["containers"][0]) is mounted
    assert p["spec"]["serviceAccountName"] == "robot"


async def test_a_missing_named_account_is_refused_at_once_and_nothing_is_stored(real_api: Any,
                                                                                sleeps: Sleeps) -> None:
    with pytest.raises(ForbiddenError) as e:
        await create(real_api, pod(serviceAccountName="robot"))
    assert str(e.value) == ('pods "p" is forbidden: error looking up service account default/robot: '
                            'serviceaccount "robot" not found')
    assert e.value.code == 403 and e.value.details == {"name": "p", "kind": "pods"}
    assert sleeps.seconds == []  # one read only for a named account
    with pytest.raises(NotFoundError):
        await real_api._client.get(PODS, "p", "default")
    # a generateName pod is named by its prefix: its name is generated after mutating admission
    body = pod(serviceAccountName="robot")
    body["metadata"] = {"generateName": "web-", "namespace": "default"}
    with pytest.raises(ForbiddenError) as e:
        await create(real_api, body)
    assert str(e.value) == ('pods "web-" is forbidden: error looking up service account default/robot: '
                            'serviceaccount "robot" not found')
    assert e.value.details == {"name": "web-", "kind": "pods"}


async def test_default_is_waited_for_then_refused(real_api: Any, sleeps: Sleeps) -> None:
    with pytest.raises(ForbiddenError, match='serviceaccount "default" not found'):
        await create(real_api, pod())
    assert len(sleeps.seconds) == 9  # ten reads in all
    assert len(set(sleeps.seconds)) == 1 and 0.1 <= sleeps.seconds[0] < 0.2


async def test_default_created_during_the_wait_admits_the_pod(real_api: Any) -> None:
    async def controller(n: int) -> None:
        if n == 3:  # the ServiceAccount controller catches up with the new namespace
            await real_api._client.create(SERVICEACCOUNTS, sa(namespace="fresh"))

    sleeps = Sleeps(controller)
    real_api.core.service_accounts = ServiceAccountAdmission(random.Random(3), sleeps)
    await real_api._client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}})
    p = await create(real_api, pod(namespace="fresh"))
    assert len(sleeps.seconds) == 3
    assert p["spec"]["serviceAccountName"] == "default" and p["spec"]["volumes"]


async def test_the_accounts_pull_secrets_go_to_a_pod_without_its_own(real_api: Any, sleeps: Sleeps) -> None:
    await real_api._client.create(SERVICEACCOUNTS, sa(imagePullSecrets=[{"name": "registry"}]))
    p = await create(real_api, pod())
    assert p["spec"]["imagePullSecrets"] == [{"name": "registry"}]
    p = await create(real_api, pod("q", imagePullSecrets=[{"name": "mine"}]))
    assert p["spec"]["imagePullSecrets"] == [{"name": "mine"}]


async def test_the_deprecated_field_names_the_account(real_api: Any, sleeps: Sleeps) -> None:
    await real_api._client.create(SERVICEACCOUNTS, sa("legacy"))
    p = await create(real_api, pod(serviceAccount="legacy"))
    assert p["spec"]["serviceAccountName"] == p["spec"]["serviceAccount"] == "legacy"


ENFORCED = {"kubernetes.io/enforce-mountable-secrets": "true"}


@pytest.mark.parametrize(("spec", "message"), [
    pytest.param({"volumes": [{"name": "s", "secret": {"secretName": "other"}}]},
                 'volume with secret.secretName="other" is not allowed because service account robot does not '
                 'reference that secret', id="secret volume"),
    pytest.param({"containers": [{"name": "c", "image": "i", "env": [
        {"name": "PW", "valueFrom": {"secretKeyRef": {"name": "other", "key": "k"}}}]}]},
                 'container c with envVar PW referencing secret.secretName="other" is not allowed because service '
                 'account robot does not reference that secret', id="env"),
    pytest.param({"imagePullSecrets": [{"name": "pull"}, {"name": "other"}]},
                 'imagePullSecrets[1].name="other" is not allowed because service account robot does not '
                 'reference that imagePullSecret', id="pull secret"),
])
async def test_an_account_enforcing_mountable_secrets_limits_the_pods_secrets(real_api: Any, sleeps: Sleeps,
                                                                              spec: JsonDict, message: str) -> None:
    await real_api._client.create(SERVICEACCOUNTS, sa("robot", annotations=ENFORCED, secrets=[{"name": "ok"}],
                                                      imagePullSecrets=[{"name": "pull"}]))
    with pytest.raises(ForbiddenError) as e:
        await create(real_api, pod(serviceAccountName="robot", **spec))
    assert str(e.value) == f'pods "p" is forbidden: {message}'
    # the listed ones pass
    p = await create(real_api, pod("q", serviceAccountName="robot",
                                   volumes=[{"name": "s", "secret": {"secretName": "ok"}}]))
    assert p["spec"]["volumes"][0]["name"] == "s"


MIRROR = {"kubernetes.io/config.mirror": "hash"}


@pytest.mark.parametrize(("spec", "message"), [
    pytest.param({"serviceAccountName": "default"}, "a mirror pod may not reference service accounts", id="account"),
    pytest.param({"volumes": [{"name": "s", "secret": {"secretName": "x"}}]},
                 "a mirror pod may not reference secrets", id="secret volume"),
    pytest.param({"containers": [{"name": "c", "image": "i", "envFrom": [{"secretRef": {"name": "x"}}]}]},
                 "a mirror pod may not reference secrets", id="envFrom"),
    pytest.param({"volumes": [{"name": "t", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]},
                 "a mirror pod may not use ServiceAccountToken volume projections", id="token projection"),
])
async def test_mirror_pods_are_checked_not_changed(real_api: Any, sleeps: Sleeps, spec: JsonDict,
                                                   message: str) -> None:
    bad = pod(**spec)
    bad["metadata"]["annotations"] = MIRROR
    with pytest.raises(ForbiddenError, match=re.escape(message)):
        await create(real_api, bad)
    good = pod("q", nodeName="n1")  # a mirror pod names its node (ValidatePodSpecificAnnotations)
    good["metadata"]["annotations"] = MIRROR
    p = await create(real_api, good)  # no account needed: none exists in this namespace
    assert "serviceAccountName" not in p["spec"] and "volumes" not in p["spec"]


async def test_without_the_plugin_a_pod_keeps_no_account(real_api: Any) -> None:
    """As kube-apiserver with --disable-admission-plugins=ServiceAccount: no default, no volume."""
    assert real_api.core.service_accounts is None
    p = await create(real_api, pod())
    assert "serviceAccountName" not in p["spec"] and "volumes" not in p["spec"]
    p = await create(real_api, pod("q", serviceAccount="legacy"))  # the conversion still mirrors
    assert p["spec"]["serviceAccountName"] == "legacy"
