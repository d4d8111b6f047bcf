"""Reading replies into result rows: scores, verdicts, G-Eval weighting, detections,
checklist totals. Every ``rows_*`` function takes a planned :class:`Call` and its result
(a ``Completion`` or a ``CallFailure``) and returns the call's rows."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.errors import ParseError
from workbench.judges._columns import RESULT_COLUMNS
from workbench.judges._parse import (
    ROLES,
    count_json_objects,
    count_verdicts,
    parse_detection,
    parse_fields,
    parse_score_only,
    parse_verdict,
    utf8_text,
)
from workbench.llm import CallFailure, Completion, model_backend

if TYPE_CHECKING:  # the planned calls are only read here
    from workbench.judges._plan import Call

#: What a sent (or not sent) call comes back as.
Result = Completion | CallFailure

_EXPLANATION_FIELDS = ("explanation", "rationale", "reason")
_VERDICT_MAP = {0: {"A": "A", "B": "B", "C": "tie"}, 1: {"A": "B", "B": "A", "C": "tie"}}
_VERDICT_SCORE = {"A": 1.0, "B": 0.0, "tie": 0.5}


def reply_text(result: Completion) -> str:
    """The text of a reply as the parsers read it: ``""`` for none, surrogates replaced
    (:func:`~workbench.judges._parse.utf8_text`), so no reply can crash a later request
    or the results file."""
    return "" if result.text is None else utf8_text(str(result.text))


def apply_result(row: dict, call: Call, result: Result) -> str | None:
    """Copy the call's bookkeeping into ``row``; return the reply text (None on failure)."""
    if isinstance(result, Completion):
        text = reply_text(result)
        row.update(cache_key=result.key, backend=result.backend or model_backend(call.request.model),
                   cost_usd=float(result.cost_usd or 0.0), latency_s=float(result.latency_s),
                   cached=bool(result.cached), raw_reply=None if result.text is None else text)
        return text
    row.update(cache_key=_key(result), backend=model_backend(call.request.model), cost_usd=0.0,
               cached=False, parse_ok=False, score=math.nan,
               error=f"{result.error_type}: {result.message}")
    return None


def _key(result: Result) -> str | None:
    """The cache key a row records for ``result``: none for a call that was not sent
    because an earlier stage failed (``not_run``: it has no cache entry)."""
    return None if isinstance(result, CallFailure) and result.error_type == "not_run" else result.key


def _fail(row: dict, exc: Exception) -> dict:
    row.update(parse_ok=False, score=math.nan, verdict=None, error=f"parse: {exc}")
    return row


def _explanation(fields: dict) -> tuple[str | None, str | None]:
    for name in _EXPLANATION_FIELDS:
        if name in fields:
            value = fields[name]
            if isinstance(value, ParseError):
                return None, f"{name}: {value}"
            return value, None
    return None, None


def _json_row(call: Call, result: Result, field: str, values: Callable[[Any, dict], dict]) -> list[dict]:
    """The one row of a one-JSON-reply call: the call's bookkeeping, the candidate count,
    then ``field`` read from the reply (unreadable: the row fails) and the row's
    ``values(value, row)`` with the explanation."""
    row = dict(call.row)
    text = apply_result(row, call, result)
    if text is None:
        return [row]
    row["n_candidates"] = count_json_objects(text)
    fields = parse_fields(text, call.out.schema)
    value = fields[field]
    if isinstance(value, ParseError):
        return [_fail(row, value)]
    explanation, note = _explanation(fields)
    row.update(values(value, row), parse_ok=True, explanation=explanation, error=note)
    return [row]


def rows_score(call: Call, result: Result) -> list[dict]:
    """One JSON score (holistic, holistic_simple, one dimension per call)."""
    return _json_row(call, result, call.out.numeric[0], lambda value, row: {"score": float(value)})


def rows_multi(call: Call, result: Result) -> list[dict]:
    """Several dimensions from one JSON reply (MedGPT): one row per dimension; a bad
    value costs only its own row. The call's cost sits on the first row."""
    base = dict(call.row)
    text = apply_result(base, call, result)
    rows = []
    if text is not None:
        base["n_candidates"] = count_json_objects(text)
    fields = parse_fields(text, call.out.schema) if text is not None else {}
    explanation, note = _explanation(fields) if fields else (None, None)
    for k, dim in enumerate(call.info["dimensions"]):
        row = dict(base, dimension=dim)
        if k:
            row["cost_usd"] = 0.0
        if text is not None:
            value = fields[dim]
            if isinstance(value, ParseError):
                _fail(row, value)
            else:
                row.update(score=float(value), parse_ok=True, explanation=explanation, error=note)
        rows.append(row)
    return rows


def rows_checklist(call: Call, result: Result) -> list[dict]:
    """One checklist item: score 1.0 met / 0.0 not met, verdict True/False."""
    return _json_row(call, result, "criteriaMet", lambda met, row: {
        "score": 1.0 if met else 0.0, "verdict": bool(met),
        "negative_flag": bool(met) if row["weight"] < 0 else False})


def rows_verdict(call: Call, result: Result) -> list[dict]:
    """A pairwise verdict, mapped back to the items' numbering (order 1 shows b first)."""
    row = dict(call.row)
    text = apply_result(row, call, result)
    if text is None:
        return [row]
    row["n_candidates"] = count_verdicts(text)
    try:
        shown = parse_verdict(text)
    except ParseError as exc:
        return [_fail(row, exc)]
    verdict = _VERDICT_MAP[row["order"]][shown]
    cut = text.rfind(f"[[{shown}]]")  # -1: a structured reply, no text besides the verdict
    row.update(verdict=verdict, verdict_shown=shown, score=_VERDICT_SCORE[verdict], parse_ok=True,
               explanation=text[:cut].strip() or None if cut >= 0 else None)
    return [row]


def _real(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _score_token(token: Any) -> int | None:
    """The integer a token spells (stripped, optionally negative), else None."""
    if not isinstance(token, str | int) or isinstance(token, bool):
        return None
    text = str(token).strip()
    if not text.lstrip("-").isdigit():
        return None
    try:
        return int(text)
    except ValueError:  # digits int() does not read ('²'), or past the digit limit
        return None


def geval_score(logprobs: Sequence[dict] | None, low: int, high: int) -> tuple[float, dict[int, float]]:
    """G-Eval's probability-weighted score from token log-probabilities.

    Takes the first output token whose top log-probabilities include a score token
    (a token that, stripped, is an integer in ``[low, high]``), turns the log-probabilities
    of the score tokens into probabilities, renormalises them over the score tokens and
    returns ``sum(p(s) * s)``. Tokens naming the same score (``"4"``, ``" 4"``) add up.

    Parameters
    ----------
    logprobs : list of dict
        OpenAI chat format, one entry per output token:
        ``{"token", "logprob", "top_logprobs": [{"token", "logprob"}, ...]}``.
    low, high : int
        The score range.

    Returns
    -------
    score : float
        ``sum_s p(s) * s``.
    distribution : dict
        ``{s: p(s)}`` after renormalisation.

    Raises
    ------
    ParseError
        No log-probabilities, or no token position with a score token.

    References
    ----------
    Liu, Y., Iter, D., Xu, Y., Wang, S., Xu, R., & Zhu, C. (2023). G-Eval: NLG evaluation
    using GPT-4 with better human alignment. EMNLP 2023, 2511-2522 (eq. 1).

    Examples
    --------
    >>> import math
    >>> lp = [{"token": "4", "logprob": math.log(0.6),
    ...        "top_logprobs": [{"token": "4", "logprob": math.log(0.6)},
    ...                         {"token": "3", "logprob": math.log(0.3)},
    ...                         {"token": "5", "logprob": math.log(0.1)}]}]
    >>> round(geval_score(lp, 1, 5)[0], 6)
    3.8
    """
    if not logprobs:
        raise ParseError("no log-probabilities in the reply")
    if not isinstance(logprobs, list):
        raise ParseError(f"log-probabilities are not a list: {type(logprobs).__name__}")
    allowed = range(int(low), int(high) + 1)
    for position in logprobs:
        if not isinstance(position, dict):
            continue
        top = position.get("top_logprobs")
        candidates = [c for c in top if isinstance(c, dict)] if isinstance(top, list) else []
        if position.get("token") is not None and all(c.get("token") != position["token"] for c in candidates):
            candidates.append({"token": position["token"], "logprob": position.get("logprob")})
        probs: dict[int, float] = {}
        for cand in candidates:
            value = _score_token(cand.get("token", ""))
            lp = cand.get("logprob")
            if value in allowed and _real(lp) and math.isfinite(lp):
                try:
                    probs[value] = probs.get(value, 0.0) + math.exp(lp)
                except OverflowError:
                    raise ParseError(f"log-probability {lp} of token {value} is out of range") from None
        total = sum(probs.values())
        if not math.isfinite(total):
            raise ParseError("the log-probabilities of the score tokens add up to infinity")
        if probs and total > 0:
            dist = {s: p / total for s, p in sorted(probs.items())}
            return sum(s * p for s, p in dist.items()), dist
    raise ParseError(f"no score token {low}..{high} among the log-probabilities")


def rows_geval_lp(call: Call, result: Result) -> list[dict]:
    """G-Eval with log-probabilities; returns [] when the provider gave none (auto mode
    then samples), which the caller decides."""
    row = dict(call.row, geval_mode="logprobs", geval_n=1, geval_n_parsed=0)
    text = apply_result(row, call, result)
    if text is None:
        return [row]
    try:
        score, dist = geval_score(result.logprobs, row["scale_low"], row["scale_high"])
    except ParseError as exc:
        return [_fail(row, exc)]
    row.update(score=score, parse_ok=True, geval_n_parsed=1,
               explanation=json.dumps({str(k): round(v, 6) for k, v in dist.items()}))
    return [row]


def rows_geval_samples(calls: list[Call], results: list[Result]) -> list[dict]:
    """G-Eval from n samples: the mean of the parsed bare scores (= sum of p(s)·s with p
    the empirical distribution). NaN and parse_ok=False only when no sample parsed; the
    count of parsed samples is in ``geval_n_parsed``."""
    row = dict(calls[0].row, geval_mode="samples", geval_n=len(calls), cost_usd=0.0, latency_s=0.0)
    scores, errors, cached = [], [], True
    low, high = row["scale_low"], row["scale_high"]
    for call, result in zip(calls, results, strict=True):
        scratch = dict(row)
        text = apply_result(scratch, call, result)
        row["cost_usd"] += scratch["cost_usd"]
        row["latency_s"] += 0.0 if math.isnan(scratch["latency_s"]) else scratch["latency_s"]
        cached = cached and bool(scratch["cached"])
        if text is None:
            errors.append(scratch["error"])
            continue
        try:
            scores.append(float(parse_score_only(text, low, high)))
        except ParseError as exc:
            errors.append(f"parse: {exc}")
    row.update(cache_key=_key(results[0]), cached=cached, geval_n_parsed=len(scores),
               raw_reply=json.dumps([reply_text(r) if isinstance(r, Completion) else None for r in results],
                                    ensure_ascii=False))
    if errors:
        row["error"] = f"{len(errors)} of {len(calls)} samples failed: " + "; ".join(dict.fromkeys(errors))
    if scores:
        row.update(score=sum(scores) / len(scores), parse_ok=True)
    else:
        row.update(score=math.nan, parse_ok=False)
    return [row]


def rows_detect(call: Call, result: Result, *, prep: dict) -> list[dict]:
    """Four rows per detection (excess/missing x gist/detail): score = flagged items of the
    class / reference units of that role (seed 004 §5)."""
    base = dict(call.row, **prep)
    text = apply_result(base, call, result)
    units = call.info["units"]
    counts = {role: sum(u["role"] == role for u in units) for role in ROLES}
    found = None
    error = None
    if text is not None:
        base["n_candidates"] = count_json_objects(text)
        try:
            found = parse_detection(text, units)
        except ParseError as exc:
            error = exc
    rows = []
    for k, (label, role) in enumerate((("excess", "gist"), ("excess", "detail"),
                                       ("missing", "gist"), ("missing", "detail"))):
        row = dict(base, dimension=f"{label}_{role}", n_units=counts[role])
        if k:
            row["cost_usd"] = 0.0
            row["prep_cost_usd"] = 0.0
        if error is not None:
            _fail(row, error)
        elif found is not None:
            flagged = [i for i in found[label] if i["role"] == role]
            row.update(parse_ok=True, explanation=json.dumps(flagged, ensure_ascii=False))
            if counts[role]:
                row["score"] = len(flagged) / counts[role]
            else:
                row.update(score=math.nan, error=f"undefined: the reference has no {role} units")
        rows.append(row)
    return rows


_TOTAL_KEYS = ("study", "item_id", "answer_model", "answer_sample", "judge_model", "protocol",
               "template", "temperature", "trial", "perturbation")


def _key_value(value: Any) -> Any:
    """``None`` for a missing value (as ``pd.isna``), else the value; plain str/int/float
    values (nearly all of them) skip the pandas call."""
    kind = type(value)
    if kind is str or kind is int:
        return value
    if kind is float:
        return None if value != value else value
    return None if pd.isna(value) else value


def checklist_totals(rows: Iterable[dict]) -> list[dict]:
    """Per-conversation ``total`` rows from checklist criterion rows (dicts).

    score = (sum of the weights of met items) / (sum of the positive weights) (seed 000
    §3.2.3, after HealthBench; not clipped). Negative-weight items that are met lower the
    score and set ``negative_flag``. If any item of the group did not parse, the total is
    NaN and ``parse_ok`` False: an unparsed item is never treated as not met.

    References
    ----------
    Arora, R. K. et al. (2025). HealthBench: Evaluating large language models towards
    improved human health. arXiv:2505.08775.
    """
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        if row.get("criterion_id") is None or row.get("protocol") not in ("checklist", "summarize_then"):
            continue
        if isinstance(row["criterion_id"], float):  # NaN from a frame
            continue
        key = tuple(_key_value(row.get(k)) for k in _TOTAL_KEYS)
        groups.setdefault(key, []).append(row)
    out = []
    for group in groups.values():
        first = group[0]
        weights = [float(r["weight"]) for r in group]
        positive = sum(w for w in weights if w > 0)
        unparsed = sum(1 for r in group if not r["parse_ok"])
        met = [r["verdict"] is True for r in group]
        negative = any(m and w < 0 for m, w in zip(met, weights, strict=True))
        row = {c: first.get(c) for c in RESULT_COLUMNS}
        row.update(dimension="total", criterion_id=None, weight=None, verdict=None, explanation=None,
                   cache_key=None, raw_reply=None, n_candidates=None, cost_usd=0.0, latency_s=0.0,
                   prep_cost_usd=0.0 if first.get("prep_key") is not None else None,
                   cached=all(bool(r.get("cached")) for r in group), parse_ok=not unparsed,
                   negative_flag=negative,
                   score=(sum(w for m, w in zip(met, weights, strict=True) if m) / positive
                          if not unparsed else math.nan),
                   error=f"{unparsed} of {len(group)} items unparsed" if unparsed else None)
        out.append(row)
    return out
