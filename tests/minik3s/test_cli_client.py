"""The built-in client: `minik3s apply|get|delete|describe` (minik3s/cli/kubectl/).

Pure pieces (tab stops, durations, name resolution, error wording, YAML style) are checked in
process; the commands themselves run as `python -m minik3s ...` subprocesses against a real
server with every component (`minik3s_cluster`: scheduler, controllers, 6 simulated kubelets),
so pods get scheduled, emit events and finish graceful deletion. Each test uses its own
namespace or names, so the shared server does not couple them.
"""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import yaml

from minik3s.api.errors import ApiError
from minik3s.cli.kubectl.describe import describe_pod, smart_label
from minik3s.cli.kubectl.discovery import ApiResource, Discovery
from minik3s.cli.kubectl.errors import CommandError, format_error
from minik3s.cli.kubectl.palette import Palette, status_style
from minik3s.cli.kubectl.printers import human_duration, to_json, to_yaml
from minik3s.cli.kubectl.tabwriter import TabWriter
from minik3s.pytest_plugin import cluster_fixture
from minik3s.testing.server import ServerProcess

# ---------------------------------------------------------------------------------------------
# pure helpers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "NAME\tAGE\nweb-1\t5m\n",
            "NAME    AGE\nweb-1   5m\n",
            id="column-width-is-longest-cell-plus-padding",
        ),
        pytest.param("A\tB\nx\ty\n", "A     B\nx     y\n", id="narrow-column-padded-to-minwidth-6"),
        pytest.param(
            "NAME\tSTATUS\tAGE\nlong-pod-name\tRunning\t1s\n",
            "NAME            STATUS    AGE\nlong-pod-name   Running   1s\n",
            id="last-cell-is-not-padded",
        ),
    ],
)
def test_tabwriter_lays_out_get_tables_like_kubectl(text: str, expected: str) -> None:
    assert TabWriter(minwidth=6, padding=3).render(text) == expected


def test_tabwriter_remembers_widths_across_watch_events() -> None:
    w = TabWriter(minwidth=6, padding=3, remember_widths=True)
    assert w.render("NAME\tSTATUS\nweb-123\tRunning\n") == "NAME      STATUS\nweb-123   Running\n"
    assert w.render("a\tPending\n") == "a         Pending\n"


def test_tabwriter_column_blocks_break_at_lines_without_tabs() -> None:
    text = "Name:\tp\nLonger key:\tv\nSection:\n  k:\tv\n"
    assert TabWriter(minwidth=0, padding=2).render(text) == (
        "Name:        p\nLonger key:  v\nSection:\n  k:  v\n"
    )


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        pytest.param(-5, "<invalid>", id="clock-skew-in-the-future"),
        pytest.param(45, "45s", id="under-two-minutes-in-seconds"),
        pytest.param(119, "119s", id="just-under-two-minutes"),
        pytest.param(200, "3m20s", id="under-ten-minutes-minutes-and-seconds"),
        pytest.param(300, "5m", id="whole-minutes-drop-seconds"),
        pytest.param(15 * 60 + 7, "15m", id="under-three-hours-minutes-only"),
        pytest.param(5 * 3600 + 30 * 60, "5h30m", id="under-eight-hours-hours-and-minutes"),
        pytest.param(30 * 3600, "30h", id="under-two-days-hours"),
        pytest.param(3 * 86400 + 4 * 3600, "3d4h", id="under-eight-days-days-and-hours"),
        pytest.param(20 * 86400, "20d", id="under-two-years-days"),
        pytest.param(3 * 365 * 86400 + 10 * 86400, "3y10d", id="under-eight-years-years-and-days"),
        pytest.param(9 * 365 * 86400, "9y", id="years"),
    ],
)
def test_human_duration_matches_apimachinery(seconds: int, expected: str) -> None:
    assert human_duration(seconds) == expected


def _disc() -> Discovery:
    return Discovery(
        [
            ApiResource("", "v1", "pods", "Pod", True, "pod", ["po"]),
            ApiResource("", "v1", "nodes", "Node", False, "node", ["no"]),
            ApiResource("", "v1", "events", "Event", True, "event", ["ev"]),
            ApiResource("apps", "v1", "deployments", "Deployment", True, "deployment", ["deploy"]),
            ApiResource("events.k8s.io", "v1", "events", "Event", True, "event", ["ev"]),
            ApiResource(
                "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, "priorityclass", ["pc"]
            ),
            ApiResource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", True, "podgroup", ["pg"]),
        ]
    )


@pytest.mark.parametrize(
    ("arg", "group", "resource"),
    [
        pytest.param("pods", "", "pods", id="plural"),
        pytest.param("pod", "", "pods", id="singular"),
        pytest.param("po", "", "pods", id="short-name"),
        pytest.param("Pod", "", "pods", id="kind-case-insensitive"),
        pytest.param("deploy", "apps", "deployments", id="short-name-in-a-group"),
        pytest.param("deployments.apps", "apps", "deployments", id="resource-dot-group"),
        pytest.param("deployment.v1.apps", "apps", "deployments", id="resource-dot-version-dot-group"),
        pytest.param("ev", "", "events", id="core-group-wins-over-events-k8s-io"),
        pytest.param(
            "events.events.k8s.io", "events.k8s.io", "events", id="group-qualifier-picks-other-events"
        ),
        pytest.param("pc", "scheduling.k8s.io", "priorityclasses", id="priorityclass-short-name"),
        pytest.param("pg", "scheduling.x-k8s.io", "podgroups", id="custom-resource-short-name"),
    ],
)
def test_resolve_resource_names_like_kubectl(arg: str, group: str, resource: str) -> None:
    r = _disc().resolve(arg)
    assert (r.group, r.resource) == (group, resource)


def test_resolve_unknown_type_is_kubectls_error() -> None:
    with pytest.raises(CommandError) as e:
        _disc().resolve("frobs")
    assert format_error(e.value) == 'error: the server doesn\'t have a resource type "frobs"'


@pytest.mark.parametrize(
    ("status", "source", "expected"),
    [
        pytest.param(
            {"reason": "NotFound", "code": 404, "message": 'pods "nope" not found'},
            "",
            'Error from server (NotFound): pods "nope" not found',
            id="not-found",
        ),
        pytest.param(
            {"reason": "AlreadyExists", "code": 409, "message": 'pods "p1" already exists'},
            "pod.yaml",
            'Error from server (AlreadyExists): error when creating "pod.yaml": pods "p1" already exists',
            id="source-file-named",
        ),
        pytest.param(
            {
                "reason": "Invalid",
                "code": 422,
                "message": "x",
                "details": {
                    "kind": "Pod",
                    "name": "bad",
                    "causes": [{"field": "spec.containers", "message": "Required value"}],
                },
            },
            "",
            'The Pod "bad" is invalid: spec.containers: Required value',
            id="invalid-one-cause",
        ),
        pytest.param(
            {
                "reason": "Invalid",
                "code": 422,
                "message": "x",
                "details": {
                    "kind": "Pod",
                    "name": "bad",
                    "causes": [{"field": "a", "message": "Required value"}, {"field": "b", "message": "Bad"}],
                },
            },
            "",
            'The Pod "bad" is invalid: \n* a: Required value\n* b: Bad',
            id="invalid-several-causes",
        ),
    ],
)
def test_server_errors_are_worded_like_kubectl(status: dict, source: str, expected: str) -> None:
    err = ApiError.from_status(status)
    assert format_error(err, source=source, verb="creating") == expected


def test_yaml_output_is_go_style() -> None:
    obj = {
        "metadata": {"name": "p", "creationTimestamp": "2026-11-30T01:23:21Z", "labels": {"on": "yes"}},
        "spec": {"containers": [{"name": "c", "args": ["a"]}]},
        "apiVersion": "v1",
        "data": "l1\nl2\n",
    }
    assert to_yaml(obj) == (
        "apiVersion: v1\n"
        "data: |\n  l1\n  l2\n"
        "metadata:\n"
        '  creationTimestamp: "2026-11-30T01:23:21Z"\n'
        "  labels:\n"
        '    "on": "yes"\n'
        "  name: p\n"
        "spec:\n"
        "  containers:\n"
        "  - args:\n"
        "    - a\n"
        "    name: c\n"
    )


def test_json_output_is_go_style() -> None:
    assert to_json({"b": "<none>", "a": 1}) == '{\n    "a": 1,\n    "b": "\\u003cnone\\u003e"\n}'


@pytest.mark.parametrize(
    ("key", "label"),
    [
        pytest.param("minMember", "Min Member", id="camel-case-split"),
        pytest.param("uid", "UID", id="acronym-upper-cased"),
        pytest.param("apiVersion", "API Version", id="leading-acronym"),
        pytest.param("app.kubernetes.io/name", "app.kubernetes.io/name", id="label-key-kept"),
        pytest.param("scheduleTimeoutSeconds", "Schedule Timeout Seconds", id="three-words"),
    ],
)
def test_generic_describer_labels(key: str, label: str) -> None:
    assert smart_label(key) == label


@pytest.mark.parametrize(
    ("cell", "style"),
    [
        pytest.param("Running", "green", id="running-green"),
        pytest.param("Ready,SchedulingDisabled", "yellow", id="cordoned-node-yellow"),
        pytest.param("Init:0/1", "yellow", id="init-yellow"),
        pytest.param("CrashLoopBackOff", "red", id="crashloop-red"),
        pytest.param("NotReady", "red", id="notready-red"),
        pytest.param("10.0.0.1", "", id="other-cells-plain"),
    ],
)
def test_status_cells_colour(cell: str, style: str) -> None:
    assert status_style(cell) == style


def test_colour_only_on_terminals_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert Palette.for_stream(Tty()).paint("red", "x") == "\033[31mx\033[0m"
    assert Palette.for_stream(io.StringIO()).paint("red", "x") == "x"
    monkeypatch.setenv("NO_COLOR", "1")
    assert Palette.for_stream(Tty()).paint("red", "x") == "x"


def test_describe_pod_sections_and_event_age() -> None:
    now = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
    ts = (now - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    first = (now - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    pod = {
        "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "1", "b": "2"}},
        "spec": {
            "nodeName": "n1",
            "priority": 0,
            "serviceAccountName": "default",
            "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}],
            "tolerations": [
                {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ],
        },
        "status": {
            "phase": "Running",
            "hostIP": "10.0.0.1",
            "podIP": "10.244.0.5",
            "podIPs": [{"ip": "10.244.0.5"}],
            "qosClass": "Burstable",
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    events = [
        {
            "type": "Warning",
            "reason": "BackOff",
            "message": "again",
            "count": 3,
            "firstTimestamp": first,
            "lastTimestamp": ts,
            "source": {"component": "kubelet"},
        },
        {
            "type": "Normal",
            "reason": "Scheduled",
            "message": "Successfully assigned ns/p to n1",
            "count": 1,
            "firstTimestamp": first,
            "lastTimestamp": first,
            "source": {"component": "default-scheduler"},
        },
    ]
    text = describe_pod(pod, events, now)
    lines = text.splitlines()
    assert lines[0] == "Name:             p"
    assert "Node:             n1/10.0.0.1" in lines
    assert "Labels:           a=1" in lines and "                  b=2" in lines
    assert any(
        ln.startswith("Tolerations:") and ln.endswith("k:NoExecute op=Exists for 300s") for ln in lines
    )
    tail = lines[lines.index("Events:") :]
    assert tail == [
        "Events:",
        "  Type     Reason     Age               From               Message",
        "  ----     ------     ----              ----               -------",
        "  Normal   Scheduled  5m                default-scheduler  Successfully assigned ns/p to n1",
        "  Warning  BackOff    30s (x3 over 5m)  kubelet            again",
    ]


def test_describe_pod_prints_the_projected_token_volume_as_kubectl_does() -> None:
    """The Volumes section of a pod the ServiceAccount plugin admitted, line for line as kubectl
    1.33 prints it (columns compared without their padding)."""
    vol = {"name": "kube-api-access-62dlm", "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                      "fieldPath": "metadata.namespace"}}]}}]}}
    mount = {"name": "kube-api-access-62dlm", "readOnly": True,
             "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
    pod = {"metadata": {"name": "web", "namespace": "default"},
           "spec": {"containers": [{"name": "web", "image": "nginx", "volumeMounts": [mount]}], "volumes": [vol]},
           "status": {"phase": "Running"}}
    lines = [" ".join(ln.split()) for ln in describe_pod(pod, [], datetime(2026, 12, 2, tzinfo=UTC)).splitlines()]
    assert "/var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-62dlm (ro)" in lines
    at = lines.index("Volumes:")
    assert lines[at:at + 7] == [
        "Volumes:",
        "kube-api-access-62dlm:",
        "Type: Projected (a volume that contains injected data from multiple sources)",
        "TokenExpirationSeconds: 3607",
        "ConfigMapName: kube-root-ca.crt",
        "Optional: false",
        "DownwardAPI: true",
    ]


# ---------------------------------------------------------------------------------------------
# commands against a real server

# the module's shared full cluster (every component, 6 nodes; in-process, handed over Ready)
minik3s_cluster = cluster_fixture(scope="module", name="minik3s_cluster", nodes=6, node_monitor_grace_period=8)


def cli(
    srv: ServerProcess, *args: str, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "minik3s", "--log-level", "WARNING", *args, "--server", srv.url],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wait_for(cond: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    pause = 0.01
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def table(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines()]


def pod_yaml(name: str, ns: str, *, image: str = "nginx", labels: str = "{app: web}") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}, labels: {labels}}}\n"
        f"spec: {{containers: [{{name: c, image: {image}, resources: {{requests: {{cpu: 100m}}}}}}]}}\n"
    )


def namespace_yaml(ns: str) -> str:
    return f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n"


@pytest.fixture
def api(minik3s_cluster: ServerProcess) -> httpx.Client:
    with httpx.Client(base_url=minik3s_cluster.url, timeout=30) as c:
        yield c


def test_apply_reports_created_unchanged_configured_from_dir_file_and_stdin(
    minik3s_cluster: ServerProcess, tmp_path: Path, api: httpx.Client
) -> None:
    d = tmp_path / "manifests"
    d.mkdir()
    (d / "00-ns.yaml").write_text(namespace_yaml("cli-apply"))
    (d / "10-things.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: cli-apply}\ndata: {a: '1'}\n---\n"
        + pod_yaml("web-1", "cli-apply")
        + "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: cli-high}\nvalue: 1000\n"
    )
    (d / "notes.txt").write_text("not a manifest")

    first = cli(minik3s_cluster, "apply", "-f", str(d))
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        "namespace/cli-apply created",
        "configmap/cfg created",
        "pod/web-1 created",
        "priorityclass.scheduling.k8s.io/cli-high created",
    ]

    again = cli(minik3s_cluster, "apply", "-f", str(d / "10-things.yaml"))
    assert again.stdout.splitlines() == [
        "configmap/cfg unchanged",
        "pod/web-1 unchanged",
        "priorityclass.scheduling.k8s.io/cli-high unchanged",
    ]

    changed = (d / "10-things.yaml").read_text().replace("a: '1'", "a: '2', b: '3'")
    piped = cli(minik3s_cluster, "apply", "-f", "-", stdin=changed)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.splitlines() == [
        "configmap/cfg configured",
        "pod/web-1 unchanged",
        "priorityclass.scheduling.k8s.io/cli-high unchanged",
    ]
    assert api.get("/api/v1/namespaces/cli-apply/configmaps/cfg").json()["data"] == {"a": "2", "b": "3"}

    # server-side apply prunes what the manifest no longer sets
    pruned = cli(
        minik3s_cluster,
        "apply",
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: cli-apply}\n"
        "data: {a: '2'}\n",
    )
    assert pruned.stdout.strip() == "configmap/cfg configured"
    assert api.get("/api/v1/namespaces/cli-apply/configmaps/cfg").json()["data"] == {"a": "2"}


@pytest.mark.parametrize(
    ("manifest", "stderr"),
    [
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: []}\n",
            'The Pod "bad" is invalid: spec.containers: Required value',
            id="invalid-object",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Frob\nmetadata: {name: x}\n",
            'error: resource mapping not found for name: "x" namespace: "" from "STDIN": '
            'no matches for kind "Frob" in version "v1"',
            id="unknown-kind",
        ),
        pytest.param(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: gen-}\n",
            "error: from gen-: cannot use generate name with apply",
            id="generate-name-refused",
        ),
    ],
)
def test_apply_errors_exit_1(minik3s_cluster: ServerProcess, manifest: str, stderr: str) -> None:
    r = cli(minik3s_cluster, "apply", "-f", "-", stdin=manifest)
    assert r.returncode == 1
    assert stderr in r.stderr


@pytest.fixture
def get_ns(minik3s_cluster: ServerProcess, api: httpx.Client) -> str:
    ns = "cli-get"
    r = cli(
        minik3s_cluster,
        "apply",
        "-f",
        "-",
        stdin=namespace_yaml(ns)
        + "---\n"
        + pod_yaml("a-1", ns)
        + "---\n"
        + pod_yaml("b-1", ns, labels="{app: db}"),
    )
    assert r.returncode == 0, r.stderr

    def running() -> bool:
        items = api.get(f"/api/v1/namespaces/{ns}/pods").json()["items"]
        return len(items) == 2 and all(p.get("status", {}).get("phase") == "Running" for p in items)

    wait_for(running, what="pods running")
    return ns


def test_get_prints_server_side_table(minik3s_cluster: ServerProcess, get_ns: str) -> None:
    r = cli(minik3s_cluster, "get", "pods", "-n", get_ns)
    assert r.returncode == 0, r.stderr
    rows = table(r.stdout)
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [row[:4] for row in rows[1:]] == [["a-1", "1/1", "Running", "0"], ["b-1", "1/1", "Running", "0"]]
    assert r.stdout.splitlines()[0].startswith("NAME  ")  # padded like kubectl's tab writer


def test_get_wide_adds_priority_one_columns(minik3s_cluster: ServerProcess, get_ns: str) -> None:
    rows = table(cli(minik3s_cluster, "get", "-o", "wide", "po", "-n", get_ns, "a-1").stdout)
    assert rows[0] == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED",
        "NODE",
        "READINESS",
        "GATES",
    ]
    assert rows[1][0] == "a-1" and rows[1][6].startswith("node-")


def test_get_all_namespaces_adds_namespace_column_and_labels(
    minik3s_cluster: ServerProcess, get_ns: str
) -> None:
    rows = table(cli(minik3s_cluster, "get", "pods", "-A", "-l", "app=db", "--show-labels").stdout)
    assert rows[0] == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "LABELS"]
    assert [(r[0], r[1], r[-1]) for r in rows[1:]] == [(get_ns, "b-1", "app=db")]


def test_get_yaml_of_one_object_and_json_list(minik3s_cluster: ServerProcess, get_ns: str) -> None:
    one = yaml.safe_load(cli(minik3s_cluster, "get", "pod/a-1", "-n", get_ns, "-o", "yaml").stdout)
    assert (one["apiVersion"], one["kind"], one["metadata"]["name"]) == ("v1", "Pod", "a-1")
    assert "managedFields" not in one["metadata"]
    many = json.loads(cli(minik3s_cluster, "get", "pods", "-n", get_ns, "-o", "json").stdout)
    assert many["kind"] == "List" and many["apiVersion"] == "v1"
    assert [(i["kind"], i["metadata"]["name"]) for i in many["items"]] == [("Pod", "a-1"), ("Pod", "b-1")]
    names = cli(minik3s_cluster, "get", "pods", "-n", get_ns, "-o", "name").stdout
    assert names.splitlines() == ["pod/a-1", "pod/b-1"]


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        pytest.param(
            ("get", "frobs"), 'error: the server doesn\'t have a resource type "frobs"', id="unknown-kind"
        ),
        pytest.param(
            ("get", "pods", "nope", "-n", "default"),
            'Error from server (NotFound): pods "nope" not found',
            id="missing-name",
        ),
        pytest.param(
            ("describe", "nodes", "nope"),
            'Error from server (NotFound): nodes "nope" not found',
            id="describe-missing-name",
        ),
    ],
)
def test_get_errors_exit_1(minik3s_cluster: ServerProcess, args: tuple[str, ...], stderr: str) -> None:
    r = cli(minik3s_cluster, *args)
    assert r.returncode == 1
    assert r.stderr.strip() == stderr


def test_get_empty_namespace_says_no_resources(minik3s_cluster: ServerProcess) -> None:
    r = cli(minik3s_cluster, "get", "pods", "-n", "cli-empty")
    assert (r.returncode, r.stdout, r.stderr.strip()) == (0, "", "No resources found in cli-empty namespace.")


def test_get_cluster_scoped_and_several_kinds(minik3s_cluster: ServerProcess) -> None:
    r = cli(minik3s_cluster, "get", "nodes,pc")
    blocks = r.stdout.split("\n\n")
    assert table(blocks[0])[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert table(blocks[0])[1][0] == "node/node-1"
    assert table(blocks[1])[0] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert any(row[0] == "priorityclass.scheduling.k8s.io/system-node-critical" for row in table(blocks[1]))


async def test_get_watch_streams_new_rows(minik3s_cluster: ServerProcess) -> None:
    ns = "cli-watch"

    def cm(name: str) -> str:
        return (
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {ns}}}\ndata: {{k: v}}\n"
        )

    assert (
        cli(minik3s_cluster, "apply", "-f", "-", stdin=namespace_yaml(ns) + "---\n" + cm("w0")).returncode
        == 0
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "minik3s",
        "get",
        "configmaps",
        "-n",
        ns,
        "-w",
        "--server",
        minik3s_cluster.url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        async def next_row() -> str:
            # the namespace's kube-root-ca.crt (the root CA publisher's) may be listed or arrive
            # as a watch event at any point: the rows under test are the test's own ConfigMaps
            while (line := (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()).startswith(
                    "kube-root-ca.crt "):
                pass
            return line

        header, first = [await next_row() for _ in range(2)]
        assert [header.split()[:2], first.split()[:2]] == [["NAME", "DATA"], ["w0", "1"]]
        await asyncio.to_thread(cli, minik3s_cluster, "apply", "-f", "-", stdin=cm("w1"))
        row = await next_row()
        assert row.split()[:2] == ["w1", "1"]
        assert row.index(" 1 ") + 1 == header.index("DATA")  # the new row lines up under the header
    finally:
        proc.terminate()
        await proc.wait()


async def test_get_watch_of_one_object_prints_it_once_then_changes(minik3s_cluster: ServerProcess) -> None:
    ns = "cli-watch-one"

    def cm(value: str) -> str:
        return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: one, namespace: {ns}}}\ndata: {value}\n"

    assert (
        cli(
            minik3s_cluster, "apply", "-f", "-", stdin=namespace_yaml(ns) + "---\n" + cm("{a: '1'}")
        ).returncode
        == 0
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "minik3s",
        "get",
        "cm",
        "one",
        "-n",
        ns,
        "-w",
        "--server",
        minik3s_cluster.url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        lines = [(await asyncio.wait_for(proc.stdout.readline(), 30)).decode().split()[:2] for _ in range(2)]
        assert lines == [["NAME", "DATA"], ["one", "1"]]
        await asyncio.to_thread(cli, minik3s_cluster, "apply", "-f", "-", stdin=cm("{a: '1', b: '2'}"))
        # the synthetic ADDED event of the watch is not printed: the next row is the change
        row = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert row.split()[:2] == ["one", "2"]
    finally:
        proc.terminate()
        await proc.wait()


def test_delete_waits_until_the_pod_is_gone(minik3s_cluster: ServerProcess, api: httpx.Client) -> None:
    ns = "cli-delete"
    r = cli(minik3s_cluster, "apply", "-f", "-", stdin=namespace_yaml(ns) + "---\n" + pod_yaml("victim", ns))
    assert r.returncode == 0, r.stderr
    wait_for(
        lambda: (
            api.get(f"/api/v1/namespaces/{ns}/pods/victim").json().get("status", {}).get("phase") == "Running"
        ),
        what="pod running",
    )

    d = cli(minik3s_cluster, "delete", "pod", "victim", "-n", ns, "--grace-period", "2")
    assert (d.returncode, d.stdout) == (0, 'pod "victim" deleted\n'), d.stderr
    assert api.get(f"/api/v1/namespaces/{ns}/pods/victim").status_code == 404  # gone when the command returns

    again = cli(minik3s_cluster, "delete", "pod", "victim", "-n", ns)
    assert (again.returncode, again.stderr.strip()) == (
        1,
        'Error from server (NotFound): pods "victim" not found',
    )
    ignored = cli(minik3s_cluster, "delete", "pod", "victim", "-n", ns, "--ignore-not-found")
    assert (ignored.returncode, ignored.stdout, ignored.stderr) == (0, "", "")


def test_delete_from_file_without_waiting(
    minik3s_cluster: ServerProcess, tmp_path: Path, api: httpx.Client
) -> None:
    f = tmp_path / "cm.yaml"
    f.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: del-me}\n---\n"
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: cli-del}\nvalue: 5\n"
    )
    assert cli(minik3s_cluster, "apply", "-f", str(f)).returncode == 0
    r = cli(minik3s_cluster, "delete", "-f", str(f), "--wait=false")
    assert r.stdout.splitlines() == [
        'configmap "del-me" deleted',
        'priorityclass.scheduling.k8s.io "cli-del" deleted',
    ]
    assert api.get("/api/v1/namespaces/default/configmaps/del-me").status_code == 404


def test_describe_pod_shows_sections_and_events(minik3s_cluster: ServerProcess, api: httpx.Client) -> None:
    ns = "cli-describe"
    r = cli(minik3s_cluster, "apply", "-f", "-", stdin=namespace_yaml(ns) + "---\n" + pod_yaml("desc-1", ns))
    assert r.returncode == 0, r.stderr

    def scheduled_event() -> bool:
        evs = api.get(f"/api/v1/namespaces/{ns}/events").json()["items"]
        return any(e.get("reason") == "Scheduled" for e in evs)

    wait_for(scheduled_event, what="Scheduled event")
    out = cli(minik3s_cluster, "describe", "pod", "desc", "-n", ns)  # a name prefix matches, as in kubectl
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["Name:", "desc-1"]
    assert lines[1].split() == ["Namespace:", ns]
    assert any(ln.split()[:2] == ["Requests:"] or ln.strip() == "Requests:" for ln in lines)
    events = lines[lines.index("Events:") :]
    assert events[1].split() == ["Type", "Reason", "Age", "From", "Message"]
    scheduled = [ln for ln in events if " Scheduled " in ln]
    assert scheduled and "default-scheduler" in scheduled[0]
    assert f"Successfully assigned {ns}/desc-1 to node-" in scheduled[0]


def test_describe_node_lists_its_pods(minik3s_cluster: ServerProcess) -> None:
    out = cli(minik3s_cluster, "describe", "node", "node-1")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["Name:", "node-1"]
    for section in ("Conditions:", "Capacity:", "Allocatable:", "System Info:", "Allocated resources:"):
        assert section in lines
    assert any(ln.startswith("Non-terminated Pods:") for ln in lines)


def test_describe_other_kinds_uses_generic_layout(minik3s_cluster: ServerProcess) -> None:
    r = cli(minik3s_cluster, "describe", "priorityclass", "system-node-critical")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["Name:", "system-node-critical"]
    assert ["API", "Version:", "scheduling.k8s.io/v1"] in [ln.split() for ln in lines]
    assert ["Value:", "2000001000"] in [ln.split() for ln in lines]
    assert lines[-1].split() == ["Events:", "<none>"]


def test_describe_deployment_names_its_replica_set_and_events(
    minik3s_cluster: ServerProcess, api: httpx.Client
) -> None:
    ns = "cli-deploy"
    manifest = namespace_yaml(ns) + (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: cli-deploy}\n"
        "spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n"
        "  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n"
    )
    assert cli(minik3s_cluster, "apply", "-f", "-", stdin=manifest).returncode == 0
    wait_for(
        lambda: (
            api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web")
            .json()
            .get("status", {})
            .get("availableReplicas")
            == 2
        ),
        what="deployment available",
    )
    lines = cli(minik3s_cluster, "describe", "deploy", "web", "-n", ns).stdout.splitlines()
    fields = {ln.split(":", 1)[0]: ln.split(":", 1)[1].strip() for ln in lines if ":" in ln and ln[0] != " "}
    assert fields["Replicas"] == "2 desired | 2 updated | 2 total | 2 available | 0 unavailable"
    assert fields["Selector"] == "app=web"
    assert fields["StrategyType"] == "RollingUpdate"
    assert fields["NewReplicaSet"].startswith("web-") and fields["NewReplicaSet"].endswith(
        "(2/2 replicas created)"
    )
    assert fields["OldReplicaSets"] == "<none>"
    assert any("ScalingReplicaSet" in ln and "deployment-controller" in ln for ln in lines)
