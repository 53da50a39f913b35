"""No import cycle anywhere in the five packages (docs/architecture.md "Layers": "No cycle, not
even one hidden in a function-local import").

import-linter's contracts check the direction between layers; this test checks the module graph
inside them. Every module of `minik3s`, `apiserver`, `scheduler`, `descheduler` and
`kubelet_sim` is parsed with `ast` (nothing is imported), and every import statement counts,
wherever it stands: at module level, inside a function, under `if TYPE_CHECKING:`.

How an import statement becomes edges (module -> module):

- `import a.b.c` -> `a.b.c`.
- `from a.b import c`: -> `a.b.c` when `a.b.c` is a module (a submodule is imported), else ->
  `a.b` (a name defined in `a/b/__init__.py` or in module `a.b`). Relative imports are resolved
  against the importing module's package first (`from . import x`, `from ..api import y`).
- `from a.b import *` -> `a.b`.

Package `__init__` edges, the rule: loading `a.b.c` also runs `a/__init__.py` and
`a/b/__init__.py`, but that implicit parent loading is *not* an edge. Python has put the parent in
`sys.modules` before the child runs, so it never deadlocks by itself, and counting it would make
every package whose `__init__` re-exports a submodule look cyclic. What is an edge is naming the
package explicitly to get something *defined in its `__init__`* (`import a.b`, `from a.b import
name` where `name` is not a submodule): that runs the `__init__`, and its re-exports, in the
middle of the importer. This is exactly how cycles hide: `a/b/__init__.py` re-exports
`a.b.x`, `a.b.x` imports `a.b.y`, and `a.b.y` does `from a.b import helper`:
`a.b.y -> a.b -> a.b.x -> a.b.y` is reported, while `from a.b import y` (a submodule) is only the
edge `-> a.b.y`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("minik3s", "apiserver", "scheduler", "descheduler", "kubelet_sim")


def module_files(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the packages (`pkg/__init__.py` -> `pkg`)."""
    out: dict[str, Path] = {}
    for pkg in packages:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = f
    return out


def _resolve_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module named by a `from X import ...` statement."""
    if not node.level:
        return node.module or ""
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".")
    if node.level > 1:
        parts = parts[: len(parts) - (node.level - 1)]
    base = ".".join(parts)
    return f"{base}.{node.module}" if node.module else base


def imports_of(module: str, source: str, known: set[str], *, is_package: bool = False) -> Iterator[str]:
    """The internal modules `module` imports (edges as the module docstring defines them)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(module, is_package, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if alias.name != "*" and sub in known:
                    yield sub
                elif base in known:
                    yield base


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    files = module_files(root, packages)
    known = set(files)
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        is_package = path.name == "__init__.py"
        graph[mod] = {t for t in imports_of(mod, path.read_text(), known, is_package=is_package) if t != mod}
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp: list[str] = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One concrete cycle through the component's first module (shortest, by BFS), closed."""
    members = set(component)
    start = component[0]
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [*reversed(path), start]
                if child not in prev:
                    prev[child] = node
                    nxt.append(child)
        frontier = nxt
    raise AssertionError(f"no cycle through {start} in {component}")  # pragma: no cover


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    return [a_cycle(graph, comp) for comp in strongly_connected(graph)]


# ---- the rule itself, on small synthetic package trees


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return import_graph(tmp_path, ("pkg",))


@pytest.mark.parametrize(
    ("files", "want"),
    [
        pytest.param(
            {"pkg/__init__.py": "from pkg.x import X\n", "pkg/x.py": "from pkg import y\nX = 1\n",
             "pkg/y.py": "Y = 2\n"},
            [],
            id="init-re-exporting-a-submodule-is-no-cycle",
        ),
        pytest.param(
            {"pkg/__init__.py": "from pkg.x import X\n", "pkg/x.py": "from pkg.y import Y\nX = 1\n",
             "pkg/y.py": "from pkg import X\nY = 2\n"},
            [["pkg", "pkg.x", "pkg.y", "pkg"]],
            id="sibling-importing-a-re-export-through-the-package-is-a-cycle",
        ),
        pytest.param(
            {"pkg/__init__.py": "", "pkg/a.py": "def f():\n    from pkg.b import g\n",
             "pkg/b.py": "from pkg.a import f\n"},
            [["pkg.a", "pkg.b", "pkg.a"]],
            id="function-local-import-counts",
        ),
        pytest.param(
            {"pkg/__init__.py": "", "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                "    from .b import g\n",
             "pkg/b.py": "from . import a\n"},
            [["pkg.a", "pkg.b", "pkg.a"]],
            id="type-checking-and-relative-imports-count",
        ),
        pytest.param(
            {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/c.py": "from ..d import x\n",
             "pkg/d.py": "import pkg.sub.c\nx = 1\n"},
            [["pkg.d", "pkg.sub.c", "pkg.d"]],
            id="parent-relative-import-resolves",
        ),
    ],
)
def test_cycle_rule(tmp_path: Path, files: dict[str, str], want: list[list[str]]) -> None:
    assert cycles(_tree(tmp_path, files)) == want


# ---- the project


def test_the_project_import_graph_has_no_cycle() -> None:
    graph = import_graph(ROOT, PACKAGES)
    assert len(graph) > 100  # the walk found the packages
    components = strongly_connected(graph)
    report = "\n".join(f"{' -> '.join(a_cycle(graph, comp))}   (modules in this knot: {', '.join(comp)})"
                       for comp in components)
    assert not components, f"import cycles ({len(components)}):\n{report}"
