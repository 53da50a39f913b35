"""Manifest loading for `apply -f` and `delete -f` (layer L5, CLI): files, directories, stdin;
multi-document YAML or JSON; `kind: List` expanded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import yaml

from minik3s.api.types import JsonDict
from minik3s.cli.kubectl.errors import CommandError

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(slots=True)
class Manifest:
    source: str
    obj: JsonDict


def _manifest_files(paths: Iterable[str], *, recursive: bool) -> list[str]:
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            found = path.rglob("*") if recursive else path.iterdir()
            out.extend(str(f) for f in sorted(found) if f.is_file() and f.suffix in MANIFEST_SUFFIXES)
        elif path.exists():
            out.append(str(path))
        else:
            raise CommandError(f'the path "{p}" does not exist')
    return out


def load_manifests(
    paths: Iterable[str], *, recursive: bool = False, stdin: TextIO | None = None, verb: str = "apply"
) -> list[Manifest]:
    """Every object in FILE|DIR|- (multi-document YAML or JSON; `kind: List` is expanded)."""
    result: list[Manifest] = []
    for f in _manifest_files(paths, recursive=recursive):
        text = (stdin or sys.stdin).read() if f == "-" else Path(f).read_text()
        source = "STDIN" if f == "-" else f
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError as e:
            raise CommandError(f"error parsing {source}: {e}") from e
        for doc in docs:
            if doc is None:
                continue
            if not isinstance(doc, dict):
                raise CommandError(f"error parsing {source}: a document is not an object")
            items = (
                doc.get("items") if str(doc.get("kind", "")).endswith("List") and "items" in doc else [doc]
            )
            for obj in items or []:
                if not obj.get("kind") or not obj.get("apiVersion"):
                    missing = "kind" if not obj.get("kind") else "apiVersion"
                    raise CommandError(
                        f'error validating "{source}": error validating data: {missing} not set'
                    )
                result.append(Manifest(source, json_safe(obj)))
    if not result:
        raise CommandError(f"no objects passed to {verb}")
    return result


def json_safe(v: Any) -> Any:
    """YAML can load dates and timestamps as Python objects; the API wants strings."""
    if isinstance(v, dict):
        return {str(k): json_safe(x) for k, x in v.items()}
    if isinstance(v, list):
        return [json_safe(x) for x in v]
    if isinstance(v, datetime):
        return (
            v.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if v.tzinfo else v.strftime("%Y-%m-%dT%H:%M:%SZ")
        )
    if hasattr(v, "isoformat") and not isinstance(v, str | int | float | bool):
        return v.isoformat()
    return v
