"""The package's layers (docs/package.md, "Package map"): every import, function-level ones too,
goes to the same or a lower layer, and no two modules import each other in a loop."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "workbench"

PACKAGE_PAGE = PACKAGE.parent / "docs" / "package.md"


def _readme_floors() -> dict[str, int]:
    """Top-level module or package -> floor, read from the package map in docs/package.md (a table
    row per floor: ``| 3. calls, ... | `llm`, `qualify` | ...``), so the map a newcomer
    reads is the one these tests hold the imports to."""
    text = PACKAGE_PAGE.read_text(encoding="utf-8")
    section = text[text.index("## Package map"):]
    section = section[:section.index("\n## ")]
    floors = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and re.match(r"\d+\.", cells[0]):
            for name in re.findall(r"`([a-z_]+)`", cells[1]):
                floors[name] = int(cells[0].split(".")[0])
    return floors


#: Top-level module or package -> floor (1 = foundation ... 7 = commands).
LAYERS = {**_readme_floors(), "__init__": 0}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every ``workbench.*`` module the file imports, at any depth of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("workbench")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "workbench":
                out |= {f"workbench.{a.name}" for a in node.names}
            elif node.module.startswith("workbench."):
                out.add(node.module)
    return out


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


FILES = sorted(p for p in PACKAGE.rglob("*.py"))
GRAPH = {_module_name(p): _imports(p) for p in FILES}


def test_every_top_level_module_has_a_layer():
    assert len(set(LAYERS.values()) - {0}) == 7, LAYERS
    assert {_top(m) for m in GRAPH} <= set(LAYERS), {_top(m) for m in GRAPH} - set(LAYERS)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down_or_sideways(path):
    me = _module_name(path)
    if me == "workbench":  # the package face re-exports lazily from every layer
        return
    up = [m for m in GRAPH[me] if _top(m) != _top(me) and LAYERS[_top(m)] > LAYERS[_top(me)]]
    assert not up, f"{me} (layer {LAYERS[_top(me)]}) imports from a higher layer: {up}"


def test_no_import_loops_between_modules():
    known = set(GRAPH)

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    edges = {m: {t for t in map(resolve, deps) if t and t != m} for m, deps in GRAPH.items()}
    # a package's __init__ re-exports its own modules: edges from a package into itself are
    # a face, not a loop
    edges = {m: {t for t in ts if not t.startswith(m + ".")} for m, ts in edges.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                loop = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import loop: " + " -> ".join(loop))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)


def test_only_llm_imports_litellm():
    found = []
    for path in FILES:
        if _top(_module_name(path)) == "llm":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{_module_name(path)}: {n}" for n in names if n.split(".")[0] == "litellm"]
    assert not found, found


def test_no_study_imports_another():
    """Editing one study never breaks another: what studies share lives in
    ``workbench.studies.common`` (or a lower layer)."""
    studies = PACKAGE / "studies"
    names = {p.name for p in studies.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    names -= {"common", "__pycache__"}
    assert {"s1_judge_methods", "x2_human_agreement", "x3_judge_qualification"} <= names
    crossings = []
    for study in sorted(names):
        for path in (studies / study).rglob("*.py"):
            for module in _imports(path):
                parts = module.split(".")
                if len(parts) > 2 and parts[1] == "studies" and parts[2] in names - {study}:
                    crossings.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert crossings == []
