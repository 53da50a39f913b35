"""The registered pytest plugin (minik3s/pytest_plugin.py), driven as a user drives it: a user's
test file run by pytest's `pytester` in a fresh in-process session that loads the plugin only
through its `pytest11` entry point (no `pytest_plugins` line in the user's files).

Checked: each fixture works from a user's test file; markers and indirect parameters choose the
fleet (count, zones, a nodes file); the cluster is handed over with every node Ready; two clusters
in one session do not interfere; after the session no thread, temp dir or listening port is left;
bad marker options fail with a clear usage error; the plugin is inactive until a fixture is used.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from pathlib import Path

import numpy  # noqa: F401  (see below)
import pytest

# The in-process sessions below restore sys.modules after each run, and NumPy's C extension
# cannot be loaded twice in one process: loaded here, before any of them, it stays loaded (run
# alone, this file otherwise failed from its second cluster on).
pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def keep_library_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """An in-process session's sys.modules snapshot drops what the session imported. The
    kubernetes client loads its API and model modules lazily: a class first loaded inside a
    session and dropped after it is loaded again later, and the client's pydantic-validated calls
    then refuse instances of the other copy ("Input should be a valid dictionary or instance of
    V1Namespace") in whatever test runs next in this process. Installed libraries stay loaded."""
    from _pytest import pytester as pytester_module

    restore = pytester_module.SysModulesSnapshot.restore

    def restore_keeping_libraries(self: pytester_module.SysModulesSnapshot) -> None:
        libraries = {name: mod for name, mod in sys.modules.items()
                     if "site-packages" in (getattr(mod, "__file__", None) or "")}
        restore(self)
        for name, mod in libraries.items():
            sys.modules.setdefault(name, mod)

    monkeypatch.setattr(pytester_module.SysModulesSnapshot, "restore", restore_keeping_libraries)


@pytest.fixture(autouse=True)
def private_tempdir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Clusters made by these (in-process) sessions put their data dirs in a directory of this
    test's own, so the leak checks below see only them, not other processes' clusters in /tmp."""
    d = tmp_path_factory.mktemp("clusters")
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def minik3s_dirs() -> set[str]:
    tmp = Path(tempfile.gettempdir())
    return {p.name for p in tmp.glob("minik3s-*")}


def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_user=source)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    # the inner session must not load this repo's conftest plugins: only the entry point
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", *args)


def test_fresh_cluster_per_test_is_ready_and_isolated(pytester: pytest.Pytester) -> None:
    before_threads = {t.ident for t in threading.enumerate()}
    before_dirs = minik3s_dirs()
    out = pytester.path / "seen.json"
    result = run(pytester, f"""
import json, socket
from pathlib import Path
import httpx
import pytest

SEEN = []

def record(cluster):
    with httpx.Client(base_url=cluster.url) as c:
        nodes = c.get("/api/v1/nodes").json()["items"]
        names = sorted(n["metadata"]["name"] for n in nodes)
        ready = [all(x["status"] == "True" for x in n["status"]["conditions"] if x["type"] == "Ready")
                 and any(x["type"] == "Ready" for x in n["status"]["conditions"]) for n in nodes]
        cms = [o["metadata"]["name"] for o in c.get("/api/v1/namespaces/default/configmaps").json()["items"]]
        c.post("/api/v1/namespaces/default/configmaps",
               json={{"metadata": {{"name": "mine"}}}}).raise_for_status()
    SEEN.append({{"url": cluster.url, "data": str(cluster.data_dir), "names": names, "ready": ready,
                 "cms": cms}})
    Path({str(out)!r}).write_text(json.dumps(SEEN))

def test_one(minik3s_cluster):
    record(minik3s_cluster)

@pytest.mark.minik3s(nodes=2)
def test_two(minik3s_cluster):
    record(minik3s_cluster)
""")
    result.assert_outcomes(passed=2)
    seen = json.loads(out.read_text())
    assert seen[0]["names"] == ["node-1", "node-2", "node-3"]
    assert seen[1]["names"] == ["node-1", "node-2"]
    assert all(all(s["ready"]) for s in seen), "a cluster was handed over before its nodes were Ready"
    # the second test's cluster did not see the first one's ConfigMap: fresh store, other port
    assert "mine" not in seen[1]["cms"]
    assert seen[0]["url"] != seen[1]["url"] or seen[0]["data"] != seen[1]["data"]
    # nothing left: threads, temp dirs, listening ports
    assert not any(Path(s["data"]).exists() for s in seen)
    assert minik3s_dirs() <= before_dirs
    assert {t.ident for t in threading.enumerate()} <= before_threads
    for s in seen:
        import httpx

        with pytest.raises(httpx.ConnectError):
            httpx.get(s["url"] + "/readyz", timeout=2)


def test_session_cluster_namespace_kubeconfig_and_official_client(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
import os
import subprocess
import pytest

NAMESPACES = []

def test_a(minik3s_session_cluster, minik3s_namespace, k8s_client):
    from kubernetes import client
    v1 = client.CoreV1Api(k8s_client)
    assert minik3s_namespace.startswith("test-a-")
    NAMESPACES.append(minik3s_namespace)
    v1.create_namespaced_config_map(minik3s_namespace, {"metadata": {"name": "cm"}})
    # a fresh namespace holds only what the cluster publishes in every one (kube-root-ca.crt)
    names = [c.metadata.name for c in v1.list_namespaced_config_map(minik3s_namespace).items]
    assert [n for n in names if n != "kube-root-ca.crt"] == ["cm"]
    nodes = v1.list_node().items
    assert len(nodes) == 3

def test_b(minik3s_session_cluster, minik3s_namespace, kubeconfig):
    NAMESPACES.append(minik3s_namespace)
    assert NAMESPACES[0] != NAMESPACES[1]
    assert "KUBECONFIG" not in os.environ or os.environ["KUBECONFIG"] != str(kubeconfig)
    assert kubeconfig == minik3s_session_cluster.kubeconfig_path and kubeconfig.is_file()
    from minik3s.api.resources import CONFIGMAPS, NAMESPACES as NS
    mine = minik3s_session_cluster.call(minik3s_session_cluster.client.list(CONFIGMAPS, minik3s_namespace))
    assert [c["metadata"]["name"] for c in mine["items"] if c["metadata"]["name"] != "kube-root-ca.crt"] == []
    # the previous test's namespace is being deleted (or gone)
    from minik3s.api.errors import NotFoundError
    try:
        ns = minik3s_session_cluster.call(minik3s_session_cluster.client.get(NS, NAMESPACES[0]))
        assert ns["metadata"].get("deletionTimestamp")
    except NotFoundError:
        pass

@pytest.mark.minik3s(export_kubeconfig=True)
def test_c(minik3s_session_cluster, kubeconfig):
    assert os.environ["KUBECONFIG"] == str(kubeconfig)
""")
    result.assert_outcomes(passed=3)
    assert "KUBECONFIG" not in os.environ or "minik3s-" not in os.environ["KUBECONFIG"]


def test_two_clusters_in_one_session_do_not_interfere(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
import httpx
import pytest

def test_both(minik3s_session_cluster, minik3s_cluster):
    a, b = minik3s_session_cluster, minik3s_cluster
    assert a.url != b.url and a.kubeconfig_path != b.kubeconfig_path
    httpx.post(a.url + "/api/v1/namespaces", json={"metadata": {"name": "only-in-a"}}).raise_for_status()
    names_b = [n["metadata"]["name"] for n in httpx.get(b.url + "/api/v1/namespaces").json()["items"]]
    assert "only-in-a" not in names_b
    b.call(b.fail_node("node-1"))
    node_a = httpx.get(a.url + "/api/v1/nodes/node-1").json()
    assert "sim.minik3s.io/failed" not in (node_a["metadata"].get("annotations") or {})
""")
    result.assert_outcomes(passed=1)


def test_fleet_from_zones_nodes_file_and_indirect_parameters(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", fleet="""
apiVersion: sim.minik3s.io/v1alpha1
kind: NodePool
count: 2
namePrefix: gpu-
zones: [z1]
""")
    result = run(pytester, """
import pytest
from minik3s.api.resources import NODES

def zones(cluster):
    items = cluster.call(cluster.client.list(NODES))["items"]
    return {n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in items}

@pytest.mark.minik3s(nodes=4, zones=["a", "b"])
def test_zones(minik3s_cluster):
    assert zones(minik3s_cluster) == {"node-1": "a", "node-2": "b", "node-3": "a", "node-4": "b"}

def test_nodes_file(minik3s_cluster):
    assert zones(minik3s_cluster) == {"gpu-1": "z1", "gpu-2": "z1"}
test_nodes_file = pytest.mark.minik3s(nodes="fleet.yaml")(test_nodes_file)

@pytest.mark.parametrize("minik3s_cluster", [1, {"nodes": 2}], indirect=True)
def test_param(minik3s_cluster):
    assert len(zones(minik3s_cluster)) in (1, 2)
    assert minik3s_cluster.node_names == sorted(zones(minik3s_cluster))
""")
    result.assert_outcomes(passed=4)


def test_bad_marker_options_fail_clearly(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
import pytest

@pytest.mark.minik3s(nodez=3)
def test_typo(minik3s_cluster):
    pass

@pytest.mark.minik3s(disable=["kubelets"])
def test_unknown_component(minik3s_cluster):
    pass
""")
    result.assert_outcomes(errors=2)
    text = result.stdout.str()
    assert "bad minik3s cluster options" in text and "nodez" in text
    assert "unknown component(s) to disable: kubelets" in text


def test_inactive_until_a_fixture_is_used(pytester: pytest.Pytester) -> None:
    before_dirs = minik3s_dirs()
    result = run(pytester, """
import threading

def test_plain():
    assert not [t for t in threading.enumerate() if t.name == "minik3s-cluster"]
""", "--fixtures")
    assert result.ret == 0
    text = result.stdout.str()
    for name in ("minik3s_cluster", "minik3s_session_cluster", "minik3s_namespace", "kubeconfig", "k8s_client"):
        assert name in text
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)
    assert minik3s_dirs() <= before_dirs


def test_tls_marker_gives_an_https_cluster_the_fixtures_reach_with_the_kubeconfig(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
import httpx
import pytest
from kubernetes import client

@pytest.mark.minik3s(nodes=1, tls=True)
def test_tls(minik3s_cluster, k8s_client, kubeconfig):
    assert minik3s_cluster.url.startswith("https://") and minik3s_cluster.tls
    assert "certificate-authority-data" in kubeconfig.read_text()
    names = [n.metadata.name for n in client.CoreV1Api(k8s_client).list_node().items]
    assert names == ["node-1"]
    ca = str(minik3s_cluster.data_dir / "server" / "tls" / "server-ca.crt")
    assert httpx.get(minik3s_cluster.url + "/api/v1/nodes", verify=ca).status_code == 401
""")
    result.assert_outcomes(passed=1)
