"""The package's layers (README "Package map"): every import, function-level ones too,
goes to the same or a lower layer, and no two modules import each other in a loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "workbench"

#: Top-level module or package -> layer (1 = foundation ... 5 = surfaces).
LAYERS = {
    "config": 1, "errors": 1, "text": 1, "columns": 1,
    "datasets": 2, "prompts": 2, "stats": 2,
    "sim": 3, "llm": 3.5,  # llm sits on sim: it registers the simulated provider
    "judges": 4, "perturb": 4, "metrics": 4, "qualify": 4,
    "studies": 5, "plots": 5, "notebook": 5.5,  # notebook sessions set the plot style
    "report": 5.5,  # the qualification report: qualify's tables, drawn with plots
    "cli": 6, "run_cli": 6, "llm_cli": 6, "judge_cli": 6, "qualify_cli": 6, "bench": 6,
    "bench_quota": 6,
    "local_model": 6, "__init__": 0,
}


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
