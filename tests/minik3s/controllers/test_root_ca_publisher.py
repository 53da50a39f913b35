"""Root CA publisher: every namespace holds `kube-root-ca.crt` with the cluster CA, restored
when deleted or edited, as kube-controller-manager's root-ca-certificate-publisher keeps it."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import aiohttp
import pytest

from minik3s.api.errors import NotFoundError
from minik3s.api.resources import CONFIGMAPS, NAMESPACES
from minik3s.config import ServerConfig
from minik3s.controllers.namespace import NamespaceController
from minik3s.controllers.root_ca_publisher import DESCRIPTION, DESCRIPTION_ANNOTATION, RootCACertPublisher
from minik3s.pki import Pki
from minik3s.server import build_components, start, stop

CA = "-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n"
NAME = "kube-root-ca.crt"


async def _published(harness, namespace):
    async def check():
        cm = await harness.client.get(CONFIGMAPS, NAME, namespace)
        ok = cm.get("data") == {"ca.crt": CA} and cm["metadata"].get("annotations", {}).get(DESCRIPTION_ANNOTATION)
        return cm if ok else None

    return await harness.eventually(check, what=f"{namespace}/{NAME} published")


async def test_every_namespace_gets_the_ca_bundle_with_its_description(harness):
    ctl = RootCACertPublisher(harness.client, harness.informers, root_ca=CA)
    harness.start(ctl.run)
    await harness.client.create(NAMESPACES, {"metadata": {"name": "team"}})
    for ns in ("default", "kube-system", "kube-public", "team"):
        cm = await _published(harness, ns)
        assert cm["metadata"]["annotations"] == {DESCRIPTION_ANNOTATION: DESCRIPTION}
        assert cm["metadata"]["name"] == NAME and cm["metadata"]["namespace"] == ns


async def test_a_deleted_or_edited_bundle_is_restored_keeping_other_annotations(harness):
    ctl = RootCACertPublisher(harness.client, harness.informers, root_ca=CA)
    harness.start(ctl.run)
    first = await _published(harness, "default")
    await harness.client.delete(CONFIGMAPS, NAME, "default")
    again = await _published(harness, "default")
    assert again["metadata"]["uid"] != first["metadata"]["uid"]

    def edit(cm):
        cm["data"] = {"ca.crt": "tampered", "extra": "x"}
        cm["binaryData"] = {"blob": "AAEC"}
        cm["metadata"]["annotations"] = {"team": "a"}

    edited = await harness.mutate(CONFIGMAPS, NAME, edit)
    restored = await _published(harness, "default")
    assert int(restored["metadata"]["resourceVersion"]) > int(edited["metadata"]["resourceVersion"])
    assert restored["data"] == {"ca.crt": CA}
    assert restored["binaryData"] == {"blob": "AAEC"}  # not the publisher's: left as it was
    assert restored["metadata"]["annotations"] == {"team": "a", DESCRIPTION_ANNOTATION: DESCRIPTION}


async def test_an_untouched_bundle_is_not_rewritten(harness):
    ctl = RootCACertPublisher(harness.client, harness.informers, root_ca=CA)
    harness.start(ctl.run)
    cm = await _published(harness, "default")
    await ctl.sync("default")  # in sync with the cache: no write
    assert (await harness.client.get(CONFIGMAPS, NAME, "default"))["metadata"]["resourceVersion"] == \
        cm["metadata"]["resourceVersion"]


async def test_a_terminating_namespace_is_emptied_and_removed_despite_the_publisher(harness):
    publisher = RootCACertPublisher(harness.client, harness.informers, root_ca=CA)
    namespaces = NamespaceController(harness.client, harness.informers, recheck_delay=0.05)
    harness.start(publisher.run, namespaces.run)
    await harness.client.create(NAMESPACES, {"metadata": {"name": "gone"}})
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}, "gone")
    await _published(harness, "gone")
    await harness.client.delete(NAMESPACES, "gone")

    async def only_held_left():
        names = [c["metadata"]["name"] for c in (await harness.client.list(CONFIGMAPS, "gone"))["items"]]
        return names == ["held"]

    await harness.eventually(only_held_left, what="the namespace emptied but for the held ConfigMap")
    await publisher.sync("gone")  # the create is refused (terminating): done, not an error to retry
    assert await only_held_left()
    await harness.client.patch(CONFIGMAPS, "held", {"metadata": {"finalizers": None}}, "gone")

    await harness.eventually(lambda: harness.gone(NAMESPACES, "gone", None), what="namespace removed")


@pytest.mark.parametrize("tls", [pytest.param(True, id="tls-publishes-the-server-ca"),
                                 pytest.param(False, id="plain-http-publishes-the-loopback-tls-ca")])
async def test_the_server_publishes_the_ca_it_serves_with(tmp_path: Path, tls: bool) -> None:
    cfg = ServerConfig(data_dir=tmp_path / "srv", port=0, tls=tls, nodes="0",
                       disable={"scheduler", "kubelet", "descheduler"})
    rs = await start(cfg)
    tasks = [asyncio.create_task(run()) for name, run in build_components(rs)
             if name in ("informers", "root-ca-cert-publisher")]
    try:
        # on plain HTTP: the CA of the loopback listener's TLS side, as K3s' clients verify it
        ca = rs.pki.server_ca_cert if tls else Pki.under(cfg.data_dir).server_ca_cert
        expected = ca.read_text()
        assert expected.startswith("-----BEGIN CERTIFICATE-----")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while True:
            try:
                cm = await rs.client.get(CONFIGMAPS, NAME, "kube-system")
            except NotFoundError:
                cm = None
            if cm is not None:
                break
            assert loop.time() < deadline, "kube-system/kube-root-ca.crt never published"
            await asyncio.sleep(0.02)
        assert cm["data"] == {"ca.crt": expected}
        assert cm["metadata"]["managedFields"][0]["manager"] == "kube-controller-manager"
        if not tls:  # the published bundle verifies the server's TLS side on the same port
            port = rs.url.rsplit(":", 1)[1]
            ctx = ssl.create_default_context(cadata=cm["data"]["ca.crt"])
            async with aiohttp.ClientSession() as session, \
                    session.get(f"https://127.0.0.1:{port}/version", ssl=ctx) as resp:
                assert resp.status == 200 and (await resp.json())["major"] == "1"
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await stop(rs)
