"""The workbench's exceptions: one root, grouped subclasses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


class WorkbenchError(Exception):
    """Root of every error the workbench raises on purpose."""


class CacheMiss(WorkbenchError):
    """A request is not in the cache and the cache mode is ``readonly``."""

    def __init__(self, model: str, key: str):
        self.model = model
        self.key = key
        super().__init__(
            f"cache miss in readonly mode: model={model!r} key={key[:16]}… "
            "(run `workbench cache explain` to see the nearest cached request)"
        )


class CacheError(WorkbenchError):
    """The LLM cache store cannot be used as asked: damaged, read-only or full, or (for a
    repair) in use by a run that may write to it.

    The message names the folder (``folder``) and the command or setting that helps.
    """

    def __init__(self, message: str, *, folder: str):
        self.folder = folder
        super().__init__(message)


class BudgetExceeded(WorkbenchError):
    """The next call would cross the budget; carries the results obtained so far.

    Attributes
    ----------
    partial : list
        ``complete_many``: one result per request (calls not sent are ``CallFailure``
        with ``error_type="budget"``); ``run_judging``: the result rows so far (dicts).
    spent_usd : float
        What the stopped run spent on calls not served from the cache.
    results : DataFrame or None
        ``run_judging``: the results frame of every row so far (None from
        ``complete_many``).
    """

    def __init__(self, message: str, partial: list[Any] | None = None, spent_usd: float = 0.0,
                 results: pd.DataFrame | None = None):
        self.partial = partial if partial is not None else []
        self.spent_usd = spent_usd
        self.results = results
        super().__init__(message)


class ParseError(WorkbenchError):
    """A judge reply does not hold the fields, values or ranges its schema asks for."""

    def __init__(self, message: str, text: str | None = None):
        self.text = text
        super().__init__(message)


class DatasetError(WorkbenchError):
    """A data file is malformed; the message names the file, row and column."""

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 column: str | None = None):
        self.file, self.row, self.column = file, row, column
        where = ", ".join(
            part for part in (
                f"file {file}" if file is not None else "",
                f"row {row}" if row is not None else "",
                f"column {column!r}" if column is not None else "",
            ) if part
        )
        super().__init__(f"{where}: {message}" if where else message)


class ProviderError(WorkbenchError):
    """An unknown provider or model, a missing API key, or a provider call that failed."""


__all__ = [
    "BudgetExceeded",
    "CacheError",
    "CacheMiss",
    "DatasetError",
    "ParseError",
    "ProviderError",
    "WorkbenchError",
]
