"""The contract every study module keeps, and the one call a notebook makes to build it.

Every ``workbench.studies.<study>`` module exposes the same five names:

- ``STUDY`` — the study's name (the notebook stem, the folder of its figures and tables);
- ``Config`` — a dataclass of every parameter, the seed included; its fields and defaults
  are exactly the notebook's ``parameters`` cell (a test holds them equal). A field
  declares what its value must be once, beside its default (:func:`at_least`,
  :func:`in_range`, :func:`one_of`, :func:`listed`); :class:`StudyConfig` checks every
  field's type and rule when a ``Config`` is made, and ``cross_check`` what ties fields;
- ``run(config) -> StudyResults`` — makes the LLM calls and computes every table the
  notebook shows, deterministically from ``config`` (its random generator is seeded by
  ``config.seed``); no plotting, no files written;
- ``tables(results) -> dict[str, DataFrame]`` — the tables written as CSV, by name;
- ``headline(results) -> dict`` — the headline numbers ``workbench.notebook.record``
  writes and the tests check.

A notebook therefore reads::

    config = config_from(s1.Config, globals())   # the parameters cell, typed and checked
    results = s1.run(config)
    ...                                           # show and plot results["..."]
    write_tables(s1.STUDY, **s1.tables(results))
    nb.record(s1.STUDY, **s1.headline(results))
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import sys
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from workbench.config import CACHE_MODES, interactive
from workbench.notebook._params import check_values, expected_type

C = TypeVar("C")


#: Folder of the published numbers: one ``<study>.csv`` per study, each row with its ``source``.
PUBLISHED_DIR = Path(__file__).resolve().parent / "published"


class StudyResults(dict[str, pd.DataFrame]):
    """The frames a study's ``run`` returns, by name, with the ``config`` that made them.

    A plain ``dict`` of DataFrames in every other respect, so ``results["scores"]`` and
    ``**results`` work as before.

    Examples
    --------
    >>> r = StudyResults({"scores": pd.DataFrame({"score": [1.0]})}, config="cfg")
    >>> sorted(r), r.config
    (['scores'], 'cfg')
    >>> r["verdict"] = "a sentence"
    Traceback (most recent call last):
    ...
    TypeError: StudyResults['verdict'] must be a DataFrame, got str
    """

    def __init__(self, frames: Mapping[str, pd.DataFrame] = (), *, config: Any = None):
        super().__init__()
        for name, frame in dict(frames).items():
            self[name] = frame
        self.config = config

    def __setitem__(self, name: str, frame: pd.DataFrame) -> None:
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"StudyResults[{name!r}] must be a DataFrame, got {type(frame).__name__}")
        super().__setitem__(name, frame)


def param(default: Any, *, check: Callable[[Any], str | None] | None = None,
          convert: Callable[[Any], Any] | None = None) -> Any:
    """A ``Config`` field: its default (a list or dict is copied for each ``Config``), the
    ``check`` its value must pass (a problem in words, or None) and ``convert``, applied to
    a value that passed. :func:`at_least`, :func:`in_range`, :func:`one_of` and
    :func:`listed` are the usual checks.

    Examples
    --------
    >>> @dataclasses.dataclass
    ... class Demo(StudyConfig):
    ...     trials: int = at_least(5, 1)
    ...     judges: list[str] = listed(["sim/judge-a"], least=1, distinct=True)
    >>> Demo(trials=2, judges=("sim/judge-b",)).judges
    ['sim/judge-b']
    >>> Demo(trials=0)
    Traceback (most recent call last):
    ...
    ValueError: Demo: Config.trials must be >= 1, got 0
    """
    metadata = {"check": check, "convert": convert}
    if isinstance(default, list | dict):
        return dataclasses.field(default_factory=functools.partial(copy.deepcopy, default),
                                 metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def at_least(default: float, low: float) -> Any:
    """A number field whose value must be ``>= low``."""
    return param(default, check=lambda v: None if v >= low else f"must be >= {low}, got {v!r}")


def in_range(default: float, low: float, high: float, *, ends: str = "[]") -> Any:
    """A number field whose value must lie between ``low`` and ``high``; ``ends`` says
    which ends are in (``"[]"``), out (``"()"``) or one of each (``"(]"``, ``"[)"``)."""
    if ends not in ("[]", "()", "(]", "[)"):
        raise ValueError(f"ends must be [], (), (] or [), got {ends!r}")

    def check(v: float) -> str | None:
        above = low < v if ends[0] == "(" else low <= v
        below = v < high if ends[1] == ")" else v <= high
        return None if above and below else f"must be in {ends[0]}{low}, {high}{ends[1]}, got {v!r}"
    return param(default, check=check)


def one_of(default: Any, options: Collection[Any]) -> Any:
    """A field whose value must be one of ``options``."""
    options = list(options)
    return param(default, check=lambda v: None if v in options
                 else f"must be one of {', '.join(map(str, options))}, got {v!r}")


def listed(default: list, *, least: int = 0, distinct: bool = False,
           within: Collection[Any] | None = None, of: type | None = None) -> Any:
    """A list field (a tuple given becomes a list): at least ``least`` entries, no entry
    twice when ``distinct``, every entry one of ``within`` and an instance of ``of`` when
    given. ``listed(["sim/judge-a"], least=1, distinct=True)`` is a list of judges."""
    known = None if within is None else list(within)

    def check(values: list) -> str | None:
        values = list(values)
        if len(values) < least:
            return f"must have at least {least} entr{'y' if least == 1 else 'ies'}, got {values!r}"
        if distinct and len(set(map(repr, values))) < len(values):
            return f"must not repeat an entry, got {values!r}"
        if of is not None and not all(isinstance(v, of) for v in values):
            return f"must hold {of.__name__} values only, got {values!r}"
        unknown = [] if known is None else [v for v in values if v not in known]
        if unknown:
            return f"has unknown {unknown}; known: {', '.join(map(str, known))}"
        return None
    return param(default, check=check, convert=list)


@dataclasses.dataclass
class StudyConfig:
    """The session fields every study's ``Config`` inherits (and every notebook declares),
    and the checks every ``Config`` gets.

    Making a ``Config`` checks each field's value against its annotation (``int``,
    ``list[str]``, ``bool | None``: the types of :func:`config_from`), then against the
    rule the field declares (:func:`param`), then :meth:`cross_check`. Every error names
    the study, the field and the value. What a field means is its comment in the
    notebook's ``parameters`` cell (``workbench params <study>`` lists them).

    Parameters
    ----------
    cache_mode : str
        LLM cache mode of the notebook session (``readwrite``, ``readonly``, ``refresh``,
        ``off``); :func:`workbench.notebook.setup` applies it, ``run`` does not.
    progress : bool or None
        Progress bars of the LLM calls; ``None`` (the default) resolves in
        :func:`config_from` to on in a JupyterLab kernel, off under Papermill and nbval.
    seed : int
        Seed of the study's random generator (bootstrap resampling, subsampling).
    """

    cache_mode: str = one_of("readwrite", CACHE_MODES)
    progress: bool | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        defaults = config_fields(type(self))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            label = expected_type(value, defaults[f.name], f.type)
            check, convert = f.metadata.get("check"), f.metadata.get("convert")
            if label is not None:
                self.reject(f.name, f"must be {label}, got {type(value).__name__} {value!r}")
            problem = check(value) if check else None
            if problem:
                self.reject(f.name, problem)
            if convert:
                setattr(self, f.name, convert(value))
        self.cross_check()

    def cross_check(self) -> None:
        """Checks that tie fields together (each field has passed its own); none here."""

    def reject(self, name: str, problem: str) -> None:
        """Raise the ``ValueError`` of field ``name``: ``<study>: Config.<name> <problem>``
        (the study is its package's ``STUDY``)."""
        package = sys.modules.get(type(self).__module__.rsplit(".", 1)[0])
        study = getattr(package, "STUDY", type(self).__name__)
        raise ValueError(f"{study}: Config.{name} {problem}")


def config_fields(config_cls: type) -> dict[str, Any]:
    """Field name -> default of a study ``Config`` (a ``default_factory`` is called).

    Examples
    --------
    >>> @dataclasses.dataclass
    ... class Demo:
    ...     trials: int = 5
    ...     judges: list = dataclasses.field(default_factory=lambda: ["sim/judge-a"])
    >>> config_fields(Demo)
    {'trials': 5, 'judges': ['sim/judge-a']}
    """
    if not dataclasses.is_dataclass(config_cls):
        raise TypeError(f"{config_cls!r} is not a dataclass")
    out = {}
    for f in dataclasses.fields(config_cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
        else:
            raise TypeError(f"{config_cls.__name__}.{f.name} has no default")
    return out


def config_from(config_cls: type[C], namespace: Mapping[str, Any]) -> C:
    """Build a study ``Config`` from a notebook's parameters (its ``globals()``).

    Takes every field of ``config_cls`` from ``namespace``; a missing field is an error
    naming it (with a "did you mean" when a similar name is there), and so is a value of
    the wrong type (:func:`check_values`: e.g. a list that Papermill's ``-p`` made a
    string). ``progress=None`` becomes :func:`workbench.config.interactive`.

    Examples
    --------
    >>> @dataclasses.dataclass
    ... class Demo:
    ...     trials: int = 5
    ...     seed: int = 0
    >>> config_from(Demo, {"trials": 2, "seed": 1, "plt": object()})
    Demo(trials=2, seed=1)
    >>> config_from(Demo, {"trails": 2, "seed": 1})
    Traceback (most recent call last):
    ...
    ValueError: parameter 'trials' is not defined (did you mean 'trails'?)
    >>> config_from(Demo, {"trials": "two", "seed": 1})
    Traceback (most recent call last):
    ...
    ValueError: parameter 'trials' is an int (default 5), got str 'two'
    """
    defaults = config_fields(config_cls)
    values = {}
    for name in defaults:
        if name not in namespace:
            close = difflib.get_close_matches(name, [k for k in namespace if isinstance(k, str)], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"parameter {name!r} is not defined{hint}")
        values[name] = namespace[name]
    annotations = {f.name: f.type for f in dataclasses.fields(config_cls)}
    check_values(values, defaults, annotations=annotations)
    if "progress" in values and values["progress"] is None:
        values["progress"] = interactive()
    return config_cls(**values)


def published(study: str) -> pd.DataFrame:
    """The numbers a study's source document published, from ``published/<study>.csv``.

    Every row carries a ``source`` (the table or section of the paper it is copied from).
    They are what a run with real judges is compared against, never inputs to a run.
    """
    path = PUBLISHED_DIR / f"{study}.csv"
    if not path.exists():
        raise FileNotFoundError(f"no published numbers for study {study!r}: {path.name} is not in {PUBLISHED_DIR.name}/")
    frame = pd.read_csv(path)
    if "source" not in frame.columns or frame["source"].isna().any():
        raise ValueError(f"{path.name}: every row needs a 'source' (where the number was published)")
    return frame
