"""The package surface: sorted, complete, cheap to import."""

import subprocess
import sys

import workbench


def test_all_is_sorted_and_every_name_resolves():
    assert workbench.__all__ == sorted(workbench.__all__)
    for name in workbench.__all__:
        assert getattr(workbench, name) is not None, name


def test_import_is_offline_and_light():
    code = (
        "import os, sys, workbench; "
        "print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'], os.environ['HF_HUB_OFFLINE'], "
        "'litellm' in sys.modules, 'pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "1", "False", "False"]
    assert out.stderr == ""


def test_llm_surface_is_sorted_and_resolves():
    from workbench import llm

    assert llm.__all__ == sorted(llm.__all__)
    for name in llm.__all__:
        assert getattr(llm, name) is not None, name
    assert {"peek", "price", "replay_entry", "write_replay_file"} <= set(llm.__all__)


def test_only_the_llm_package_imports_litellm():
    import ast
    from pathlib import Path

    package = Path(workbench.__file__).parent
    importers = set()
    for path in package.rglob("*.py"):
        if path.relative_to(package).parts[0] == "llm":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "litellm" or n.startswith("litellm.") for n in names):
                importers.add(str(path.relative_to(package)))
    assert sorted(importers) == []
