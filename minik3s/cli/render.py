"""Terminal rendering for the CLI (layer L5): the scheduler's per-node, per-plugin explanation."""

from __future__ import annotations

from typing import Any

GREEN, RED, YELLOW, BOLD, DIM, RESET = "\033[32m", "\033[31m", "\033[33m", "\033[1m", "\033[2m", "\033[0m"


def render_explain(doc: dict[str, Any], *, color: bool = False) -> str:
    """Render the document served at /debug/minik3s/explain/namespaces/<ns>/pods/<name>."""

    def c(code: str, s: str) -> str:
        return f"{code}{s}{RESET}" if color else s

    pod = doc.get("pod") or {}
    lines = [c(BOLD, f"Pod {pod.get('namespace')}/{pod.get('name')}") +
             (f"  (scheduler {doc.get('schedulerName')}, attempt {doc.get('attempt')}, at {doc.get('timestamp')})"
              if doc.get("timestamp") else "  (no scheduling attempt yet)")]
    result = doc.get("result", "")
    if doc.get("selectedNode"):
        lines.append(f"Result: {c(GREEN, 'scheduled')} on {c(BOLD, doc['selectedNode'])}")
    else:
        lines.append(f"Result: {c(RED, result or 'unschedulable')}")
    if doc.get("message"):
        lines.append(f"Message: {doc['message']}")
    if "numAllNodes" in doc:
        lines.append(f"Nodes: {doc.get('numAllNodes')} in cluster, {doc.get('numEvaluatedNodes')} evaluated, "
                     f"{doc.get('numFeasibleNodes')} feasible")
    if doc.get("preFilter"):
        pf = doc["preFilter"]
        lines.append(f"PreFilter: {pf.get('plugin')} {pf.get('code')} {'; '.join(pf.get('reasons') or [])}")
    if doc.get("postFilter"):
        pf = doc["postFilter"]
        extra = f" nominated {pf['nominatedNodeName']}" if pf.get("nominatedNodeName") else ""
        lines.append(f"PostFilter: {pf.get('plugin')} {pf.get('code')} {'; '.join(pf.get('reasons') or [])}{extra}")
    gang = doc.get("gang")
    if gang:
        lines.append(c(BOLD, f"Gang: {gang.get('api')} {gang.get('group')}") + f"  ({gang.get('plugin')})")
        if "minMember" in gang:
            lines.append(f"  members {gang.get('members')}, assumed (waiting at Permit) {gang.get('assumed')}, "
                         f"bound {gang.get('bound')}, minimum {gang.get('minMember')}"
                         + (f", minResources {gang['minResources']}" if gang.get("minResources") else ""))
        if gang.get("waiting"):
            lines.append(f"  waiting: {c(YELLOW, gang['waiting'])}")
    nodes: dict[str, Any] = doc.get("nodes") or {}
    feasible = sorted((n for n, v in nodes.items() if v.get("feasible")),
                      key=lambda n: -(nodes[n].get("totalScore") or 0))
    rejected = sorted(n for n, v in nodes.items() if not v.get("feasible"))
    if feasible:
        plugins = sorted({p for n in feasible for p in (nodes[n].get("scores") or {})})
        lines.append("")
        lines.append(c(BOLD, "Scores (normalized x weight = weighted):"))
        header = ["NODE", *plugins, "TOTAL"]
        rows = []
        for n in feasible:
            sc = nodes[n].get("scores") or {}
            cells = [n]
            for p in plugins:
                s = sc.get(p)
                cells.append(f"{s['normalized']}x{s['weight']}={s['weighted']}" if s else "-")
            cells.append(str(nodes[n].get("totalScore", "")))
            rows.append(cells)
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        for i, r in enumerate(rows):
            text = "  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True))
            lines.append(c(GREEN, text) if i == 0 and doc.get("selectedNode") == r[0] else text)
    if rejected:
        lines.append("")
        lines.append(c(BOLD, "Filtered out:"))
        for n in rejected:
            fails = [f for f in nodes[n].get("filters") or [] if f.get("code") != "Success"]
            why = "; ".join(f"{f.get('plugin')}: {', '.join(f.get('reasons') or []) or f.get('code')}" for f in fails)
            lines.append(f"  {n}: {c(YELLOW, why)}")
    return "\n".join(lines)
