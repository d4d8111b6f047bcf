"""Every study module keeps the one contract of ``workbench.studies._contract``, and every
file of published numbers says where each number comes from."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import sys
import types

import pandas as pd
import pytest

import workbench.studies as studies
from workbench.studies import StudyResults, config_fields, config_from, published
from workbench.studies._contract import (
    PUBLISHED_DIR,
    StudyConfig,
    at_least,
    in_range,
    listed,
    one_of,
)

STUDIES = sorted(m.name for m in pkgutil.iter_modules(studies.__path__)
                 if m.ispkg and not m.name.startswith("_") and m.name != "common")
PUBLISHED = sorted(p.stem for p in PUBLISHED_DIR.glob("*.csv"))


def _parameters(function) -> list[tuple[str, object]]:
    return [(p.name, p.kind) for p in inspect.signature(function).parameters.values()]


def test_the_studies_are_found():
    assert {"s1_judge_methods", "s2_summarize_then_judge", "s3_hivmedqa",
            "x2_human_agreement"} <= set(STUDIES)


@pytest.mark.parametrize("name", STUDIES)
def test_study_module_has_the_contract(name):
    study = importlib.import_module(f"workbench.studies.{name}")
    assert study.STUDY == name
    for attr in ("STUDY", "Config", "run", "tables", "headline"):
        assert attr in study.__all__, f"{name}.__all__ lacks {attr}"
    assert dataclasses.is_dataclass(study.Config) and isinstance(study.Config, type)
    fields = config_fields(study.Config)  # every field has a default
    for required in ("seed", "cache_mode", "progress"):
        assert required in fields, f"{name}.Config has no {required!r}"
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert _parameters(study.run) == [("config", positional)]
    assert _parameters(study.tables) == [("results", positional)]
    assert _parameters(study.headline) == [("results", positional)]


@pytest.mark.parametrize("name", STUDIES)
def test_config_round_trips_through_config_from(name):
    study = importlib.import_module(f"workbench.studies.{name}")
    defaults = config_fields(study.Config)
    assert defaults["progress"] is None  # every study: progress bars follow the session
    # progress=None resolves to workbench.config.interactive(): False outside JupyterLab
    assert config_from(study.Config, {**defaults, "unrelated": 1}) == study.Config(progress=False)


def test_progress_none_follows_the_session(monkeypatch):
    study = importlib.import_module("workbench.studies.s4_report_rubric")
    defaults = config_fields(study.Config)
    monkeypatch.setenv("JPY_SESSION_NAME", "s4_report_rubric.ipynb")  # a JupyterLab kernel
    monkeypatch.setitem(sys.modules, "ipykernel", sys.modules.get("ipykernel") or types.ModuleType("ipykernel"))
    assert config_from(study.Config, defaults).progress is True
    monkeypatch.delenv("JPY_SESSION_NAME")
    assert config_from(study.Config, defaults).progress is False
    with pytest.raises(ValueError, match="parameter 'trials' is an int"):
        config_from(study.Config, {**defaults, "trials": "three"})


def test_study_results_carry_their_config():
    results = StudyResults({"scores": pd.DataFrame({"score": [1.0]})}, config="c")
    assert dict(results).keys() == {"scores"} and results.config == "c"


@pytest.mark.parametrize("name", PUBLISHED)
def test_published_numbers_have_a_source_and_a_study(name):
    assert name in STUDIES, f"published/{name}.csv names no study module"
    frame = published(name)
    assert len(frame) and frame["source"].notna().all()
    assert frame["source"].astype(str).str.strip().ne("").all()


def test_published_refuses_an_unknown_study():
    with pytest.raises(FileNotFoundError, match="no published numbers"):
        published("no_such_study")


@pytest.mark.parametrize("name", STUDIES)
def test_config_checks_every_field_once_in_studyconfig(name):
    """No study re-checks its fields in a ``__post_init__`` of its own: the rules sit on the
    fields and ``StudyConfig`` runs them (types, rules, then ``cross_check``)."""
    study = importlib.import_module(f"workbench.studies.{name}")
    assert study.Config.__post_init__ is StudyConfig.__post_init__
    with pytest.raises(ValueError, match=rf"^{name}: Config.seed must be an int, got str 'one'$"):
        study.Config(seed="one")
    with pytest.raises(ValueError, match=rf"^{name}: Config.cache_mode must be one of readwrite, "):
        study.Config(cache_mode="write")


def test_field_rules_say_what_is_wrong():
    @dataclasses.dataclass
    class Demo(StudyConfig):
        share: float = in_range(0.5, 0, 1, ends="(]")
        mode: str = one_of("a", ("a", "b"))
        labels: list[str] = listed(["x"], least=1, distinct=True, within=("x", "y"))
        flags: list[bool] = listed([True], of=bool)
        n: int = at_least(1, 1)

    assert Demo(share=1, labels=("y", "x")).labels == ["y", "x"]  # a tuple becomes a list
    bad = [({"share": 0.0}, "Config.share must be in (0, 1], got 0.0"),
           ({"mode": "c"}, "Config.mode must be one of a, b, got 'c'"),
           ({"labels": []}, "Config.labels must have at least 1 entry, got []"),
           ({"labels": ["x", "x"]}, "Config.labels must not repeat an entry, got ['x', 'x']"),
           ({"labels": ["z"]}, "Config.labels has unknown ['z']; known: x, y"),
           ({"flags": [1]}, "Config.flags must hold bool values only, got [1]"),
           ({"n": 0}, "Config.n must be >= 1, got 0"),
           ({"n": 1.5}, "Config.n must be an int, got float 1.5")]
    for changes, message in bad:
        with pytest.raises(ValueError) as caught:
            Demo(**changes)
        assert str(caught.value) == f"Demo: {message}"
    with pytest.raises(ValueError, match="ends must be"):
        in_range(0.5, 0, 1, ends="[[")
