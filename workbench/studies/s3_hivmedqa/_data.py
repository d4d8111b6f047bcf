"""S3 data stage: the category 1-4 items, answers, rephrased references, MedGPT judging
and the synonym-set entity F1 (private; re-exported by ``workbench.studies.s3_hivmedqa``)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from workbench import perturb
from workbench.judges import JudgeSpec, run_judging
from workbench.llm import CallFailure, Request, complete_many, model_backend
from workbench.prompts import render
from workbench.studies.common import ANSWER_COLUMNS, generate_answers

STUDY = "s3_hivmedqa"
#: The five MedGPT dimensions (seed 002 supplementary section 4), in the paper's order.
DIMENSIONS = ("comprehension", "reasoning", "knowledge_recall", "demographic_bias", "harm")
#: ``answer_model`` of the rephrased gold answers (the paper's upper bound).
UPPER_BOUND = "rephrased_reference"
#: Operators of :mod:`workbench.perturb` that build category 4 (seed 002 section 2.2).
BIAS_TYPES = ("recency", "frequency", "status_quo")
#: Columns of the long scores frame (one row per judged answer, supervision and dimension).
SCORE_COLUMNS = (
    "item_id", "source_item", "category", "perturbation", "answer_model", "answer_role",
    "answer_sample", "judge_model", "supervision", "dimension", "score", "parse_ok",
    "error", "backend",
)
#: Columns of the per-response entity F1 frame.
F1_COLUMNS = (
    "item_id", "category", "answer_model", "answer_role", "answer_sample", "precision", "recall",
    "f1", "n_reference", "n_answer", "backend",
)


def role_of(model: str, *, lower_bound: str, upper_bound: str = UPPER_BOUND) -> str:
    """``upper_bound``, ``lower_bound`` or ``model`` (the quality-control rows of Table 2)."""
    if model == upper_bound:
        return "upper_bound"
    if model == lower_bound:
        return "lower_bound"
    return "model"


def build_items(items: pd.DataFrame, *, bias_types: Sequence[str] = BIAS_TYPES,
                items_per_category: int = 0) -> pd.DataFrame:
    """Categories 1-3 of a bundled set plus category 4 made by the cognitive-bias operators.

    Every ``bias_types`` operator (``recency``, ``frequency``, ``status_quo`` of
    :mod:`workbench.perturb`) is applied to every category-3 vignette with the item's
    ``wrong_answer``, so each category-4 item is paired with its source vignette
    (``source_item``). ``items_per_category > 0`` keeps the first n items of each of
    categories 1-3 (quick runs). Returns the items with ``perturbation`` (``none`` or the
    bias type), ``source_item`` and an integer ``category`` 1-4.
    """
    for column in ("item_id", "category", "question", "reference"):
        if column not in items.columns:
            raise ValueError(f"S3 items have no column {column!r}")
    unknown = [b for b in bias_types if b not in perturb.QUESTION_OPERATORS]
    if unknown:
        raise ValueError(f"bias_types {unknown} are not cognitive-bias operators; "
                         f"use {sorted(perturb.QUESTION_OPERATORS)}")
    base = items.assign(category=items["category"].astype(int))
    base = base[base["category"].isin([1, 2, 3])].sort_values(["category", "item_id"])
    if items_per_category > 0:
        base = base.groupby("category", group_keys=False).head(items_per_category)
    base = base.assign(perturbation="none", source_item=base["item_id"])
    vignettes = base[base["category"] == 3]
    parts = [base]
    for bias in bias_types:
        if not len(vignettes):
            break
        biased = perturb.apply(vignettes, bias)
        parts.append(biased.assign(category=4))
    out = pd.concat(parts, ignore_index=True)
    if "lang" not in out.columns:
        out["lang"] = "en"
    return out.drop(columns=["perturbation_params"], errors="ignore")


def rephrase_references(items: pd.DataFrame, *, model: str, iterations: int,
                        temperature: float = 1.0, progress: bool = False,
                        budget_usd: float | None = None) -> pd.DataFrame:
    """The upper bound: ``model`` rewrites each reference (``paraphrase`` template), once per
    iteration (``Request.sample`` = iteration), all through one ``complete_many``.

    Returns rows in the columns of :func:`workbench.studies.common.generate_answers` with
    ``answer_model`` = :data:`UPPER_BOUND`; a failed call is a row with ``ok=False``.
    """
    keys, requests = [], []
    for item in items.itertuples(index=False):
        messages = render("paraphrase", lang=getattr(item, "lang", "en") or "en", text=item.reference)
        for sample in range(iterations):
            keys.append((item.item_id, sample))
            requests.append(Request(model=model, messages=messages, temperature=temperature,
                                    sample=sample))
    results = complete_many(requests, progress=progress, budget_usd=budget_usd)
    rows = []
    for (item_id, sample), res in zip(keys, results, strict=True):
        failed = isinstance(res, CallFailure)
        rows.append({
            "item_id": item_id, "answer_model": UPPER_BOUND, "answer_sample": sample,
            "response": None if failed else res.text, "ok": not failed and bool(res.text.strip()),
            "error": f"{res.error_type}: {res.message}" if failed else None,
            "cache_key": res.key, "backend": model_backend(model),
            "cost_usd": 0.0 if failed else res.cost_usd,
        })
    return pd.DataFrame(rows, columns=list(ANSWER_COLUMNS))


def make_answers(items: pd.DataFrame, answer_models: Sequence[str], *, iterations: int,
                 temperature: float, rephrase_model: str = "", progress: bool = False,
                 budget_usd: float | None = None) -> pd.DataFrame:
    """Answers of every model to every item, ``iterations`` samples each, plus the
    rephrased references when ``rephrase_model`` is given (one row per call, failures kept)."""
    frames = [generate_answers(items, list(answer_models), temperature=temperature,
                               samples=iterations, progress=progress, budget_usd=budget_usd)]
    if rephrase_model:
        frames.append(rephrase_references(items, model=rephrase_model, iterations=iterations,
                                          temperature=temperature, progress=progress,
                                          budget_usd=budget_usd))
    return pd.concat(frames, ignore_index=True)


def judge_answers(items: pd.DataFrame, answers: pd.DataFrame, *, judge_model: str,
                  temperature: float = 0.0, lower_bound: str = "", progress: bool = False,
                  budget_usd: float | None = None) -> pd.DataFrame:
    """MedGPT five-dimension judging of every answer, with the reference (``supervised``)
    and without it (``unsupervised``): the long scores frame (:data:`SCORE_COLUMNS`).

    An answer whose call failed cannot be judged: it stays as five rows per supervision
    setting with ``parse_ok=False``, a NaN score and the answer's error.
    """
    meta = items[["item_id", "question", "reference", "lang", "category", "perturbation",
                  "source_item"]]
    ok = answers[answers["ok"].astype(bool)]
    judged = ok.merge(meta, on="item_id", how="left", validate="many_to_one")
    parts = []
    for supervision, use_reference in (("supervised", True), ("unsupervised", False)):
        spec = JudgeSpec(protocol="dimensions", judge_model=judge_model, template="medgpt5",
                         use_reference=use_reference, temperature=temperature, study=STUDY,
                         budget_usd=budget_usd)
        res = run_judging(judged, spec, progress=progress) if len(judged) else pd.DataFrame(
            columns=["item_id", "answer_model", "answer_sample", "dimension", "score",
                     "parse_ok", "error", "backend", "judge_model"])
        res = res.assign(supervision=supervision)
        parts.append(res)
        failed = answers[~answers["ok"].astype(bool)]
        if len(failed):
            parts.append(pd.DataFrame([
                {"item_id": r.item_id, "answer_model": r.answer_model,
                 "answer_sample": r.answer_sample, "dimension": dim, "score": float("nan"),
                 "parse_ok": False, "error": f"answer failed: {r.error}",
                 "backend": model_backend(judge_model), "judge_model": judge_model,
                 "supervision": supervision}
                for r in failed.itertuples(index=False) for dim in DIMENSIONS]))
    scores = pd.concat(parts, ignore_index=True)
    scores = scores.drop(columns=["category", "perturbation", "source_item"], errors="ignore")
    scores = scores.merge(meta[["item_id", "category", "perturbation", "source_item"]],
                          on="item_id", how="left", validate="many_to_one")
    scores["answer_role"] = [role_of(m, lower_bound=lower_bound) for m in scores["answer_model"]]
    scores["score"] = scores["score"].astype(float)
    scores["parse_ok"] = scores["parse_ok"].astype(bool)
    return scores[list(SCORE_COLUMNS)].reset_index(drop=True)


def entity_f1(items: pd.DataFrame, answers: pd.DataFrame, *, method: str = "phrases",
              extractor_model: str = "sim/extractor", synonym_model: str = "sim/extractor",
              lower_bound: str = "", progress: bool = False) -> pd.DataFrame:
    """MedSynF1 of every answer (seed 002 supplementary section 6), one row per answer.

    Entities of the references and answers come from
    :func:`workbench.metrics.extract_entities` (``method``; ``llm`` asks
    ``extractor_model``); the synonym dictionary is built from the references' entities
    by :func:`workbench.metrics.llm_synonyms` (``synonym_model``; ``""`` = no dictionary,
    lemmatised exact matching only), as the paper built its GPT-Dict from the gold
    answers; :func:`workbench.metrics.synonym_f1` matches one to one. A failed answer or
    extraction gives NaN, never 0.
    """
    from workbench.metrics import extract_entities, llm_synonyms, normalize_entity, synonym_f1

    refs = items.drop_duplicates("item_id").set_index("item_id")
    ref_ids = list(refs.index)
    lang = str(refs["lang"].iloc[0]) if "lang" in refs.columns and len(refs) else "en"
    kwargs = {"lang": lang, "method": method, "progress": progress}
    if method == "llm":
        kwargs["model"] = extractor_model
    ref_entities = dict(zip(ref_ids, extract_entities([str(t) for t in refs["reference"]],
                                                      **kwargs), strict=True))
    synonyms: dict[str, list[str]] = {}
    if synonym_model:
        pool = [e for ents in ref_entities.values() if ents for e in ents]
        synonyms = llm_synonyms(pool, model=synonym_model, progress=progress)
    # the dictionary entries by normalised key, so each call gets only the entries its
    # entities can use (the same matches as the whole dictionary, much faster)
    normal: dict[str, str] = {}

    def norm(entity: str) -> str:
        if entity not in normal:
            normal[entity] = normalize_entity(entity, lang=lang)
        return normal[entity]

    by_key: dict[str, list[str]] = {}
    for key in synonyms:
        by_key.setdefault(norm(key), []).append(key)

    def score(ref: list[str] | None, ents: list[str] | None) -> dict:
        used = {norm(e) for e in (ref or []) + (ents or [])}
        subset = {k: synonyms[k] for n in used for k in by_key.get(n, [])}
        return synonym_f1(ref, ents, subset, lang=lang)

    good = answers["ok"].astype(bool) & answers["response"].notna()
    texts = list(dict.fromkeys(str(t) for t in answers.loc[good, "response"]))
    extracted = dict(zip(texts, extract_entities(texts, **kwargs), strict=True)) if texts else {}
    memo: dict[tuple, dict] = {}
    rows = []
    for rec, ok in zip(answers.itertuples(index=False), good, strict=True):
        key = (rec.item_id, str(rec.response) if ok else None)
        if key not in memo:
            ents = extracted[key[1]] if ok else None
            memo[key] = score(ref_entities.get(rec.item_id), ents)
        out = memo[key]
        rows.append({
            "item_id": rec.item_id,
            "category": refs.at[rec.item_id, "category"] if rec.item_id in refs.index else None,
            "answer_model": rec.answer_model,
            "answer_role": role_of(rec.answer_model, lower_bound=lower_bound),
            "answer_sample": rec.answer_sample,
            **{k: out[k] for k in ("precision", "recall", "f1", "n_reference", "n_answer")},
            "backend": rec.backend,
        })
    return pd.DataFrame(rows, columns=list(F1_COLUMNS))
