"""The API server over real HTTP: CRUD, selectors, pagination, conflicts, patches, subresources."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest

from minik3s.testing.server import ServerProcess


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess):
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


def pod(name: str, *, labels: dict | None = None, node: str | None = None, cpu: str = "100m", **spec) -> dict:
    body = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25",
                                 "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}], **spec},
    }
    if node:
        body["spec"]["nodeName"] = node
    return body


def ns(http: httpx.Client) -> str:
    name = "t-" + uuid.uuid4().hex[:8]
    r = http.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert r.status_code == 201, r.text
    return name


def test_health_version_and_default_namespaces(http):
    assert http.get("/readyz").status_code == 200
    assert http.get("/healthz").text == "ok"
    v = http.get("/version").json()
    assert v["major"] == "1" and v["minor"] == "33" and v["gitVersion"].startswith("v1.33")
    names = {n["metadata"]["name"] for n in http.get("/api/v1/namespaces").json()["items"]}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names


def test_create_get_defaults_and_already_exists(http):
    n = ns(http)
    r = http.post(f"/api/v1/namespaces/{n}/pods", json=pod("web"))
    assert r.status_code == 201, r.text
    obj = r.json()
    meta = obj["metadata"]
    assert meta["namespace"] == n and meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert int(meta["resourceVersion"]) > 0
    assert obj["spec"]["restartPolicy"] == "Always"
    assert obj["spec"]["schedulerName"] == "default-scheduler"
    assert obj["spec"]["terminationGracePeriodSeconds"] == 30
    assert obj["status"]["phase"] == "Pending"
    got = http.get(f"/api/v1/namespaces/{n}/pods/web").json()
    assert got == obj
    dup = http.post(f"/api/v1/namespaces/{n}/pods", json=pod("web"))
    assert dup.status_code == 409
    st = dup.json()
    assert st["kind"] == "Status" and st["reason"] == "AlreadyExists" and st["code"] == 409
    assert st["message"] == 'pods "web" already exists'
    missing = http.get(f"/api/v1/namespaces/{n}/pods/nope")
    assert missing.status_code == 404
    assert missing.json()["message"] == 'pods "nope" not found'
    assert missing.json()["details"] == {"name": "nope", "kind": "pods"}


def test_generate_name_and_namespace_rules(http):
    n = ns(http)
    body = pod("")
    del body["metadata"]["name"]
    body["metadata"]["generateName"] = "gen-"
    r = http.post(f"/api/v1/namespaces/{n}/pods", json=body)
    assert r.status_code == 201, r.text
    name = r.json()["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == 9
    assert set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")
    body = pod("mismatch")
    body["metadata"]["namespace"] = "default"
    r = http.post(f"/api/v1/namespaces/{n}/pods", json=body)
    assert r.status_code == 400
    r = http.post("/api/v1/namespaces/does-not-exist/pods", json=pod("x"))
    assert r.status_code == 404 and r.json()["message"] == 'namespaces "does-not-exist" not found'


def test_label_and_field_selectors(http):
    n = ns(http)
    specs = [("a1", {"app": "a", "tier": "web"}, "n1"), ("a2", {"app": "a", "tier": "db"}, "n2"),
             ("b1", {"app": "b"}, "n1"), ("c1", {}, None)]
    for name, labels, node in specs:
        assert http.post(f"/api/v1/namespaces/{n}/pods", json=pod(name, labels=labels, node=node)).status_code == 201

    def names(**params):
        r = http.get(f"/api/v1/namespaces/{n}/pods", params=params)
        assert r.status_code == 200, r.text
        return sorted(i["metadata"]["name"] for i in r.json()["items"])

    assert names(labelSelector="app=a") == ["a1", "a2"]
    assert names(labelSelector="app==a,tier=db") == ["a2"]
    assert names(labelSelector="app!=a") == ["b1", "c1"]
    assert names(labelSelector="app in (a,b)") == ["a1", "a2", "b1"]
    assert names(labelSelector="app notin (a)") == ["b1", "c1"]
    assert names(labelSelector="tier") == ["a1", "a2"]
    assert names(labelSelector="!tier") == ["b1", "c1"]
    assert names(fieldSelector="metadata.name=b1") == ["b1"]
    assert names(fieldSelector="spec.nodeName=n1") == ["a1", "b1"]
    assert names(fieldSelector="spec.nodeName=") == ["c1"]
    assert names(fieldSelector="status.phase!=Running,spec.nodeName=n2") == ["a2"]
    assert names(fieldSelector="spec.schedulerName=default-scheduler", labelSelector="app=b") == ["b1"]
    assert names(fieldSelector=f"metadata.namespace={n}") == ["a1", "a2", "b1", "c1"]
    bad = http.get(f"/api/v1/namespaces/{n}/pods", params={"fieldSelector": "spec.foo=x"})
    assert bad.status_code == 400 and "field label not supported: spec.foo" in bad.json()["message"]
    bad = http.get(f"/api/v1/namespaces/{n}/pods", params={"labelSelector": "app in (a"})
    assert bad.status_code == 400
    # all-namespaces list path sees them too
    r = http.get("/api/v1/pods", params={"labelSelector": "app=a", "fieldSelector": f"metadata.namespace={n}"})
    assert sorted(i["metadata"]["name"] for i in r.json()["items"]) == ["a1", "a2"]


def test_pagination_with_limit_and_continue(http):
    n = ns(http)
    for i in range(7):
        http.post(f"/api/v1/namespaces/{n}/configmaps",
                  json={"metadata": {"name": f"cm-{i}"}, "data": {"i": str(i)}}).raise_for_status()
    seen, token, pages = [], None, 0
    while True:
        params = {"limit": 3}
        if token:
            params["continue"] = token
        body = http.get(f"/api/v1/namespaces/{n}/configmaps", params=params).json()
        pages += 1
        seen += [i["metadata"]["name"] for i in body["items"]]
        token = body["metadata"].get("continue")
        if not token:
            break
    assert pages == 3
    assert seen == [f"cm-{i}" for i in range(7)]
    bad = http.get(f"/api/v1/namespaces/{n}/configmaps", params={"limit": 2, "continue": "!!garbage!!"})
    assert bad.status_code == 400


def test_update_conflict_on_stale_resource_version(http):
    n = ns(http)
    cm = http.post(f"/api/v1/namespaces/{n}/configmaps", json={"metadata": {"name": "c"}, "data": {"a": "1"}}).json()
    stale = dict(cm)
    cm["data"] = {"a": "2"}
    r = http.put(f"/api/v1/namespaces/{n}/configmaps/c", json=cm)
    assert r.status_code == 200, r.text
    assert int(r.json()["metadata"]["resourceVersion"]) > int(stale["metadata"]["resourceVersion"])
    stale["data"] = {"a": "3"}
    r = http.put(f"/api/v1/namespaces/{n}/configmaps/c", json=stale)
    assert r.status_code == 409
    assert r.json()["reason"] == "Conflict"
    assert r.json()["message"] == ('Operation cannot be fulfilled on configmaps "c": the object has been modified; '
                                   'please apply your changes to the latest version and try again')
    assert http.get(f"/api/v1/namespaces/{n}/configmaps/c").json()["data"] == {"a": "2"}


def test_three_patch_types(http):
    n = ns(http)
    body = pod("p", labels={"app": "x"})
    body["spec"]["containers"].append({"name": "side", "image": "busybox:1"})
    http.post(f"/api/v1/namespaces/{n}/pods", json=body).raise_for_status()
    url = f"/api/v1/namespaces/{n}/pods/p"
    r = http.patch(url, content=b'{"metadata":{"labels":{"app":null,"tier":"web"}}}',
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["labels"] == {"tier": "web"}
    r = http.patch(url, content=b'[{"op":"add","path":"/metadata/annotations","value":{"a":"b"}},'
                                b'{"op":"test","path":"/metadata/labels/tier","value":"web"}]',
                   headers={"Content-Type": "application/json-patch+json"})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["annotations"] == {"a": "b"}
    # strategic merge: containers merge by name (the image of "c" changes, "side" stays)
    r = http.patch(url, content=b'{"spec":{"containers":[{"name":"c","image":"nginx:1.26"}]}}',
                   headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status_code == 200, r.text
    cs = {c["name"]: c["image"] for c in r.json()["spec"]["containers"]}
    assert cs == {"c": "nginx:1.26", "side": "busybox:1"}
    # a failing json-patch test op is 422 and changes nothing
    before = http.get(url).json()
    r = http.patch(url, content=b'[{"op":"test","path":"/metadata/labels/tier","value":"db"}]',
                   headers={"Content-Type": "application/json-patch+json"})
    assert r.status_code == 422
    assert http.get(url).json() == before
    r = http.patch(url, content=b'{"x":1}', headers={"Content-Type": "text/csv"})
    assert r.status_code == 415


def test_graceful_deletion_of_pods_and_finalizers(http):
    n = ns(http)
    base = f"/api/v1/namespaces/{n}/pods"
    # not bound to a node: removed at once
    http.post(base, json=pod("unbound")).raise_for_status()
    r = http.delete(f"{base}/unbound")
    assert r.status_code == 200
    assert http.get(f"{base}/unbound").status_code == 404
    # bound: deletionTimestamp + grace from terminationGracePeriodSeconds, stays until grace-0 delete
    http.post(base, json=pod("bound", node="some-node")).raise_for_status()
    r = http.request("DELETE", f"{base}/bound")
    assert r.status_code == 200
    meta = r.json()["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 30 and meta["deletionTimestamp"]
    assert http.get(f"{base}/bound").status_code == 200
    # a later delete may shorten the grace period, never lengthen it
    r = http.request("DELETE", f"{base}/bound", json={"gracePeriodSeconds": 5})
    assert r.json()["metadata"]["deletionGracePeriodSeconds"] == 5
    r = http.request("DELETE", f"{base}/bound", json={"gracePeriodSeconds": 20})
    assert r.json()["metadata"]["deletionGracePeriodSeconds"] == 5
    # a stale uid precondition is a conflict
    r = http.request("DELETE", f"{base}/bound", json={"gracePeriodSeconds": 0, "preconditions": {"uid": "nope"}})
    assert r.status_code == 409
    uid = http.get(f"{base}/bound").json()["metadata"]["uid"]
    r = http.request("DELETE", f"{base}/bound", params={"gracePeriodSeconds": 0},
                     json={"preconditions": {"uid": uid}})
    assert r.status_code == 200
    assert http.get(f"{base}/bound").status_code == 404
    # finalizers keep any object until removed
    cm = {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "data": {}}
    http.post(f"/api/v1/namespaces/{n}/configmaps", json=cm).raise_for_status()
    r = http.delete(f"/api/v1/namespaces/{n}/configmaps/held")
    assert r.status_code == 200 and r.json()["metadata"]["deletionTimestamp"]
    got = http.get(f"/api/v1/namespaces/{n}/configmaps/held")
    assert got.status_code == 200
    r = http.patch(f"/api/v1/namespaces/{n}/configmaps/held", content=b'{"metadata":{"finalizers":null}}',
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200
    assert http.get(f"/api/v1/namespaces/{n}/configmaps/held").status_code == 404


def test_delete_collection(http):
    n = ns(http)
    for i in range(3):
        http.post(f"/api/v1/namespaces/{n}/configmaps",
                  json={"metadata": {"name": f"d{i}", "labels": {"g": "1" if i < 2 else "2"}}}).raise_for_status()
    r = http.request("DELETE", f"/api/v1/namespaces/{n}/configmaps", params={"labelSelector": "g=1"})
    assert r.status_code == 200, r.text
    left = [i["metadata"]["name"] for i in http.get(f"/api/v1/namespaces/{n}/configmaps").json()["items"]]
    assert left == ["d2"]


def test_status_subresource_rules(http):
    n = ns(http)
    base = f"/api/v1/namespaces/{n}/pods/s"
    http.post(f"/api/v1/namespaces/{n}/pods", json=pod("s")).raise_for_status()
    cur = http.get(base).json()
    cur["status"] = {"phase": "Running", "podIP": "10.0.0.9"}
    cur["spec"]["activeDeadlineSeconds"] = 100
    r = http.put(base + "/status", json=cur)
    assert r.status_code == 200, r.text
    got = http.get(base).json()
    assert got["status"]["phase"] == "Running" and got["status"]["podIP"] == "10.0.0.9"
    assert "activeDeadlineSeconds" not in got["spec"]  # spec ignored on /status
    got["status"]["phase"] = "Failed"
    got["metadata"]["labels"] = {"changed": "yes"}
    r = http.put(base, json=got)
    assert r.status_code == 200, r.text
    again = http.get(base).json()
    assert again["status"]["phase"] == "Running"  # status ignored on the main resource
    assert again["metadata"]["labels"] == {"changed": "yes"}
    r = http.patch(base + "/status", content=b'{"status":{"conditions":[{"type":"Ready","status":"True"}]}}',
                   headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status_code == 200
    assert [c["type"] for c in r.json()["status"]["conditions"]] == ["Ready"]


def test_binding_sets_node_once(http):
    n = ns(http)
    http.post(f"/api/v1/namespaces/{n}/pods", json=pod("b")).raise_for_status()
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    r = http.post(f"/api/v1/namespaces/{n}/pods/b/binding", json=binding)
    assert r.status_code == 201, r.text
    assert r.json()["status"] == "Success"
    got = http.get(f"/api/v1/namespaces/{n}/pods/b").json()
    assert got["spec"]["nodeName"] == "node-1"
    assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in got["status"]["conditions"])
    r = http.post(f"/api/v1/namespaces/{n}/pods/b/binding", json={**binding, "target": {"name": "node-2"}})
    assert r.status_code == 409
    assert r.json()["message"] == ('Operation cannot be fulfilled on pods/binding "b": pod b is already assigned '
                                   'to node "node-1"')
    # the legacy namespaced bindings collection
    http.post(f"/api/v1/namespaces/{n}/pods", json=pod("b2")).raise_for_status()
    r = http.post(f"/api/v1/namespaces/{n}/bindings", json={**binding, "metadata": {"name": "b2"}})
    assert r.status_code == 201, r.text
    assert http.get(f"/api/v1/namespaces/{n}/pods/b2").json()["spec"]["nodeName"] == "node-1"


def test_eviction_endpoint_deletes_gracefully(http):
    n = ns(http)
    http.post(f"/api/v1/namespaces/{n}/pods", json=pod("e", node="node-1")).raise_for_status()
    cur = http.get(f"/api/v1/namespaces/{n}/pods/e").json()
    cur["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    http.put(f"/api/v1/namespaces/{n}/pods/e/status", json=cur).raise_for_status()
    ev = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "e", "namespace": n}}
    r = http.post(f"/api/v1/namespaces/{n}/pods/e/eviction", json=ev)
    assert r.status_code == 201, r.text
    assert r.json()["status"] == "Success"
    got = http.get(f"/api/v1/namespaces/{n}/pods/e").json()
    assert got["metadata"]["deletionTimestamp"]
    assert any(c["type"] == "DisruptionTarget" and c["reason"] == "EvictionByEvictionAPI"
               for c in got["status"]["conditions"])
    r = http.post(f"/api/v1/namespaces/{n}/pods/e/eviction", json={**ev, "metadata": {"name": "other"}})
    assert r.status_code == 400


def test_deployment_scale_subresource(http):
    n = ns(http)
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "d"}},
                    "template": {"metadata": {"labels": {"app": "d"}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    r = http.post(f"/apis/apps/v1/namespaces/{n}/deployments", json=dep)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["spec"]["strategy"]["type"] == "RollingUpdate"
    assert created["spec"]["revisionHistoryLimit"] == 10
    sc = http.get(f"/apis/apps/v1/namespaces/{n}/deployments/d/scale").json()
    assert sc["kind"] == "Scale" and sc["apiVersion"] == "autoscaling/v1" and sc["spec"]["replicas"] == 2
    assert sc["status"]["selector"] == "app=d"
    r = http.patch(f"/apis/apps/v1/namespaces/{n}/deployments/d/scale", content=b'{"spec":{"replicas":5}}',
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["replicas"] == 5
    sc = r.json()
    sc["spec"]["replicas"] = 7
    # kubectl scale --current-replicas sends the PUT without a Content-Type header
    r = http.put(f"/apis/apps/v1/namespaces/{n}/deployments/d/scale", content=json.dumps(sc).encode())
    assert r.status_code == 200, r.text
    d = http.get(f"/apis/apps/v1/namespaces/{n}/deployments/d").json()
    assert d["spec"]["replicas"] == 7
    assert d["metadata"]["generation"] == 3
    # without fieldManager, both scale writes are recorded for the manager named after the user
    # agent (httpx: "python-httpx"), as on the parent's own endpoints, under subresource scale
    owners = [(e["manager"], e.get("subresource")) for e in d["metadata"]["managedFields"]
              if "f:replicas" in (e["fieldsV1"].get("f:spec") or {})]
    assert owners == [("python-httpx", "scale")]


def test_crd_is_served_after_creation(http):
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wg"]},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]},
    }
    r = http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    assert r.status_code == 201, r.text
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        if http.get("/apis/example.com/v1").status_code == 200:
            break
    doc = http.get("/apis/example.com/v1").json()
    assert doc["resources"][0]["name"] == "widgets" and doc["resources"][0]["shortNames"] == ["wg"]
    assert any(g["name"] == "example.com" for g in http.get("/apis").json()["groups"])
    n = ns(http)
    w = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}}
    r = http.post(f"/apis/example.com/v1/namespaces/{n}/widgets", json=w)
    assert r.status_code == 201, r.text
    lst = http.get(f"/apis/example.com/v1/namespaces/{n}/widgets").json()
    assert lst["kind"] == "WidgetList" and [i["spec"]["size"] for i in lst["items"]] == [3]
    r = http.patch(f"/apis/example.com/v1/namespaces/{n}/widgets/w1", content=b'{"spec":{"size":4}}',
                   headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status_code == 415  # strategic merge is for built-in kinds only, as upstream
    r = http.patch(f"/apis/example.com/v1/namespaces/{n}/widgets/w1", content=b'{"spec":{"size":4}}',
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200 and r.json()["spec"]["size"] == 4
    crd_obj = http.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com").json()
    conds = {c["type"]: c["status"] for c in crd_obj["status"]["conditions"]}
    assert conds["Established"] == "True"


def test_server_side_apply_create_reapply_conflict_and_force(http):
    n = ns(http)
    url = f"/api/v1/namespaces/{n}/configmaps/ssa"
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: '1'\n  b: '2'\n"
    ct = {"Content-Type": "application/apply-patch+yaml"}
    r = http.patch(url, content=body, headers=ct, params={"fieldManager": "alice"})
    assert r.status_code == 201, r.text
    mf = r.json()["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"]) for m in mf] == [("alice", "Apply")]
    rv = r.json()["metadata"]["resourceVersion"]
    r = http.patch(url, content=body, headers=ct, params={"fieldManager": "alice"})
    assert r.status_code == 200 and r.json()["metadata"]["resourceVersion"] == rv  # unchanged: no write
    other = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: 'X'\n"
    r = http.patch(url, content=other, headers=ct, params={"fieldManager": "bob"})
    assert r.status_code == 409, r.text
    st = r.json()
    assert st["reason"] == "Conflict"
    assert st["details"]["causes"][0]["reason"] == "FieldManagerConflict"
    assert st["details"]["causes"][0]["field"] == ".data.a"
    r = http.patch(url, content=other, headers=ct, params={"fieldManager": "bob", "force": "true"})
    assert r.status_code == 200 and r.json()["data"]["a"] == "X"
    # alice stops applying b: pruned, since nobody else owns it
    r = http.patch(url, content=b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata: {}\n",
                   headers=ct, params={"fieldManager": "alice"})
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"a": "X"}
    r = http.patch(url, content=body, headers=ct)
    assert r.status_code == 400  # fieldManager is required for apply


def test_put_creates_only_where_upstream_allows_it(http):
    n = ns(http)
    r = http.put(f"/api/v1/namespaces/{n}/configmaps/nope", json={"metadata": {"name": "nope"}})
    assert r.status_code == 404
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
             "spec": {"holderIdentity": "me", "leaseDurationSeconds": 40}}
    r = http.put(f"/apis/coordination.k8s.io/v1/namespaces/{n}/leases/l", json=lease)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["holderIdentity"] == "me"


def test_objects_are_served_in_kube_apiservers_field_order(http: httpx.Client, ns: str) -> None:
    # written with its keys in another order, served as Go's encoder writes the type
    body = {"metadata": {"labels": {"a": "b"}, "name": "ordered"}, "spec": {"containers": [{"name": "c",
            "image": "busybox"}]}, "apiVersion": "v1", "kind": "Pod"}
    made = http.post(f"/api/v1/namespaces/{ns}/pods", json=body)
    assert made.status_code == 201
    for r in (made, http.get(f"/api/v1/namespaces/{ns}/pods/ordered")):
        obj = r.json()
        assert list(obj)[:4] == ["kind", "apiVersion", "metadata", "spec"]
        keys = [k for k in obj["metadata"] if k in ("name", "namespace", "uid", "resourceVersion",
                                                      "creationTimestamp", "labels", "managedFields")]
        assert keys == ["name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels", "managedFields"]
    item = http.get(f"/api/v1/namespaces/{ns}/pods").json()["items"][0]
    assert list(item)[:3] == ["kind", "apiVersion", "metadata"]
    # and a watch replays it the same way
    r = http.get(f"/api/v1/namespaces/{ns}/pods", params={"watch": "true", "resourceVersion": "0",
                                                          "timeoutSeconds": "1"})
    event = json.loads(r.text.splitlines()[0])
    assert event["type"] == "ADDED" and list(event["object"])[:3] == ["kind", "apiVersion", "metadata"]


AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def test_aggregated_discovery_v2(http):
    """`/api` and `/apis` answer apidiscovery.k8s.io/v2 when it is the negotiated type (kubectl
    1.33 asks for it first and then needs no per-group-version request): every resource with
    its scope, singular name, verbs, short names, categories and its subresources (with their
    own responseKind); the same URLs stay legacy for a plain JSON Accept; an ETag the client may
    revalidate with (304)."""
    r = http.get("/apis", headers={"Accept": f"{AGGREGATED},application/json"})
    assert r.status_code == 200 and r.headers["content-type"] == AGGREGATED and r.headers["vary"] == "Accept"
    doc = r.json()
    assert (doc["kind"], doc["apiVersion"], doc["metadata"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2",
                                                                  {})
    groups = {g["metadata"]["name"]: g for g in doc["items"]}
    legacy = [g["name"] for g in http.get("/apis").json()["groups"]]
    assert [g["metadata"]["name"] for g in doc["items"]] == legacy  # same groups, same order
    (apps_v1,) = groups["apps"]["versions"]
    assert (apps_v1["version"], apps_v1["freshness"]) == ("v1", "Current")
    deploy = next(r for r in apps_v1["resources"] if r["resource"] == "deployments")
    assert deploy == {
        "resource": "deployments", "responseKind": {"group": "", "version": "", "kind": "Deployment"},
        "scope": "Namespaced", "singularResource": "deployment",
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        "shortNames": ["deploy"], "categories": ["all"],
        "subresources": [
            {"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
             "verbs": ["get", "patch", "update"]},
            {"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Deployment"},
             "verbs": ["get", "patch", "update"]}]}
    assert [v["version"] for v in groups["autoscaling"]["versions"]] == ["v2", "v1"]  # preferred first
    assert "metrics.k8s.io" in groups

    core = http.get("/api", headers={"Accept": AGGREGATED}).json()
    (item,) = core["items"]
    assert item["metadata"] == {"creationTimestamp": None} and [v["version"] for v in item["versions"]] == ["v1"]
    pods = next(r for r in item["versions"][0]["resources"] if r["resource"] == "pods")
    subs = {s["subresource"]: s["responseKind"] for s in pods["subresources"]}
    assert subs["eviction"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    assert subs["exec"] == {"group": "", "version": "", "kind": "PodExecOptions"}
    assert {"log", "status", "binding", "ephemeralcontainers", "portforward"} <= set(subs)
    nodes = next(r for r in item["versions"][0]["resources"] if r["resource"] == "nodes")
    assert nodes["scope"] == "Cluster" and nodes["shortNames"] == ["no"]

    again = http.get("/apis", headers={"Accept": AGGREGATED, "If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and again.headers["etag"] == r.headers["etag"]

    # legacy for plain JSON (first clause), and for an aggregated version not served (v2beta1)
    for accept in (f"application/json,{AGGREGATED}", "application/json;g=apidiscovery.k8s.io;v=v2beta1;"
                   "as=APIGroupDiscoveryList,application/json", "*/*", ""):
        r = http.get("/apis", headers={"Accept": accept} if accept else {})
        assert r.json()["kind"] == "APIGroupList", accept
    assert http.get("/api", headers={"Accept": f"{AGGREGATED};q=0.5,application/json"}).json()["kind"] == "APIVersions"

    # the document is built once per registry state: a new CRD's group shows, with a new ETag
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"widgets.{group}"},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    assert http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd).status_code == 201
    deadline = time.monotonic() + 20
    while True:
        r2 = http.get("/apis", headers={"Accept": AGGREGATED})
        names = [g["metadata"]["name"] for g in r2.json()["items"]]
        if group in names:
            break
        assert time.monotonic() < deadline, "the CRD's group never appeared in aggregated discovery"
        time.sleep(0.05)
    assert r2.headers["etag"] != again.headers["etag"]
    widgets = next(g for g in r2.json()["items"] if g["metadata"]["name"] == group)["versions"][0]["resources"][0]
    assert (widgets["resource"], widgets["scope"], widgets["responseKind"]["kind"]) == ("widgets", "Namespaced",
                                                                                        "Widget")


def test_resource_version_on_create(http):
    """kube-apiserver's storage check: a resourceVersion that parses as a non-zero number is
    refused with a plain 500 (no reason), anything else ("0", "-1", "v1": kubernetes_asyncio's own
    e2e posts one) is dropped and the object created with its own resourceVersion; validation
    errors come first, and a dry run never gets that far."""
    space = ns(http)
    url = f"/api/v1/namespaces/{space}/configmaps"
    for i, rv in enumerate(("0", "-1", "v1", "", "18446744073709551616")):  # the last: no uint64
        r = http.post(url, json={"metadata": {"name": f"ok-{i}", "resourceVersion": rv}})
        assert r.status_code == 201, (rv, r.text)
        assert r.json()["metadata"]["resourceVersion"] not in (rv, "0")
    r = http.post(url, json={"metadata": {"name": "bad", "resourceVersion": "5"}})
    assert (r.status_code, r.json()) == (500, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "resourceVersion should not be set on objects to be created", "code": 500})
    assert http.get(f"{url}/bad").status_code == 404  # nothing stored
    r = http.post(url, json={"metadata": {"name": "Bad_Name", "resourceVersion": "5"}})
    assert r.status_code == 422  # validation first
    r = http.post(url, params={"dryRun": "All"}, json={"metadata": {"name": "dry", "resourceVersion": "5"}})
    assert r.status_code == 201
