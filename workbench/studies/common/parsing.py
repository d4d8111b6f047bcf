"""What a study's judge replies allowed: parse counts for its tables and headline.

A study whose replies partly or wholly failed to parse still runs to its end (issue 33);
:func:`parse_counts` is the table of parsed and unparsed judge rows per cell,
:func:`parse_summary` the headline's share and counts, :func:`cannot` the row an analysis
writes when it cannot be computed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from workbench.judges import describe_structured

#: Columns of the rows ``run_judging`` returns that mark a frame as judge rows.
JUDGE_ROW_COLUMNS = ("judge_model", "parse_ok", "raw_reply")
#: Columns that tell one judge row from another (a copy of a row repeats them all).
ROW_IDENTITY = ("cache_key", "judge_model", "protocol", "template", "item_id", "answer_model",
                "answer_sample", "dimension", "criterion_id", "order", "trial", "temperature",
                "perturbation", "raw_reply", "error")
#: Cell keys of :func:`parse_counts`, those a frame has.
CELL_KEYS = ("judge_model", "protocol", "template", "dimension", "perturbation", "temperature")


def judge_rows(results: Mapping[str, pd.DataFrame], *, names: Sequence[str] | None = None) -> pd.DataFrame:
    """The judge rows of a study's results: the frames ``names`` (their ``judge_model``
    and ``parse_ok`` columns), else every frame holding :data:`JUDGE_ROW_COLUMNS`; each row once (a frame that copies another's rows adds
    nothing: rows are told apart by :data:`ROW_IDENTITY`)."""
    need = set(JUDGE_ROW_COLUMNS) if names is None else {"judge_model", "parse_ok"}
    frames = [f for n, f in results.items() if (names is None or n in names)
              and isinstance(f, pd.DataFrame) and len(f) and need <= set(f.columns)]
    if not frames:
        return pd.DataFrame(columns=list(JUDGE_ROW_COLUMNS))
    if len(frames) == 1:
        return frames[0]
    rows = pd.concat(frames, ignore_index=True, sort=False)
    identity = [c for c in ROW_IDENTITY if c in rows.columns]
    return rows[~rows[identity].astype(str).duplicated()].reset_index(drop=True)


def parse_counts(rows: pd.DataFrame, by: Sequence[str] = CELL_KEYS) -> pd.DataFrame:
    """Parsed and unparsed judge rows per cell (the ``by`` keys the rows have):
    ``n_parsed, n_unparsed, parse_share``; one row ``all`` when none of them is there.

    Examples
    --------
    >>> rows = pd.DataFrame({"judge_model": ["j", "j", "j"], "parse_ok": [True, False, False]})
    >>> parse_counts(rows).to_dict("records")
    [{'judge_model': 'j', 'n_parsed': 1, 'n_unparsed': 2, 'parse_share': 0.333}]
    """
    keys = [k for k in by if k in rows.columns]
    ok = rows["parse_ok"].fillna(False).astype(bool) if "parse_ok" in rows else pd.Series(dtype=bool)
    frame = rows[keys].copy() if keys else pd.DataFrame({"cell": ["all"] * len(rows)}, index=rows.index)
    keys = keys or ["cell"]
    frame = frame.astype(object).where(frame.notna(), "none")
    frame["n_parsed"], frame["n_unparsed"] = ok.astype(int), (~ok).astype(int)
    out = frame.groupby(keys, sort=True, dropna=False)[["n_parsed", "n_unparsed"]].sum().reset_index()
    total = out["n_parsed"] + out["n_unparsed"]
    out["parse_share"] = (out["n_parsed"] / total.where(total > 0)).round(3)
    return out


def parse_summary(results: Mapping[str, pd.DataFrame], *, names: Sequence[str] | None = None) -> dict[str, Any]:
    """``n_judge_rows, n_parsed, n_unparsed, parse_share`` (None without judge rows)."""
    rows = judge_rows(results, names=names)
    ok = rows["parse_ok"].fillna(False).astype(bool)
    n = len(rows)
    return {"n_judge_rows": n, "n_parsed": int(ok.sum()), "n_unparsed": int(n - ok.sum()),
            "parse_share": round(float(ok.mean()), 3) if n else None}


def headline_parse(results: Mapping[str, pd.DataFrame], *, setting: str = "auto",
                   names: Sequence[str] | None = None) -> dict[str, Any]:
    """The headline's lines on the replies: parse share and counts, and the structured-reply
    form each judge model of the rows used (``JudgeSpec.structured`` ``setting``); none
    without judge rows."""
    rows = judge_rows(results, names=names)
    if rows.empty:  # no judge calls (e.g. no data set chosen): nothing to say
        return {}
    summary = parse_summary(results, names=names)
    models = [str(m) for m in rows["judge_model"].dropna().unique()]
    return {"parse_share": summary["parse_share"], "n_rows_parsed": summary["n_parsed"],
            "n_rows_unparsed": summary["n_unparsed"],
            "structured_replies": describe_structured(setting, models) or "no judge calls"}


def with_parse_counts(tables: dict[str, pd.DataFrame], results: Mapping[str, pd.DataFrame], *,
                      names: Sequence[str] | None = None) -> dict[str, pd.DataFrame]:
    """``tables`` with ``parse_counts``: parsed and unparsed judge rows per cell (when
    there are judge rows)."""
    rows = judge_rows(results, names=names)
    return {**tables, "parse_counts": parse_counts(rows)} if len(rows) else dict(tables)


def attempt(label: str, compute: Callable[[], pd.DataFrame], rows: pd.DataFrame,
            columns: Sequence[str] = ()) -> pd.DataFrame:
    """``compute()``, or, when it raises and some of the judge ``rows`` did not parse (or
    there are none), one row of ``columns`` (NaN) whose ``note`` says why the analysis
    ``label`` was not computed. With every row parsed the error is raised: it is a bug,
    not missing data.

    Examples
    --------
    >>> rows = pd.DataFrame({"parse_ok": [True, False]})
    >>> attempt("ratio", lambda: 1 / 0, rows, ["estimate"]).to_dict("records")
    [{'estimate': nan, 'analysis': 'ratio', 'note': 'not computed: ZeroDivisionError: division by zero'}]
    """
    try:
        return compute()
    except Exception as exc:
        parsed = rows["parse_ok"].fillna(False).astype(bool) if "parse_ok" in rows else pd.Series(dtype=bool)
        if len(parsed) and parsed.all():
            raise
        why = f"{type(exc).__name__}: {exc}"
        row = {**dict.fromkeys(c for c in columns if c not in ("analysis", "note")), "analysis": label}
        return pd.DataFrame([cannot(why, **row)]).astype({c: float for c in columns
                                                            if c not in ("analysis", "note")})


def cannot(why: str, **keys: Any) -> dict[str, Any]:
    """The row an analysis writes instead of raising: its keys and ``note`` = why.

    Examples
    --------
    >>> cannot("fewer than two complete items", dimension="clarity")
    {'dimension': 'clarity', 'note': 'not computed: fewer than two complete items'}
    """
    return {**keys, "note": f"not computed: {why}"}
