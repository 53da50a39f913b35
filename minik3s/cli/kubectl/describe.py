"""`minik3s describe` (layer L5, CLI): kubectl's describers for pods, nodes, deployments,
replica sets and config maps, the generic nested dump for other kinds, and the object's Events.
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TextIO

from minik3s.api.errors import ApiError, NotFoundError
from minik3s.api.types import JsonDict
from minik3s.cli.kubectl.api import Api, list_all
from minik3s.cli.kubectl.discovery import (
    ApiResource,
    Discovery,
    no_resources,
    parse_targets,
    target_namespace,
)
from minik3s.cli.kubectl.errors import format_error
from minik3s.cli.kubectl.printers import (
    age_of,
    human_duration,
    parse_time,
)
from minik3s.cli.kubectl.tabwriter import TabWriter


class PrefixWriter:
    """kubectl's describe writer: `write(level, "Key:\\tvalue\\n")`, two spaces per level, then the
    whole text aligned by a tabwriter with minwidth 0, padding 2."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, level: int, text: str) -> None:
        self.parts.append("  " * level + text)

    def render(self) -> str:
        return TabWriter(minwidth=0, padding=2).render("".join(self.parts))


def _describe_time(ts: Any) -> str:
    t = parse_time(ts)
    return t.astimezone().strftime("%a, %d %b %Y %H:%M:%S %z") if t else "<unknown>"


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MAX_ANNOTATION_LEN = 140


def _multiline_map(
    w: PrefixWriter, level: int, title: str, m: dict[str, Any] | None, *, sep: str = "="
) -> None:
    """Labels (`k=v`) or annotations (`k: v`, sep ": "; the last-applied annotation hidden, long
    values cut at 140 characters), one per line, the first on the title's line."""
    w.write(level, f"{title}:\t")
    if m and sep != "=":
        m = {
            k: (str(v)[:MAX_ANNOTATION_LEN] + "..." if len(str(v)) > MAX_ANNOTATION_LEN else v)
            for k, v in m.items()
            if k != LAST_APPLIED
        }
    if not m:
        w.write(0, "<none>\n")
        return
    for i, k in enumerate(sorted(m)):
        line = f"{k}{sep}{m[k]}\n"
        w.write(0, line) if i == 0 else w.write(level, "\t" + line)


def smart_label(key: str) -> str:
    """kubectl's generic describer label: minMember → "Min Member", uid → "UID"; keys with
    characters other than letters and '-' (label keys like app.kubernetes.io/name) stay as they are."""
    if any(not (ch.isalpha() or ch == "-") for ch in key):
        return key
    words: list[str] = []
    cur = ""
    for i, ch in enumerate(key):
        boundary = (
            ch.isupper() and cur and (not key[i - 1].isupper() or (i + 1 < len(key) and key[i + 1].islower()))
        )
        if boundary:
            words.append(cur)
            cur = ""
        cur += ch
    if cur:
        words.append(cur)
    acronyms = {"API", "URL", "UID", "OSB", "GUID"}
    return " ".join(w.upper() if w.upper() in acronyms else w[:1].upper() + w[1:] for w in words)


def _unstructured(w: PrefixWriter, level: int, value: Any, skip: set[str], prefix: str = "") -> None:
    if isinstance(value, dict):
        for k in sorted(value):
            path = f"{prefix}.{k}"
            if path in skip:
                continue
            v = value[k]
            label = smart_label(k)
            if isinstance(v, dict):
                w.write(level, f"{label}:\n")
                _unstructured(w, level + 1, v, skip, path)
            elif isinstance(v, list):
                w.write(level, f"{label}:\n")
                for item in v:
                    if isinstance(item, dict):
                        _unstructured(w, level + 1, item, skip, path)
                    else:
                        w.write(level + 1, f"{_scalar(item)}\n")
            else:
                w.write(level, f"{label}:\t{_scalar(v)}\n")


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return "<nil>" if v is None else str(v)


def _toleration(t: JsonDict) -> str:
    s = str(t.get("key") or "")
    if t.get("value"):
        s += f"={t['value']}"
    if t.get("effect"):
        s += f":{t['effect']}"
    if t.get("operator") == "Exists" and not t.get("value"):
        s += " op=Exists" if (t.get("key") or t.get("effect")) else "op=Exists"
    if t.get("tolerationSeconds") is not None:
        s += f" for {t['tolerationSeconds']}s"
    return s


def _write_list(w: PrefixWriter, level: int, title: str, values: list[str]) -> None:
    w.write(level, f"{title}:\t")
    if not values:
        w.write(0, "<none>\n")
        return
    for i, v in enumerate(values):
        w.write(0, v + "\n") if i == 0 else w.write(level, "\t" + v + "\n")


def _container_state(w: PrefixWriter, title: str, st: JsonDict | None) -> None:
    st = st or {}
    if "running" in st:
        w.write(2, f"{title}:\tRunning\n")
        w.write(3, f"Started:\t{_describe_time((st['running'] or {}).get('startedAt'))}\n")
    elif "waiting" in st:
        w.write(2, f"{title}:\tWaiting\n")
        if (st["waiting"] or {}).get("reason"):
            w.write(3, f"Reason:\t{st['waiting']['reason']}\n")
    elif "terminated" in st:
        t = st["terminated"] or {}
        w.write(2, f"{title}:\tTerminated\n")
        if t.get("reason"):
            w.write(3, f"Reason:\t{t['reason']}\n")
        if t.get("message"):
            w.write(3, f"Message:\t{t['message']}\n")
        w.write(3, f"Exit Code:\t{t.get('exitCode', 0)}\n")
        w.write(3, f"Started:\t{_describe_time(t.get('startedAt'))}\n")
        w.write(3, f"Finished:\t{_describe_time(t.get('finishedAt'))}\n")
    else:
        w.write(2, f"{title}:\tWaiting\n")


def _describe_containers(
    w: PrefixWriter,
    title: str,
    containers: list[JsonDict],
    statuses: dict[Any, JsonDict] | None,
    *,
    template: bool,
) -> None:
    """kubectl's describeContainers: a pod's containers (with their state) or a pod template's
    (`template=True`: indented under "Pod Template:", no state)."""
    head, name_indent = ("  ", "   ") if template else ("", "  ")
    w.write(0, f"{head}{title}:\n")
    for c in containers:
        cs = (statuses or {}).get(c.get("name")) or {}
        w.write(0, f"{name_indent}{c.get('name')}:\n")
        if cs.get("containerID"):
            w.write(2, f"Container ID:\t{cs['containerID']}\n")
        w.write(2, f"Image:\t{c.get('image', '')}\n")
        if not template:
            w.write(2, f"Image ID:\t{cs.get('imageID', '')}\n")
        ports = c.get("ports") or []
        w.write(
            2,
            "Port:\t"
            + (", ".join(f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}" for p in ports) or "<none>")
            + "\n",
        )
        w.write(
            2,
            "Host Port:\t"
            + (", ".join(f"{p.get('hostPort', 0)}/{p.get('protocol', 'TCP')}" for p in ports) or "<none>")
            + "\n",
        )
        if c.get("command"):
            _write_list(w, 2, "Command", [str(x) for x in c["command"]])
        if c.get("args"):
            _write_list(w, 2, "Args", [str(x) for x in c["args"]])
        if not template:
            _container_state(w, "State", cs.get("state"))
            if cs.get("lastState"):
                _container_state(w, "Last State", cs.get("lastState"))
            w.write(2, f"Ready:\t{'True' if cs.get('ready') else 'False'}\n")
            w.write(2, f"Restart Count:\t{cs.get('restartCount', 0)}\n")
        res = c.get("resources") or {}
        for rk, rt in (("limits", "Limits"), ("requests", "Requests")):
            if res.get(rk):
                w.write(2, f"{rt}:\n")
                for name in sorted(res[rk]):
                    w.write(3, f"{name}:\t{res[rk][name]}\n")
        env = c.get("env") or []
        if env:
            w.write(2, "Environment:\n")
            for e in env:
                w.write(3, f"{e.get('name')}:\t{e.get('value', '')}\n")
        else:
            w.write(2, "Environment:\t<none>\n")
        mounts = c.get("volumeMounts") or []
        if mounts:
            w.write(2, "Mounts:\n")
            for m in mounts:
                w.write(
                    3, f"{m.get('mountPath')} from {m.get('name')} ({'ro' if m.get('readOnly') else 'rw'})\n"
                )
        else:
            w.write(2, "Mounts:\t<none>\n")


def _describe_volumes(w: PrefixWriter, vols: list[JsonDict], *, head: str = "") -> None:
    if not vols:
        w.write(0, f"{head}Volumes:\t<none>\n")
        return
    w.write(0, f"{head}Volumes:\n")
    for v in vols:
        w.write(0, f"{head}  {v.get('name')}:\n")
        projected = v.get("projected")
        if isinstance(projected, dict):
            _describe_projected(w, head, projected)
            continue
        kinds = [k for k in v if k != "name"]
        w.write(0, f"{head}    Type:\t{kinds[0] if kinds else '<unknown>'}\n")


def _describe_projected(w: PrefixWriter, head: str, projected: JsonDict) -> None:
    """kubectl's printProjectedVolumeSource: one line per source (the token's lifetime, the
    ConfigMap or Secret and whether it is optional, a downward API part)."""
    w.write(0, f"{head}    Type:\tProjected (a volume that contains injected data from multiple sources)\n")
    for src in projected.get("sources") or []:
        if not isinstance(src, dict):
            continue
        for key, label in (("secret", "SecretName"), ("configMap", "ConfigMapName")):
            ref = src.get(key)
            if isinstance(ref, dict):
                w.write(0, f"{head}    {label}:\t{ref.get('name') or ''}\n")
                w.write(0, f"{head}    Optional:\t{'true' if ref.get('optional') else 'false'}\n")
        if isinstance(src.get("downwardAPI"), dict):
            w.write(0, f"{head}    DownwardAPI:\ttrue\n")
        token = src.get("serviceAccountToken")
        if isinstance(token, dict):
            w.write(0, f"{head}    TokenExpirationSeconds:\t{token.get('expirationSeconds', 3600)}\n")


def describe_pod(pod: JsonDict, events: list[JsonDict] | None, now: datetime) -> str:
    """kubectl's pod describer (the sections and their order)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    if spec.get("priority") is not None:
        w.write(0, f"Priority:\t{spec['priority']}\n")
    if spec.get("priorityClassName"):
        w.write(0, f"Priority Class Name:\t{spec['priorityClassName']}\n")
    w.write(0, f"Service Account:\t{spec.get('serviceAccountName') or ''}\n")
    node = spec.get("nodeName")
    w.write(0, f"Node:\t{node + '/' + status.get('hostIP', '') if node else '<none>'}\n")
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{_describe_time(status['startTime'])}\n")
    _multiline_map(w, 0, "Labels", meta.get("labels"))
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    if meta.get("deletionTimestamp") and status.get("phase") not in ("Succeeded", "Failed"):
        dt = parse_time(meta["deletionTimestamp"])
        lasts = human_duration((dt - now).total_seconds()) if dt else "<unknown>"
        w.write(0, f"Status:\tTerminating (lasts {lasts})\n")
        w.write(0, f"Termination Grace Period:\t{meta.get('deletionGracePeriodSeconds', 0)}s\n")
    else:
        w.write(0, f"Status:\t{status.get('phase', '')}\n")
    if status.get("reason"):
        w.write(0, f"Reason:\t{status['reason']}\n")
    if status.get("message"):
        w.write(0, f"Message:\t{status['message'].strip()}\n")
    w.write(0, f"IP:\t{status.get('podIP') or ''}\n")
    ips = [i.get("ip", "") for i in status.get("podIPs") or []]
    if ips:
        w.write(0, "IPs:\n")
        for ip in ips:
            w.write(1, f"IP:\t{ip}\n")
    else:
        w.write(0, "IPs:\t<none>\n")
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller"):
            w.write(0, f"Controlled By:\t{ref.get('kind')}/{ref.get('name')}\n")
    if status.get("nominatedNodeName"):
        w.write(0, f"NominatedNodeName:\t{status['nominatedNodeName']}\n")
    for title, key, skey in (
        ("Init Containers", "initContainers", "initContainerStatuses"),
        ("Containers", "containers", "containerStatuses"),
    ):
        containers = spec.get(key) or []
        if containers or key == "containers":
            _describe_containers(
                w, title, containers, {st.get("name"): st for st in status.get(skey) or []}, template=False
            )
    if spec.get("readinessGates"):
        w.write(0, "Readiness Gates:\n")
        w.write(1, "Type\tStatus\n")
        gate_status = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        for g in spec["readinessGates"]:
            w.write(1, f"{g.get('conditionType')} \t{gate_status.get(g.get('conditionType'), '<none>')} \n")
    conds = status.get("conditions") or []
    if conds:
        w.write(0, "Conditions:\n")
        w.write(1, "Type\tStatus\n")
        for c in conds:
            w.write(1, f"{c.get('type')} \t{c.get('status')} \n")
    _describe_volumes(w, spec.get("volumes") or [])
    if status.get("qosClass"):
        w.write(0, f"QoS Class:\t{status['qosClass']}\n")
    _multiline_map(w, 0, "Node-Selectors", spec.get("nodeSelector"))
    _write_list(w, 0, "Tolerations", [_toleration(t) for t in spec.get("tolerations") or []])
    tscs = spec.get("topologySpreadConstraints") or []
    if tscs:
        _write_list(
            w,
            0,
            "Topology Spread Constraints",
            [
                f"{t.get('topologyKey')}:{t.get('whenUnsatisfiable')} when max skew {t.get('maxSkew')} is "
                "exceeded for selector " + _selector_text(t.get("labelSelector"))
                for t in tscs
            ],
        )
    if spec.get("schedulingGates"):
        _write_list(w, 0, "Scheduling Gates", [g.get("name", "") for g in spec["schedulingGates"]])
    if events is not None:
        _events(w, events, now)
    return w.render()


def _selector_text(sel: JsonDict | None) -> str:
    if not sel:
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        op = e.get("operator")
        if op in ("In", "NotIn"):
            parts.append(f"{e.get('key')} {op.lower()} ({','.join(e.get('values') or [])})")
        elif op == "Exists":
            parts.append(str(e.get("key")))
        else:
            parts.append(f"!{e.get('key')}")
    return ",".join(parts) or "<none>"


def describe_node(node: JsonDict, pods: list[JsonDict], events: list[JsonDict] | None, now: datetime) -> str:
    """kubectl's node describer: roles, taints, conditions, capacity, the pods on it and what
    they request."""
    from minik3s.api.helpers.resources import node_allocatable, pod_requests
    from minik3s.api.quantity import format_milli, format_quantity

    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    labels = meta.get("labels") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    roles = sorted(
        k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k
    )
    w.write(0, f"Roles:\t{','.join(roles) or '<none>'}\n")
    _multiline_map(w, 0, "Labels", labels)
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    w.write(0, f"CreationTimestamp:\t{_describe_time(meta.get('creationTimestamp'))}\n")
    _write_list(
        w,
        0,
        "Taints",
        [
            f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}"
            for t in spec.get("taints") or []
        ],
    )
    w.write(0, f"Unschedulable:\t{'true' if spec.get('unschedulable') else 'false'}\n")
    conds = status.get("conditions") or []
    if conds:
        w.write(0, "Conditions:\n")
        w.write(1, "Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
        w.write(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
        for c in conds:
            w.write(
                1,
                f"{c.get('type')} \t{c.get('status')} \t{_describe_time(c.get('lastHeartbeatTime'))} \t"
                f"{_describe_time(c.get('lastTransitionTime'))} \t{c.get('reason', '')} \t"
                f"{c.get('message', '')}\n",
            )
    addrs = status.get("addresses") or []
    if addrs:
        w.write(0, "Addresses:\n")
        for a in addrs:
            w.write(1, f"{a.get('type')}:\t{a.get('address')}\n")
    for key, title in (("capacity", "Capacity"), ("allocatable", "Allocatable")):
        if status.get(key):
            w.write(0, f"{title}:\n")
            for k in sorted(status[key]):
                w.write(1, f"{k}:\t{status[key][k]}\n")
    info = status.get("nodeInfo") or {}
    if info:
        w.write(0, "System Info:\n")
        for k, title in (
            ("machineID", "Machine ID"),
            ("systemUUID", "System UUID"),
            ("bootID", "Boot ID"),
            ("kernelVersion", "Kernel Version"),
            ("osImage", "OS Image"),
            ("operatingSystem", "Operating System"),
            ("architecture", "Architecture"),
            ("containerRuntimeVersion", "Container Runtime Version"),
            ("kubeletVersion", "Kubelet Version"),
            ("kubeProxyVersion", "Kube-Proxy Version"),
        ):
            w.write(1, f"{title}:\t{info.get(k, '')}\n")
    if spec.get("podCIDR"):
        w.write(0, f"PodCIDR:\t{spec['podCIDR']}\n")
        w.write(0, f"PodCIDRs:\t{','.join(spec.get('podCIDRs') or [spec['podCIDR']])}\n")
    if spec.get("providerID"):
        w.write(0, f"ProviderID:\t{spec['providerID']}\n")
    running = [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    alloc = node_allocatable(node)
    w.write(0, f"Non-terminated Pods:\t({len(running)} in total)\n")
    w.write(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
    w.write(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")

    def pct(v: int, total: int) -> str:
        return f"{(v * 100 // total) if total else 0}%"

    def limits(p: JsonDict) -> dict[str, int]:
        from minik3s.api.helpers.resources import resource_list_to_ints

        acc: dict[str, int] = {}
        for c in (p.get("spec") or {}).get("containers") or []:
            for k, v in resource_list_to_ints((c.get("resources") or {}).get("limits")).items():
                acc[k] = acc.get(k, 0) + v
        return acc

    tot_req: dict[str, int] = {}
    tot_lim: dict[str, int] = {}
    for p in running:
        pm = p.get("metadata") or {}
        req, lim = pod_requests(p), limits(p)
        for k, v in req.items():
            tot_req[k] = tot_req.get(k, 0) + v
        for k, v in lim.items():
            tot_lim[k] = tot_lim.get(k, 0) + v
        cpu_r, cpu_l = req.get("cpu", 0), lim.get("cpu", 0)
        mem_r, mem_l = req.get("memory", 0), lim.get("memory", 0)
        w.write(
            1,
            f"{pm.get('namespace')}\t{pm.get('name')}\t\t"
            f"{format_milli(cpu_r)} ({pct(cpu_r, alloc.get('cpu', 0))})\t"
            f"{format_milli(cpu_l)} ({pct(cpu_l, alloc.get('cpu', 0))})\t"
            f"{format_quantity(mem_r)} ({pct(mem_r, alloc.get('memory', 0))})\t"
            f"{format_quantity(mem_l)} ({pct(mem_l, alloc.get('memory', 0))})\t"
            f"{age_of(pm.get('creationTimestamp'), now)}\n",
        )
    w.write(0, "Allocated resources:\n")
    w.write(1, "(Total limits may be over 100 percent, i.e., overcommitted.)\n")
    w.write(1, "Resource\tRequests\tLimits\n")
    w.write(1, "--------\t--------\t------\n")
    for r in ("cpu", "memory", "ephemeral-storage"):
        fmt = format_milli if r == "cpu" else format_quantity
        rq, lm = tot_req.get(r, 0), tot_lim.get(r, 0)
        w.write(1, f"{r}\t{fmt(rq)} ({pct(rq, alloc.get(r, 0))})\t{fmt(lm)} ({pct(lm, alloc.get(r, 0))})\n")
    if events is not None:
        _events(w, events, now)
    return w.render()


def _pod_template(w: PrefixWriter, tmpl: JsonDict | None) -> None:
    """kubectl's DescribePodTemplate."""
    w.write(0, "Pod Template:\n")
    if not tmpl:
        w.write(1, "<unset>")
        return
    tmeta, tspec = tmpl.get("metadata") or {}, tmpl.get("spec") or {}
    _multiline_map(w, 0, "  Labels", tmeta.get("labels"))
    if tmeta.get("annotations"):
        _multiline_map(w, 0, "  Annotations", tmeta.get("annotations"), sep=": ")
    if tspec.get("serviceAccountName"):
        w.write(1, f"Service Account:\t{tspec['serviceAccountName']}\n")
    if tspec.get("initContainers"):
        _describe_containers(w, "Init Containers", tspec["initContainers"], None, template=True)
    _describe_containers(w, "Containers", tspec.get("containers") or [], None, template=True)
    _describe_volumes(w, tspec.get("volumes") or [], head="  ")
    if tspec.get("priorityClassName"):
        w.write(1, f"Priority Class Name:\t{tspec['priorityClassName']}\n")
    _multiline_map(w, 0, "  Node-Selectors", tspec.get("nodeSelector"))
    _write_list(w, 0, "  Tolerations", [_toleration(t) for t in tspec.get("tolerations") or []])


def _replica_sets_text(rss: list[JsonDict]) -> str:
    parts = [
        f"{(r.get('metadata') or {}).get('name')} ({(r.get('status') or {}).get('replicas', 0)}/"
        f"{(r.get('spec') or {}).get('replicas', 0)} replicas created)"
        for r in rss
    ]
    return ", ".join(parts) or "<none>"


def describe_deployment(
    d: JsonDict, rss: list[JsonDict], events: list[JsonDict] | None, now: datetime
) -> str:
    """kubectl's deployment describer; `rss` are the ReplicaSets the deployment controls (the
    one whose template matches is the new one)."""
    meta, spec, status = d.get("metadata") or {}, d.get("spec") or {}, d.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"CreationTimestamp:\t{_describe_time(meta.get('creationTimestamp'))}\n")
    _multiline_map(w, 0, "Labels", meta.get("labels"))
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    w.write(0, f"Selector:\t{_selector_text(spec.get('selector'))}\n")
    w.write(
        0,
        f"Replicas:\t{spec.get('replicas', 1)} desired | {status.get('updatedReplicas', 0)} updated | "
        f"{status.get('replicas', 0)} total | {status.get('availableReplicas', 0)} available | "
        f"{status.get('unavailableReplicas', 0)} unavailable\n",
    )
    strategy = spec.get("strategy") or {}
    w.write(0, f"StrategyType:\t{strategy.get('type', '')}\n")
    w.write(0, f"MinReadySeconds:\t{spec.get('minReadySeconds', 0)}\n")
    ru = strategy.get("rollingUpdate")
    if ru is not None:
        w.write(
            0,
            f"RollingUpdateStrategy:\t{ru.get('maxUnavailable', '25%')} max unavailable, "
            f"{ru.get('maxSurge', '25%')} max surge\n",
        )
    _pod_template(w, spec.get("template"))
    conds = status.get("conditions") or []
    if conds:
        w.write(0, "Conditions:\n  Type\tStatus\tReason\n")
        w.write(1, "----\t------\t------\n")
        for c in conds:
            w.write(1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}\n")
    tmpl = _template_without_hash(spec.get("template"))
    new = [r for r in rss if _template_without_hash((r.get("spec") or {}).get("template")) == tmpl][:1]
    old = [r for r in rss if r not in new and ((r.get("spec") or {}).get("replicas") or 0) > 0]
    w.write(0, f"OldReplicaSets:\t{_replica_sets_text(old)}\n")
    w.write(0, f"NewReplicaSet:\t{_replica_sets_text(new)}\n")
    if events is not None:
        _events(w, events, now)
    return w.render()


def _template_without_hash(tmpl: JsonDict | None) -> JsonDict:
    t = copy.deepcopy(tmpl or {})
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop("pod-template-hash", None)
    return t


def describe_replicaset(
    rs: JsonDict, pods: list[JsonDict], events: list[JsonDict] | None, now: datetime
) -> str:
    """kubectl's replica set describer; `pods` are the pods it controls."""
    meta, spec, status = rs.get("metadata") or {}, rs.get("spec") or {}, rs.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"Selector:\t{_selector_text(spec.get('selector'))}\n")
    _multiline_map(w, 0, "Labels", meta.get("labels"))
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller"):
            w.write(0, f"Controlled By:\t{ref.get('kind')}/{ref.get('name')}\n")
    w.write(0, f"Replicas:\t{status.get('replicas', 0)} current / {spec.get('replicas', 1)} desired\n")
    phases = [(p.get("status") or {}).get("phase") for p in pods]
    w.write(
        0,
        f"Pods Status:\t{phases.count('Running')} Running / {phases.count('Pending')} Waiting / "
        f"{phases.count('Succeeded')} Succeeded / {phases.count('Failed')} Failed\n",
    )
    _pod_template(w, spec.get("template"))
    conds = status.get("conditions") or []
    if conds:
        w.write(0, "Conditions:\n  Type\tStatus\tReason\n")
        w.write(1, "----\t------\t------\n")
        for c in conds:
            w.write(1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}\n")
    if events is not None:
        _events(w, events, now)
    return w.render()


def describe_configmap(cm: JsonDict, events: list[JsonDict] | None, now: datetime) -> str:
    """kubectl's config map describer: each key, a `----` rule, the value."""
    meta = cm.get("metadata") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    _multiline_map(w, 0, "Labels", meta.get("labels"))
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    w.write(0, "\nData\n====\n")
    for k, v in sorted((cm.get("data") or {}).items()):
        w.write(0, f"{k}:\n----\n{v}\n\n")
    w.write(0, "\nBinaryData\n====\n")
    for k, v in sorted((cm.get("binaryData") or {}).items()):
        w.write(0, f"{k}: {len(v) * 3 // 4 - v.count('=')} bytes\n")
    w.write(0, "\n")
    if events is not None:
        _events(w, events, now)
    return w.render()


def describe_generic(obj: JsonDict, events: list[JsonDict] | None, now: datetime) -> str:
    """kubectl's generic describer (custom resources and kinds without a dedicated describer)."""
    meta = obj.get("metadata") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    if meta.get("namespace"):
        w.write(0, f"Namespace:\t{meta['namespace']}\n")
    _multiline_map(w, 0, "Labels", meta.get("labels"))
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    skip = {
        ".metadata.name",
        ".metadata.namespace",
        ".metadata.labels",
        ".metadata.annotations",
        ".metadata.managedFields",
    }
    rest = {k: v for k, v in obj.items()}
    w.write(0, f"API Version:\t{rest.pop('apiVersion', '')}\n")
    w.write(0, f"Kind:\t{rest.pop('kind', '')}\n")
    _unstructured(w, 0, {"metadata": rest.pop("metadata", {})}, skip)
    _unstructured(w, 0, rest, skip)
    if events is not None:
        _events(w, events, now)
    return w.render()


def _events(w: PrefixWriter, events: list[JsonDict], now: datetime) -> None:
    """The Events section: oldest first, `Age` as `5s` or `2m (x3 over 5m)`."""
    if not events:
        w.write(0, "Events:\t<none>\n")
        return

    def last(e: JsonDict) -> str:
        return str(
            e.get("lastTimestamp")
            or e.get("eventTime")
            or (e.get("metadata") or {}).get("creationTimestamp")
            or ""
        )

    w.write(0, "Events:\n")
    w.write(1, "Type\tReason\tAge\tFrom\tMessage\n")
    w.write(1, "----\t------\t----\t----\t-------\n")
    for e in sorted(events, key=last):
        # kubectl: a series is aged by its lastObservedTime, an old-style repeat by lastTimestamp,
        # both "(xN over <since eventTime, else firstTimestamp>)"
        series = e.get("series") if isinstance(e.get("series"), dict) else None
        first = e.get("eventTime") or e.get("firstTimestamp")
        if series is not None and series.get("lastObservedTime"):
            age = f"{age_of(series['lastObservedTime'], now)} (x{int(series.get('count') or 0)} over " \
                  f"{age_of(first, now) if first else '<unknown>'})"
        elif int(e.get("count") or 1) > 1 and first:
            age = f"{age_of(last(e), now)} (x{int(e['count'])} over {age_of(first, now)})"
        else:
            age = age_of(first or last(e), now)
        src = (
            (e.get("source") or {}).get("component")
            or e.get("reportingComponent")
            or e.get("reportingController")
            or ""
        )
        w.write(
            1,
            f"{e.get('type', '')}\t{e.get('reason', '')}\t{age}\t{src}\t"
            f"{str(e.get('message', '')).strip()}\n",
        )


async def _events_for(api: Api, disc: Discovery, obj: JsonDict, res: ApiResource) -> list[JsonDict] | None:
    """kubectl's `SearchEvents`: core/v1 events whose involvedObject is `obj` (name, namespace,
    kind and uid). Nodes are asked twice, as kubectl does, because kubelets record node events
    with the node's name as the uid."""
    meta = obj.get("metadata") or {}
    ev = next((r for r in disc.resources if r.group == "" and r.resource == "events"), None)
    if ev is None:
        return None
    base = [
        f"involvedObject.name={meta.get('name', '')}",
        f"involvedObject.namespace={meta.get('namespace', '')}",
        f"involvedObject.kind={obj.get('kind') or res.kind}",
    ]
    uids = [str(meta["uid"])] if meta.get("uid") else [""]
    if (obj.get("kind") or res.kind) == "Node" and meta.get("name"):
        uids.append(str(meta["name"]))
    found: dict[str, JsonDict] = {}
    for uid in uids:
        sel = base + ([f"involvedObject.uid={uid}"] if uid else [])
        try:
            lst = await list_all(
                api, ev.path(meta.get("namespace") or None), {"fieldSelector": ",".join(sel)}
            )
        except ApiError:
            continue  # kubectl tolerates a failing events query
        for e in lst.get("items") or []:
            em = e.get("metadata") or {}
            found[str(em.get("uid") or f"{em.get('namespace')}/{em.get('name')}")] = e
    return list(found.values())


async def _describe_apps(
    api: Api, disc: Discovery, o: JsonDict, res: ApiResource, events: list[JsonDict] | None, now: datetime
) -> str:
    """Deployments need their ReplicaSets, ReplicaSets their pods: the objects in the namespace
    matching the selector whose controller reference is `o`."""
    meta = o.get("metadata") or {}
    sel = ((o.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    params = {"labelSelector": ",".join(f"{k}={v}" for k, v in sorted(sel.items()))} if sel else {}
    child = disc.resolve("replicasets.apps" if res.resource == "deployments" else "pods")
    lst = await list_all(api, child.path(meta.get("namespace")), params)
    owned = [
        c
        for c in lst.get("items") or []
        if any(
            r.get("controller") and r.get("uid") == meta.get("uid")
            for r in (c.get("metadata") or {}).get("ownerReferences") or []
        )
    ]
    if res.resource == "deployments":
        return describe_deployment(o, owned, events, now)
    return describe_replicaset(o, owned, events, now)


async def run_describe(
    api: Api,
    disc: Discovery,
    args: argparse.Namespace,
    *,
    out: TextIO,
    err: TextIO,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> int:
    targets = parse_targets(disc, args.resources)
    ns = target_namespace(args)
    rc = 0
    docs: list[str] = []
    for t in targets:
        tns = (None if args.all_namespaces else ns) if t.res.namespaced else None
        objs: list[JsonDict] = []
        if not t.names:
            params = {"labelSelector": args.selector} if args.selector else {}
            lst = await list_all(api, t.res.path(tns), params)
            objs = list(lst.get("items") or [])
            if not objs:
                no_resources(err, args, [t])
        for n in t.names:
            try:
                objs.append(await api.call("GET", t.res.path(tns, n)))
            except NotFoundError as e:
                # kubectl falls back to a prefix match on the name
                lst = await list_all(api, t.res.path(tns), {})
                matches = [
                    o
                    for o in lst.get("items") or []
                    if (o.get("metadata") or {}).get("name", "").startswith(n)
                ]
                if not matches:
                    print(format_error(e), file=err)
                    rc = 1
                objs.extend(matches)
            except ApiError as e:
                print(format_error(e), file=err)
                rc = 1
        for o in objs:
            o.setdefault("kind", t.res.kind)
            o.setdefault("apiVersion", t.res.api_version)
            events = await _events_for(api, disc, o, t.res) if args.show_events else None
            if t.res.group == "" and t.res.resource == "pods":
                docs.append(describe_pod(o, events, now()))
            elif t.res.group == "" and t.res.resource == "nodes":
                name = (o.get("metadata") or {}).get("name", "")
                pods_res = disc.resolve("pods")
                lst = await list_all(api, pods_res.path(None), {"fieldSelector": f"spec.nodeName={name}"})
                docs.append(describe_node(o, list(lst.get("items") or []), events, now()))
            elif t.res.group == "apps" and t.res.resource in ("deployments", "replicasets"):
                docs.append(await _describe_apps(api, disc, o, t.res, events, now()))
            elif t.res.group == "" and t.res.resource == "configmaps":
                docs.append(describe_configmap(o, events, now()))
            else:
                docs.append(describe_generic(o, events, now()))
    out.write("\n\n".join(docs))
    out.flush()
    return rc
