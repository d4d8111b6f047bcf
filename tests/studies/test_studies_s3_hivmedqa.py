"""Study S3 (seed 002, HIVMedQA): items, answers, judging, analyses, the release branch."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from workbench.datasets import load_dataset
from workbench.errors import DatasetError
from workbench.metrics import extract_entities, llm_synonyms, synonym_f1
from workbench.studies import s3_hivmedqa as s3
from workbench.studies.s3_hivmedqa._data import SCORE_COLUMNS
from workbench.studies.s3_hivmedqa._release import RELEASE_BACKEND, RELEASE_JUDGE
from workbench.studies.s3_hivmedqa._study import _collect

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "hivmedqa"


# --- items -----------------------------------------------------------------------------


def test_build_items_makes_category_4_from_every_vignette_and_cue():
    raw = load_dataset("s3_hiv_en")["items"]
    items = s3.build_items(raw, items_per_category=2)
    assert items.groupby("category").size().to_dict() == {1: 2, 2: 2, 3: 2, 4: 6}
    c3 = items[items["category"] == 3].set_index("item_id")
    c4 = items[items["category"] == 4]
    assert set(c4["perturbation"]) == set(s3.BIAS_TYPES)
    for row in c4.itertuples():
        source = c3.loc[row.source_item]
        assert source.question in row.question  # the vignette is kept whole, a cue added
        assert source.wrong_answer.lower() in row.question.lower()  # the cue names it
        assert row.reference == source.reference  # same gold answer
    plain = items[items["category"] < 4]
    assert (plain["perturbation"] == "none").all()
    assert (plain["source_item"] == plain["item_id"]).all()


def test_build_items_rejects_an_unknown_bias():
    raw = load_dataset("s3_hiv_en")["items"]
    with pytest.raises(ValueError, match="cognitive-bias"):
        s3.build_items(raw, bias_types=["verbosity_padding"])


# --- a tiny run on the sim backend ------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    cache = tmp_path_factory.mktemp("s3-cache")
    mp.setenv("WORKBENCH_CACHE_DIR", str(cache))
    config = s3.Config(items_per_category=1, iterations=2, answer_models=["sim/answer-strong"])
    try:
        yield config, s3.run(config), cache
    finally:
        mp.undo()


def test_run_returns_every_frame_with_the_counts(tiny):
    config, res, _ = tiny
    for name in ("items", "answers", "scores", "entity_f1", "model_summary", "tests",
                 "category_trend", "trend_counts", "bias_drop", "supervision_gap", "failures",
                 "iteration_means", "table2_side_by_side"):
        assert name in res, name
    assert "release_issues" not in res and res.config is config
    assert list(s3.tables(res)) == ["model_summary", "tests", "tests_pairings", "category_trend",
                                    "bias_drop", "supervision_gap", "entity_f1", "scores",
                                    "parse_counts"]
    n_items = 3 + 3  # one per category 1-3, three cues on the one vignette
    models = config.models + [s3.UPPER_BOUND]
    assert config.models == ["sim/answer-strong", "sim/answer-tiny"]
    assert len(res["answers"]) == n_items * len(models) * config.iterations
    scores = res["scores"]
    assert list(scores.columns) == list(SCORE_COLUMNS)
    assert len(scores) == len(res["answers"]) * 2 * len(s3.DIMENSIONS)
    assert set(scores["supervision"]) == {"supervised", "unsupervised"}
    assert set(scores["backend"]) == {"sim"}
    roles = scores.drop_duplicates("answer_model").set_index("answer_model")["answer_role"]
    roles = roles.to_dict()
    assert roles == {"sim/answer-strong": "model", "sim/answer-tiny": "lower_bound",
                     s3.UPPER_BOUND: "upper_bound"}
    assert len(res["entity_f1"]) == len(res["answers"])


def test_quality_control_rows_bracket_the_models(tiny):
    _, res, _ = tiny
    summary = res["model_summary"]
    comp = summary[summary["dimension"] == "comprehension"].set_index("answer_model")["mean"]
    assert comp["sim/answer-tiny"] < comp["sim/answer-strong"] < comp[s3.UPPER_BOUND]
    gap = res["supervision_gap"].set_index("answer_model")
    assert gap.loc["sim/answer-tiny", "estimate"] > 0  # unsupervised is over-optimistic
    head = s3.headline(res)
    assert head["lower_bound_mean"] < head["upper_bound_mean"]
    assert head["best_model"] == "sim/answer-strong"
    assert head["n_answers"] == len(res["answers"]) and head["n_failed_answers"] == 0


def test_a_rerun_is_served_from_the_cache(tiny, monkeypatch):
    config, res, cache = tiny
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(cache))
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")  # a miss would raise CacheMiss
    again = _collect(config)
    pd.testing.assert_frame_equal(again["scores"], res["scores"])


def test_a_failed_answer_stays_as_unscored_rows():
    raw = load_dataset("s3_hiv_en")["items"]
    items = s3.build_items(raw, items_per_category=1, bias_types=[])
    answers = pd.DataFrame({
        "item_id": list(items["item_id"][:2]), "answer_model": "sim/answer-mid",
        "answer_sample": 0, "response": [None, "HIV is diagnosed with a blood test."],
        "ok": [False, True], "error": ["timeout: no reply", None], "cache_key": None,
        "backend": "sim", "cost_usd": 0.0,
    })
    scores = s3.judge_answers(items, answers, judge_model="sim/judge-a")
    failed = scores[scores["item_id"] == answers["item_id"][0]]
    assert len(failed) == 2 * len(s3.DIMENSIONS)
    assert failed["score"].isna().all() and not failed["parse_ok"].any()
    assert failed["error"].str.contains("timeout").all()
    counts = s3.failure_counts(answers, scores).set_index("stage")
    assert counts.loc["answer", "n_failed"] == 1
    assert counts.loc["judge_supervised", "n_failed"] == len(s3.DIMENSIONS)
    f1 = s3.entity_f1(items, answers, synonym_model="")
    assert math.isnan(f1["f1"].iloc[0]) and f1["f1"].iloc[1] >= 0  # NaN, never 0


# --- analyses on hand-made scores -------------------------------------------------------


def _scores(values: dict[tuple[str, str], list[list[float]]], *, dimension="comprehension",
            category=1, supervision="supervised") -> pd.DataFrame:
    """values[(model, role)] = [[score of item i, iteration k]]"""
    rows = []
    for (model, role), grid in values.items():
        for i, row in enumerate(grid):
            for k, v in enumerate(row):
                rows.append({"item_id": f"q{i}", "source_item": f"q{i}", "category": category,
                             "perturbation": "none", "answer_model": model, "answer_role": role,
                             "answer_sample": k, "judge_model": "j", "supervision": supervision,
                             "dimension": dimension, "score": v, "parse_ok": not np.isnan(v),
                             "error": None, "backend": "sim"})
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS))


def test_model_summary_is_mean_and_sd_over_iteration_means():
    scores = _scores({("m", "model"): [[4, 2], [2, np.nan], [3, 5]]})
    row = s3.model_summary(scores).iloc[0]
    per_iteration = [np.mean([4, 2, 3]), np.mean([2, 5])]  # NaN left out of its iteration
    assert row["mean"] == pytest.approx(np.mean(per_iteration))
    assert row["sd"] == pytest.approx(np.std(per_iteration, ddof=1))
    assert (row["n_iterations"], row["n_scores"], row["n_failed"]) == (2, 5, 1)
    table = s3.format_table2(s3.model_summary(scores))
    assert table.loc["m", "comprehension"] == f"{row['mean']:.2f} ± {row['sd']:.2f}"


def test_best_model_tests_match_scipy_with_bonferroni_and_holm():
    rng = np.random.default_rng(3)
    base = rng.integers(2, 5, size=(6, 3)).astype(float)
    scores = _scores({
        ("best", "model"): (base + 1).tolist(),
        ("m2", "model"): (base + rng.normal(0, 0.5, base.shape)).round().tolist(),
        ("m3", "model"): (base - 1 + rng.normal(0, 0.5, base.shape)).round().tolist(),
        ("upper", "upper_bound"): np.full(base.shape, 5.0).tolist(),
    })
    tests = s3.best_model_tests(scores)
    assert set(tests["padjust"]) == {"bonf", "holm"}
    assert set(tests["a"]) == {"best"} and set(tests["b"]) == {"m2", "m3"}  # no upper bound
    bonf = tests[tests["padjust"] == "bonf"].set_index("b")
    holm = tests[tests["padjust"] == "holm"].set_index("b")
    raw = {}
    for other in ("m2", "m3"):
        a = scores[scores.answer_model == "best"].sort_values(["item_id", "answer_sample"]).score
        b = scores[scores.answer_model == other].sort_values(["item_id", "answer_sample"]).score
        ref = sps.ttest_rel(a.to_numpy(), b.to_numpy())
        raw[other] = ref.pvalue
        assert bonf.loc[other, "p_value"] == pytest.approx(ref.pvalue)
        assert bonf.loc[other, "estimate"] == pytest.approx((a.to_numpy() - b.to_numpy()).mean())
        assert bonf.loc[other, "n"] == 18
    for other in raw:
        assert bonf.loc[other, "p_adjusted"] == pytest.approx(min(1.0, 2 * raw[other]))
    low, high = sorted(raw, key=raw.get)
    assert holm.loc[low, "p_adjusted"] == pytest.approx(min(1.0, 2 * raw[low]))
    assert holm.loc[high, "p_adjusted"] == pytest.approx(
        min(1.0, max(2 * raw[low], raw[high])))


def test_supervision_gap_is_a_paired_difference_per_answer():
    sup = _scores({("m", "model"): [[3, 2], [4, 4], [1, 2]]}, supervision="supervised")
    uns = _scores({("m", "model"): [[4, 3], [4, 5], [3, 2]]}, supervision="unsupervised")
    gap = s3.supervision_gap(pd.concat([sup, uns]), dimensions=["comprehension"]).iloc[0]
    diff = np.array([1, 1, 0, 1, 2, 0], dtype=float)
    assert gap["estimate"] == pytest.approx(diff.mean())
    assert gap["n"] == 6
    ref = sps.ttest_rel([4, 3, 4, 5, 3, 2], [3, 2, 4, 4, 1, 2])
    assert gap["p_value"] == pytest.approx(ref.pvalue)
    half = sps.t.ppf(0.975, 5) * diff.std(ddof=1) / np.sqrt(6)
    assert (gap["ci_low"], gap["ci_high"]) == pytest.approx((diff.mean() - half,
                                                              diff.mean() + half))


def test_bias_drop_pairs_by_source_vignette():
    c3 = _scores({("m", "model"): [[4, 4], [3, 5], [5, 5]]}, category=3)
    c4 = _scores({("m", "model"): [[3, 3], [3, 4], [5, 3]]}, category=4)
    c4 = c4.assign(source_item=c4["item_id"], item_id=c4["item_id"] + "~recency",
                   perturbation="recency")
    drop = s3.bias_drop(pd.concat([c3, c4]), dimensions=["comprehension"])
    assert list(drop["bias_type"]) == ["recency"]  # one type: no pooled row
    row = drop.iloc[0]
    per_vignette_3, per_vignette_4 = np.array([4, 4, 5]), np.array([3, 3.5, 4])
    assert row["pairing"] == "source_item" and row["n"] == 3
    assert row["estimate"] == pytest.approx((per_vignette_3 - per_vignette_4).mean())
    assert row["p_value"] == pytest.approx(sps.ttest_rel(per_vignette_3, per_vignette_4).pvalue)
    assert row["mean_category3"] == pytest.approx(per_vignette_3.mean())


def test_bias_drop_without_links_pairs_by_iteration():
    c3 = _scores({("m", "model"): [[4, 4, 2], [3, 5, 3]]}, category=3)
    c4 = _scores({("m", "model"): [[3, 4, 1], [2, 2, 3]]}, category=4)
    c4 = c4.assign(item_id="b" + c4["item_id"], source_item="b" + c4["item_id"],
                   perturbation="bias")
    row = s3.bias_drop(pd.concat([c3, c4]), dimensions=["comprehension"]).iloc[0]
    assert row["pairing"] == "iteration" and row["n"] == 3
    per_it = np.array([3.5, 4.5, 2.5]) - np.array([2.5, 3.0, 2.0])
    assert row["estimate"] == pytest.approx(per_it.mean())


def test_trend_counts_count_declining_models():
    rows = []
    for model, means in {"a": [4, 3, 2], "b": [3, 4, 2], "u": [5, 4, 3]}.items():
        for cat, m in enumerate(means, start=1):
            rows.append({"answer_model": model,
                         "answer_role": "upper_bound" if model == "u" else "model",
                         "category": cat, "mean": m})
    counts = s3.trend_counts(pd.DataFrame(rows)).set_index(["from_category", "to_category"])
    assert counts.loc[(1, 2), "n_declining"] == 1  # a only; u is the upper bound
    assert counts.loc[(2, 3), "n_declining"] == 2
    assert counts.loc[(1, 3), "n_models"] == 2


# --- MedSynF1 -----------------------------------------------------------------------------


def test_entity_f1_equals_synonym_f1_with_the_whole_dictionary():
    raw = load_dataset("s3_hiv_en")["items"]
    items = s3.build_items(raw, items_per_category=1, bias_types=[])
    answers = pd.DataFrame({
        "item_id": list(items["item_id"]) * 2, "answer_model": "x", "answer_sample": 0,
        "response": list(items["reference"]) + [
            "Cryptococcal meningitis; start amphotericin B and flucytosine.",
            "ART with PrEP and condoms.", "HIV RNA and viral load tests."],
        "ok": True, "error": None, "cache_key": None, "backend": "sim", "cost_usd": 0.0,
    })
    f1 = s3.entity_f1(items, answers)
    assert (f1["f1"].iloc[:3] == 1.0).all()  # the reference itself
    refs = extract_entities(list(items["reference"]), lang="en", method="phrases")
    dictionary = llm_synonyms([e for r in refs for e in r])
    for k in range(3, 6):
        ents = extract_entities(answers["response"].iloc[k], lang="en", method="phrases")
        want = synonym_f1(refs[k - 3], ents, dictionary, lang="en")
        assert f1["f1"].iloc[k] == pytest.approx(want["f1"])
        assert f1["n_answer"].iloc[k] == want["n_answer"]


# --- the release branch -------------------------------------------------------------------


@pytest.fixture(scope="module")
def release():
    return s3.run(s3.Config(release_dir=str(FIXTURE)))


def test_release_branch_uses_the_release_answers_and_judge_replies(release):
    assert len(release["release_issues"]) > 0  # the fixture's skipped files are reported
    scores = release["scores"]
    assert set(scores["backend"]) == {RELEASE_BACKEND}
    assert set(scores["judge_model"]) == {RELEASE_JUDGE}
    assert set(scores["category"]) == {1, 4}  # release 1 and 5 = paper 1 and 4
    assert set(scores.loc[scores["category"] == 4, "perturbation"]) == {"bias"}
    roles = scores.drop_duplicates("answer_model").set_index("answer_model")["answer_role"]
    assert roles["Rephrased gold answers"] == "upper_bound"
    assert roles["Claude 3.5 Sonnet v2"] == "model"
    bad = scores[~scores["parse_ok"]]
    assert len(bad) > 0 and bad["score"].isna().all()  # unparsed replies: NaN, never 0
    head = s3.headline(release)
    assert head["release"] is True and head["n_unparsed"] == len(bad)
    assert head["backend"] == "openai" and head["answer_backend"] == "release"


def test_release_branch_compares_with_the_papers_table_2(release):
    table = release["table2"]
    claude = table[(table["answer_model"] == "Claude 3.5 Sonnet v2")
                   & (table["dimension"] == "comprehension")].iloc[0]
    assert claude["paper_mean"] == 4.08 and claude["paper_sd"] == 0.09
    summary = release["model_summary"]
    mine = summary[(summary["answer_model"] == "Claude 3.5 Sonnet v2")
                   & (summary["dimension"] == "comprehension")]["mean"].item()
    assert claude["this_mean"] == pytest.approx(mine)
    assert claude["difference"] == pytest.approx(mine - 4.08)
    side = s3.table2_side_by_side(summary, s3.paper_table2(), label="release")
    rows = side.loc[(slice(None), "Claude 3.5 Sonnet v2"), :]
    assert [src for src, _ in rows.index] == ["published (real judges)", "release"]
    assert side.loc[("published (real judges)", "Claude 3.5 Sonnet v2"), "comprehension"] == (
        "4.08 ± 0.09")


def test_paper_table2_holds_the_published_values():
    paper = s3.paper_table2()
    assert len(paper) == 11 * 6 and paper["paper_model"].nunique() == 11
    rephrased = paper[paper["answer_role"] == "upper_bound"].set_index("dimension")
    assert rephrased.loc["comprehension", "mean"] == 4.71
    assert rephrased.loc["medsynf1", "mean"] == 0.53
    lower = paper[paper["answer_role"] == "lower_bound"].set_index("dimension")
    assert lower.loc["reasoning", "mean"] == 1.83


def test_a_release_without_judge_outputs_is_a_dataset_error(tmp_path):
    """Only ``questions_files/``: a DatasetError naming the missing folders, never a
    ZeroDivisionError in the plots (issue 12)."""
    root = tmp_path / "deploy_medical_llm_evaluation"
    shutil.copytree(FIXTURE / "deploy_medical_llm_evaluation" / "questions_files",
                    root / "questions_files")
    with pytest.raises(DatasetError, match="results-GPT-score") as info:
        s3.run(s3.Config(release_dir=str(tmp_path)))
    assert "model_answers/raw" in str(info.value)


def _reply(score: int) -> dict:
    keys = {f"question {i}": score for i in range(1, 6)}
    return {"response": "```json\n" + json.dumps({**keys, "reason": "r"}) + "\n```"}


def _write(path: Path, records: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records), encoding="utf-8")


@pytest.fixture(scope="module")
def scoped(tmp_path_factory):
    """A release with categories 3, 4 and 5 (two questions each, 5.k cues 3.k), two
    models, two iterations; category 5 scores one below category 3, with noise per
    iteration so the two pairings of the best-model tests differ in n."""
    root = tmp_path_factory.mktemp("scoped") / "deploy_medical_llm_evaluation"
    for cat in (3, 4, 5):
        _write(root / f"questions_files/HIV_evaluation_questionare_category_{cat}.json",
               [{"question": f"q{cat}.{k}", "true_answer": f"gold answer {k}"} for k in (1, 2)])
    base = {"Claude": 4, "Llama_cluster": 3}
    for folder, stem in (("Claude", "Claude"), ("Llama_cluster", "Llama")):
        for cat in (3, 4, 5):
            for it in (1, 2):
                name = f"{stem}_answers_category_{cat}.{it}_HIV_EQ.json"
                _write(root / "model_answers/raw" / folder / name,
                       [{"question": f"q{cat}.{k}", "answer": f"answer {k} {it}",
                         "true_answer": f"gold answer {k}"} for k in (1, 2)])
                score = base[folder] - (cat == 5) + (it == 2 and folder == "Claude")
                _write(root / "model_answers/results-GPT-score" / folder / f"GPT-score_{name}",
                       [_reply(score), _reply(min(score + 1, 5))])
                _write(root / "model_answers/results-unsupervised-GPT-score" / folder
                       / f"unsupervised-GPT-score_{name}", [_reply(5), _reply(5)])
    return root.parent


def test_release_scope_defaults_to_the_papers_table_2(scoped):
    res = s3.run(s3.Config(release_dir=str(scoped)))
    assert set(res["scores"]["category"]) == {3, 4, 5}  # release 4 = the paper's 5
    (label,) = set(res["table2_side_by_side"].index.get_level_values("source")) - {
        "published (real judges)"}
    assert "release categories 1, 2, 3, 4, 5" in label and "MedSynF1 recomputed here" in label
    narrow = s3.run(s3.Config(release_dir=str(scoped), release_categories=[3, 5]))
    assert set(narrow["scores"]["category"]) == {3, 4}
    assert len(narrow["scores"]) < len(res["scores"])


def test_release_category_5_is_paired_with_its_category_3_vignette(scoped):
    res = s3.run(s3.Config(release_dir=str(scoped)))
    items = res["items"].set_index("item_id")
    assert items.loc["5.1", "source_item"] == "3.1" and items.loc["5.2", "source_item"] == "3.2"
    drop = res["bias_drop"].set_index("answer_model")
    assert (drop["pairing"] == "source_item_iteration").all()
    assert (drop["n"] == 4).all()  # 2 vignettes x 2 iterations
    # cue -1 everywhere, except Claude's iteration-2 question 2: 5 in both (capped at 5)
    assert drop.loc["Llama 3.3-70B-Instruct", "estimate"] == pytest.approx(1.0)
    assert drop.loc["Claude 3.5 Sonnet v2", "estimate"] == pytest.approx(0.75)


def test_release_shows_both_pairings_and_a_computed_verdict(scoped):
    res = s3.run(s3.Config(release_dir=str(scoped)))
    both = res["tests_pairings"]
    assert set(both["padjust"]) == {"bonf", "holm"}
    assert (both["n_question_iteration"] == 2 * both["n_question_mean"]).all()
    diff = res["table2"]["difference"].dropna()
    verdict = s3.table2_verdict(res["table2"])
    assert f"below the paper in {(diff < 0).sum()} of {len(diff)} cells" in verdict
    head = s3.headline(res)
    assert head["table2_verdict"] == verdict
    assert head["release_categories"] == [1, 2, 3, 4, 5]
    assert head["n_cells_below_paper"] == (diff < 0).sum()
    assert head["median_difference"] == pytest.approx(diff.median())


def _f1_raw(rows: list[tuple]) -> str:
    """An ``f1_raw.csv`` as the release writes it: a leading unnamed pandas index, every
    F1 variant side by side, rows of two NLP models."""
    variants = [f"synonyms{lem}_{m}_{src}" for lem in ("", "_lemmatized")
                for src in ("dict", "snomed", "wn") for m in ("precision", "recall", "f1")]
    head = ",nlp_model,model,subfolder,category_id,iteration_number,question_index,precision," \
           "recall,f1_score," + ",".join(variants)
    lines = [head]
    for i, (nlp, model, cat, it, q, f1) in enumerate(rows):
        values = [0.5 if v != "synonyms_lemmatized_f1_dict" else f1 for v in variants]
        lines.append(",".join(map(str, [i, nlp, model, model, cat, it, q, 0.1, 0.1, 0.1,
                                        *values])))
    return "\n".join(lines) + "\n"


def test_release_medsynf1_is_the_releases_own_when_it_has_f1_raw(scoped, tmp_path):
    shutil.copytree(scoped, tmp_path / "r")
    rows = [("en_core_sci_lg", "Claude", c, it, q, 0.1 * q + 0.3)
            for c in (3, 4, 5, 6) for it in (1, 2) for q in (0, 1)]
    rows += [("en_core_sci_sm", "Claude", 3, 1, 0, 0.99)]  # a second NLP model: not used
    (tmp_path / "r" / "deploy_medical_llm_evaluation" / "f1_raw.csv").write_text(
        _f1_raw(rows), encoding="utf-8")
    res = s3.run(s3.Config(release_dir=str(tmp_path / "r")))
    f1 = res["entity_f1"]
    assert (f1["backend"] == "hivmedqa_f1").all() and set(f1["category"]) == {3, 4, 5}  # no 6
    assert set(f1["answer_model"]) == {"Claude 3.5 Sonnet v2"}
    row = res["model_summary"].query("dimension == 'medsynf1'").iloc[0]
    assert row["mean"] == pytest.approx(0.35)  # (0.3 + 0.4) / 2, never 0.99
    (label,) = set(res["table2_side_by_side"].index.get_level_values("source")) - {
        "published (real judges)"}
    assert "MedSynF1 from the release's f1_raw.csv" in label


def test_recomputed_medsynf1_stays_out_of_the_release_difference(scoped, tmp_path):
    """Without the release's f1_raw.csv, MedSynF1 is this workbench's recomputation: shown,
    but not a release number, so it has no difference and no say in the verdict."""
    res = s3.run(s3.Config(release_dir=str(scoped)))
    table2 = res["table2"]
    medsyn = table2[table2["dimension"] == "medsynf1"]
    assert medsyn["this_mean"].notna().any()  # computed and shown
    assert medsyn["difference"].isna().all()
    others = table2[table2["dimension"] != "medsynf1"]
    assert others["difference"].notna().any()
    head = s3.headline(res)
    assert head["n_cells_compared"] == int(table2["difference"].notna().sum())
    # with the release's own f1_raw.csv the MedSynF1 cells are compared
    shutil.copytree(scoped, tmp_path / "r")
    rows = [("en_core_sci_lg", "Claude", c, it, q, 0.5) for c in (3, 4, 5) for it in (1, 2)
            for q in (0, 1)]
    (tmp_path / "r" / "deploy_medical_llm_evaluation" / "f1_raw.csv").write_text(
        _f1_raw(rows), encoding="utf-8")
    own = s3.run(s3.Config(release_dir=str(tmp_path / "r")))["table2"]
    assert own.loc[own["dimension"] == "medsynf1", "difference"].notna().any()


def test_pairing_comparison_leaves_differs_missing_when_a_test_is_missing():
    from workbench.studies.s3_hivmedqa._analysis import pairing_comparison

    def tests(rows):
        return pd.DataFrame(rows, columns=["padjust", "a", "b", "n", "estimate", "p_adjusted",
                                           "significant"])

    by_answer = tests([("bonf", "m1", "m2", 10, 0.5, 0.01, True),
                       ("bonf", "m1", "m3", 10, 0.2, 0.30, False)])
    by_question = tests([("bonf", "m1", "m2", 5, 0.5, 0.20, False)])
    out = pairing_comparison(by_answer, by_question).set_index("b")
    assert bool(out.loc["m2", "differs"])
    assert pd.isna(out.loc["m3", "differs"])  # no test under question means: not "differs"
