"""Output printers for `get` (layer L5, CLI): server-side Tables through the tabwriter, and
`-o yaml|json|name` the way kubectl prints them; ages as apimachinery's HumanDuration.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

import yaml

from minik3s.api.types import JsonDict
from minik3s.cli.kubectl.discovery import (
    ApiResource,
)
from minik3s.cli.kubectl.palette import Palette, status_style
from minik3s.cli.kubectl.tabwriter import TabWriter
from minik3s.utils import clock as _clock


def human_duration(seconds: float) -> str:
    """apimachinery's `duration.HumanDuration` of a number of seconds (45s, 3m20s, 2d3h, ...)."""
    return _clock.human_duration(timedelta(seconds=seconds))


def parse_time(s: Any) -> datetime | None:
    return _clock.parse_time(s)


def age_of(ts: Any, now: datetime) -> str:
    t = parse_time(ts)
    return "<unknown>" if t is None else human_duration((now - t).total_seconds())


class _GoYamlDumper(yaml.SafeDumper):  # type: ignore[misc]
    """YAML the way kubectl prints it (sigs.k8s.io/yaml): keys sorted, sequences not indented,
    no line wrapping, double quotes where a plain scalar would be ambiguous, `|` for multi-line."""

    def choose_scalar_style(self) -> str:
        style = super().choose_scalar_style()
        return '"' if style == "'" else style


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data and not any(line != line.rstrip() for line in data.split("\n")):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_GoYamlDumper.add_representer(str, _str_representer)


def to_yaml(obj: Any) -> str:
    return str(
        yaml.dump(
            obj,
            Dumper=_GoYamlDumper,
            sort_keys=True,
            default_flow_style=False,
            allow_unicode=True,
            width=1 << 30,
        )
    )


def to_json(obj: Any) -> str:
    """Go's json.MarshalIndent(obj, "", "    "): sorted keys, HTML characters escaped."""
    text = json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def for_output(obj: JsonDict, res: ApiResource) -> JsonDict:
    o = copy.deepcopy(obj)
    o.setdefault("apiVersion", res.api_version)
    o.setdefault("kind", res.kind)
    meta = o.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)  # kubectl --show-managed-fields=false
    return dict(sorted(o.items()))


def as_list(items: list[JsonDict]) -> JsonDict:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


@dataclass(slots=True)
class TablePrinter:
    """Prints server-side Tables like kubectl's table printer: upper-cased headers, priority-1
    columns only with `-o wide`, NAMESPACE first with `-A`, LABELS last with `--show-labels`."""

    out: TextIO
    pal: Palette
    wide: bool = False
    all_namespaces: bool = False
    show_labels: bool = False
    no_headers: bool = False
    name_prefix: str = ""
    writer: TabWriter = field(default_factory=lambda: TabWriter(minwidth=6, padding=3, remember_widths=True))
    header_done: bool = False
    column_defs: list[JsonDict] = field(default_factory=list)
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def _columns(self, table: JsonDict) -> list[tuple[int, JsonDict]]:
        # watch events after the first carry `columnDefinitions: null`: keep the last ones seen
        cols = table.get("columnDefinitions") or self.column_defs
        self.column_defs = cols
        return [(i, c) for i, c in enumerate(cols) if self.wide or not c.get("priority")]

    def print_table(self, table: JsonDict) -> None:
        if table.get("kind") != "Table":
            table = self.fallback_table(table)
        cols = self._columns(table)
        header = [str(c.get("name", "")).upper() for _, c in cols]
        if self.all_namespaces:
            header.insert(0, "NAMESPACE")
        if self.show_labels:
            header.append("LABELS")
        status_cols = {j for j, h in enumerate(header) if h == "STATUS"}
        lines: list[str] = []
        if not self.header_done and not self.no_headers:
            lines.append("\t".join(header))
        for row in table.get("rows") or []:
            cells = row.get("cells") or []
            meta = ((row.get("object") or {}).get("metadata")) or {}
            vals = []
            for i, c in cols:
                v = cells[i] if i < len(cells) else None
                text = self._cell(v)
                if c.get("format") == "name" and self.name_prefix:
                    text = f"{self.name_prefix}/{text}"
                vals.append(text)
            if self.all_namespaces:
                vals.insert(0, str(meta.get("namespace") or ""))
            if self.show_labels:
                labels = meta.get("labels") or {}
                vals.append(",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>")
            lines.append("\t".join(vals))
        header_line = 0 if lines and not self.header_done and not self.no_headers else -1
        self.header_done = True
        if not lines:
            return

        def style(line: int, col: int, text: str) -> str:
            if line == header_line:
                return self.pal.paint("bold", text)
            if col in status_cols:
                return self.pal.paint(status_style(text), text)
            return text

        self.out.write(self.writer.render("\n".join(lines) + "\n", style=style if self.pal.enabled else None))
        self.out.flush()

    @staticmethod
    def _cell(v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        text = str(v)
        for i, ch in enumerate(text):
            if ch in "\f\n\r":
                return text[:i] + "..."
        return text

    def fallback_table(self, lst: JsonDict) -> JsonDict:
        """A plain list or object (server without Tables): NAME and AGE, as kubectl does."""
        items = lst.get("items") if "items" in lst else [lst]
        now = self.now()
        rows = [
            {
                "cells": [
                    (o.get("metadata") or {}).get("name", ""),
                    age_of((o.get("metadata") or {}).get("creationTimestamp"), now),
                ],
                "object": {"metadata": o.get("metadata") or {}},
            }
            for o in items or []
        ]
        return {
            "kind": "Table",
            "columnDefinitions": [
                {"name": "Name", "format": "name", "priority": 0},
                {"name": "Age", "priority": 0},
            ],
            "rows": rows,
        }

    def print_status_row(self, status: JsonDict) -> None:
        """An ERROR watch event, printed as kubectl does (STATUS REASON MESSAGE)."""
        text = (
            "STATUS\tREASON\tMESSAGE\n"
            + "\t".join(str(status.get(k, "")) for k in ("status", "reason", "message"))
            + "\n"
        )
        self.out.write(TabWriter().render(text))
        self.out.flush()
