"""A `minik3s server` process restarted on its data directory serves the same state byte for
byte: LISTs (unpaged, paged with continue tokens, Table), GETs and the watch history replayed
from an old resourceVersion, resourceVersions included; then writes continue from the same
revision. The one write a restart makes, kube-apiserver's identity Lease renewal (as upstream's
lease controller renews at start), moves the revision a list reports and its continue tokens
carry by one: those are compared with that offset, after checking it is the only write. The store keeps the loaded rows as bytes and decodes objects on first read or in the
background after the restart (apiserver/storage/sqlite_store.py), so the reads below come both
before and after that decoding."""

from __future__ import annotations

import concurrent.futures
import socket
import threading
from typing import Any

import httpx

API_ONLY = ("--disable", "scheduler", "--disable", "controllers", "--disable", "kubelet",
            "--disable", "descheduler")
NAMESPACES = ("default", "restart-a", "restart-b")
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def pod(name: str, ns: str, i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": {"i": str(i % 5)}},
            "spec": {"nodeName": f"node-{i % 7}", "containers": [{
                "name": "c", "image": "registry.k8s.io/pause:3.9",
                "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


def fill(url: str) -> str:
    """~600 pods and 100 ConfigMaps over three namespaces, some updated twice, some deleted;
    the resourceVersion of a point early in the history."""
    with httpx.Client(base_url=url, timeout=30) as c:
        for ns in NAMESPACES[1:]:
            c.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).raise_for_status()

    clients: list[httpx.Client] = []
    local = threading.local()

    def create(i: int) -> None:  # 8 writers at once, each on its own kept-alive connection
        ns = NAMESPACES[i % 3]
        c = getattr(local, "client", None)
        if c is None:
            c = local.client = httpx.Client(base_url=url, timeout=30)
            clients.append(c)
        c.post(f"/api/v1/namespaces/{ns}/pods", json=pod(f"p-{i:04d}", ns, i)).raise_for_status()
        if i % 6 == 0:
            c.post(f"/api/v1/namespaces/{ns}/configmaps",
                   json={"metadata": {"name": f"cm-{i}"}, "data": {"k": "v" * (i % 50)}}).raise_for_status()

    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(create, range(300)))
    with httpx.Client(base_url=url, timeout=30) as c:
        early = c.get("/api/v1/pods", params={"limit": 1}).json()["metadata"]["resourceVersion"]
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(create, range(300, 600)))
    for client in clients:
        client.close()
    with httpx.Client(base_url=url, timeout=30) as c:
        for i in range(0, 600, 9):
            ns = NAMESPACES[i % 3]
            for v in ("1", "2"):
                c.patch(f"/api/v1/namespaces/{ns}/pods/p-{i:04d}", json={"metadata": {"annotations": {"v": v}}},
                        headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()
        for i in range(1, 600, 13):
            c.delete(f"/api/v1/namespaces/{NAMESPACES[i % 3]}/pods/p-{i:04d}",
                     params={"gracePeriodSeconds": 0}).raise_for_status()
    return early


def snapshot(url: str, early: str) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    with httpx.Client(base_url=url, timeout=30) as c:
        # single objects first: on the restarted server they are decoded on this first read
        for i in (0, 9, 10, 598):
            out[f"get {i}"] = c.get(f"/api/v1/namespaces/{NAMESPACES[i % 3]}/pods/p-{i:04d}").content
        out["pods"] = c.get("/api/v1/pods").content
        out["configmaps"] = c.get("/api/v1/configmaps").content
        out["pods restart-a"] = c.get("/api/v1/namespaces/restart-a/pods", params={"labelSelector": "i=3"}).content
        params: dict[str, Any] = {"limit": 70}
        page = 0
        while True:
            r = c.get("/api/v1/pods", params=params)
            out[f"page {page}"] = r.content
            cont = r.json()["metadata"].get("continue")
            if not cont:
                break
            params = {"limit": 70, "continue": cont}
            page += 1
        out["table"] = c.get("/api/v1/namespaces/restart-b/pods", headers={"Accept": TABLE}).content
        # the history after `early`, as a resumed watch replays it (the server ends it after 1 s)
        with c.stream("GET", "/api/v1/pods", params={"watch": "1", "resourceVersion": early,
                                                      "timeoutSeconds": "1"}) as w:
            out["watch"] = b"".join(w.iter_bytes())
    return out


def shifted(body: bytes, offset: int) -> bytes:
    """A list body as the server would serve it `offset` revisions earlier: its
    metadata.resourceVersion and the revision inside its continue token (objects' own
    resourceVersions are untouched). Other bodies unchanged."""
    import base64

    import orjson

    if not body.startswith(b"{") or b'"kind":"PodList"' not in body and b'"kind":"ConfigMapList"' not in body \
            and b'"kind":"Table"' not in body:
        return body
    doc = orjson.loads(body)
    meta = doc.get("metadata") or {}
    if "resourceVersion" in meta:
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) - offset)
    if meta.get("continue"):
        raw = meta["continue"]
        token = orjson.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        token["rv"] = int(token["rv"]) - offset
        meta["continue"] = base64.urlsafe_b64encode(orjson.dumps(token)).decode().rstrip("=")
    return orjson.dumps(doc)


def without_table_ages(body: bytes) -> Any:
    """A Table's AGE cells change with the clock; everything else must not."""
    import orjson

    doc = orjson.loads(body)
    age = [i for i, col in enumerate(doc["columnDefinitions"]) if col["name"] == "Age"][0]
    for row in doc["rows"]:
        row["cells"][age] = None
    return doc


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_restarted_server_serves_the_same_state_byte_for_byte(minik3s_server_factory: Any) -> None:
    # one fixed port for both runs: restarted on another one, the server would (as kube-apiserver's
    # endpoint reconciler does) rewrite the `kubernetes` Endpoints/EndpointSlice, a legitimate write
    srv = minik3s_server_factory(*API_ONLY, "--port", str(_free_port()))
    early = fill(srv.url)
    before = snapshot(srv.url, early)
    assert before["watch"].count(b"\n") == 300 + 2 * 67 + 47  # creates, patches and deletes after `early`
    assert b'"continue"' in before["page 0"] and "page 7" in before  # 553 pods in pages of 70

    with httpx.Client(base_url=srv.url, timeout=30) as c:
        stopped_at = int(c.get("/api/v1/pods", params={"limit": 1}).json()["metadata"]["resourceVersion"])
    srv.stop()
    srv.start()
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        # what the restart wrote: only the API server's identity Lease
        with c.stream("GET", "/apis/coordination.k8s.io/v1/leases", params={
                "watch": "1", "resourceVersion": str(stopped_at), "timeoutSeconds": "1"}) as w:
            import orjson
            written = [orjson.loads(line) for line in b"".join(w.iter_bytes()).splitlines() if line]
        now = int(c.get("/api/v1/pods", params={"limit": 1}).json()["metadata"]["resourceVersion"])
    assert [(e["type"], e["object"]["metadata"]["name"].startswith("apiserver-")) for e in written] == \
        [("MODIFIED", True)] * len(written)
    offset = now - stopped_at
    assert offset == len(written) <= 1
    after = snapshot(srv.url, early)
    assert after.keys() == before.keys()
    assert without_table_ages(shifted(after.pop("table"), offset)) == without_table_ages(before.pop("table"))
    for name, body in before.items():
        if name == "watch" or name.startswith("get ") or not offset:
            assert after[name] == body, name  # objects and the replayed history: byte for byte
        else:
            assert orjson.loads(shifted(after[name], offset)) == orjson.loads(body), name
    # a second pass (the background decoding has run or is running by now) reads the same again
    again = snapshot(srv.url, early)
    again.pop("table")
    assert again == after

    with httpx.Client(base_url=srv.url, timeout=30) as c:
        list_rv = int(c.get("/api/v1/pods").json()["metadata"]["resourceVersion"])
        created = c.post("/api/v1/namespaces/default/pods", json=pod("after", "default", 1))
        assert created.status_code == 201
        assert int(created.json()["metadata"]["resourceVersion"]) == list_rv + 1
        r = c.patch("/api/v1/namespaces/restart-a/pods/p-0010", json={"metadata": {"labels": {"x": "y"}}},
                    headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 200 and r.json()["metadata"]["labels"] == {"i": "0", "x": "y"}


def test_a_restart_reconciles_the_bootstrap_rbac_policy(minik3s_server_factory: Any) -> None:
    """kube-apiserver's bootstrap-roles reconciliation at start: a bootstrap role that lost a rule
    gets it back (the atomic rules it no longer covers appended; what was added kept), a binding
    that lost a subject gets it back, a deleted one is recreated, and an object annotated
    `rbac.authorization.kubernetes.io/autoupdate: "false"` is left as it is."""
    srv = minik3s_server_factory(*API_ONLY, "--port", str(_free_port()))
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        view = c.get(f"{rbac}/clusterroles/system:aggregate-to-view").json()
        original = view["rules"]
        view["rules"] = [r for r in original if "pods" not in r.get("resources", [])] + [
            {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}]
        c.put(f"{rbac}/clusterroles/system:aggregate-to-view", json=view).raise_for_status()
        disc = c.get(f"{rbac}/clusterroles/system:discovery").json()
        disc["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
        disc["rules"] = [{"nonResourceURLs": ["/version"], "verbs": ["get"]}]
        c.put(f"{rbac}/clusterroles/system:discovery", json=disc).raise_for_status()
        crb = c.get(f"{rbac}/clusterrolebindings/system:public-info-viewer").json()
        crb["subjects"] = crb["subjects"][:1]
        c.put(f"{rbac}/clusterrolebindings/system:public-info-viewer", json=crb).raise_for_status()
        c.delete(f"{rbac}/namespaces/kube-system/roles/system:controller:token-cleaner").raise_for_status()
    srv.stop()
    srv.start()
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        rules = c.get(f"{rbac}/clusterroles/system:aggregate-to-view").json()["rules"]
        assert {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]} in rules  # kept
        restored = [r for r in rules if any(x.startswith("pods") for x in r.get("resources", []))]
        assert restored and all(len(r["verbs"]) == 1 and len(r["resources"]) == 1 for r in restored)  # atoms
        assert {(r["verbs"][0], r["resources"][0]) for r in restored} >= {("get", "pods"), ("watch", "pods/log")}
        disc = c.get(f"{rbac}/clusterroles/system:discovery").json()
        assert disc["rules"] == [{"nonResourceURLs": ["/version"], "verbs": ["get"]}]
        subjects = c.get(f"{rbac}/clusterrolebindings/system:public-info-viewer").json()["subjects"]
        assert [s["name"] for s in subjects] == ["system:authenticated", "system:unauthenticated"]
        role = c.get(f"{rbac}/namespaces/kube-system/roles/system:controller:token-cleaner")
        assert role.status_code == 200
