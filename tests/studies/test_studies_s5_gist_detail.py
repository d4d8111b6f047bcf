"""workbench.studies.s5_gist_detail: data, span matching, bootstrap, a tiny sim run."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from workbench.stats import bootstrap_ci
from workbench.studies import s5_gist_detail as s5
from workbench.studies.s5_gist_detail import _data, _match

RUN_KEYS = {"split": "human", "judge_model": "oracle", "temperature": 0.0, "trial": 0}


@pytest.fixture(scope="module")
def bundled():
    return _data.load_answers("s5_accounting_ja")


def _oracle(answers: pd.DataFrame, gold: pd.DataFrame, *, failed: tuple = ()):
    """Results and predicted spans of a detector that flags exactly the human spans."""
    results = answers[["item_id", "answer_model", "answer_sample"]].assign(**RUN_KEYS)
    results["parse_ok"] = ~answers["answer_id"].isin(failed)
    flagged = gold[gold["label"] != "unit"]
    pred = flagged.assign(**RUN_KEYS, found=True, pred_unit=flagged["unit_id"])
    return results, pred


def test_load_answers_units_rebuild_each_reference(bundled):
    answers, gold = bundled
    assert len(answers) == 51 and answers["answer_id"].is_unique
    for rec in answers.drop_duplicates("item_id").itertuples():
        units = json.loads(rec.human_units)
        assert "".join(u["text"] for u in units) == rec.reference
        assert {u["role"] for u in units} <= {"gist", "detail"}
    flagged = gold[gold["label"] != "unit"]
    assert set(flagged["class"]) == set(s5.CLASSES)
    assert flagged["answer_id"].isin(answers["answer_id"]).all()


def test_load_answers_max_items_and_errors():
    answers, gold = _data.load_answers("s5_accounting_ja", max_items=2)
    assert set(answers["item_id"]) == {"s5-01", "s5-02"}
    assert set(gold["item_id"]) == {"s5-01", "s5-02"}
    with pytest.raises(ValueError, match="no spans or no responses"):
        _data.load_answers("s3_hiv_en")


def test_config_is_validated():
    with pytest.raises(ValueError, match="splits"):
        s5.Config(splits=["people"])
    with pytest.raises(ValueError, match="judge_models"):
        s5.Config(judge_models=[])
    with pytest.raises(ValueError, match="max_items"):
        s5.Config(max_items=-1)


def test_an_oracle_detector_scores_one_and_failed_answers_are_counted(bundled):
    answers, gold = bundled
    lost = answers["answer_id"].iloc[0]
    results, pred = _oracle(answers, gold, failed=(lost,))
    summary, per_answer = s5.match_spans(results, pred, gold)
    assert list(summary["class"]) == list(s5.CLASSES)
    assert (summary["recall"] == 1.0).all() and (summary["precision"] == 1.0).all()
    assert (summary["f1"] == 1.0).all()
    assert (summary["n_answers"] == 50).all() and (summary["n_answers_failed"] == 1).all()
    assert lost not in set(per_answer["answer_id"])
    # answers where the humans flag nothing of a class are "both empty" for the oracle
    flagged = gold[(gold["label"] != "unit") & (gold["answer_id"] != lost)]
    for cls, row in summary.set_index("class").iterrows():
        with_gold = flagged.loc[flagged["class"] == cls, "answer_id"].nunique()
        assert row["n_items_both_empty"] == 50 - with_gold
    neither = _match.neither_table(per_answer)
    assert list(neither["n_classes"]) == [0, 1, 2, 3, 4]
    assert neither["n_answers"].sum() == 50


def test_an_unlocated_flag_is_a_wrong_prediction(bundled):
    answers, gold = bundled
    one = answers.iloc[[1]]  # s5-01, answer-weak
    results, pred = _oracle(
        one, gold[gold["answer_id"].isin(one["answer_id"]) | gold["answer_id"].isna()]
    )
    extra = pred.iloc[[0]].assign(
        found=False, text="言い換えられた文", pred_unit="x1", start=np.nan, end=np.nan
    )
    extra = _data._place_unlocated(extra)
    assert extra["start"].iloc[0] >= _data.UNLOCATED_OFFSET
    summary, _ = s5.match_spans(results, pd.concat([pred, extra]), gold)
    row = summary.set_index("class").loc[extra["class"].iloc[0]]
    assert row["recall"] == 1.0 and row["precision"] < 1.0
    assert row["n_pred_unlocated"] == 1


def test_f1_intervals_match_bootstrap_ci():
    rng = np.random.default_rng(5)
    rows = []
    for k in range(30):
        for judge in ("j1", "j2"):
            for cls in ("excess_gist", "missing_detail"):
                r = rng.uniform() if rng.uniform() > 0.2 else np.nan
                p = rng.uniform() if rng.uniform() > 0.2 else np.nan
                rows.append(
                    {
                        "split": "human",
                        "judge_model": judge,
                        "temperature": 0.0,
                        "trial": 0,
                        "class": cls,
                        "answer_id": f"a{k}",
                        "recall": r,
                        "precision": p,
                    }
                )
    per_answer = pd.DataFrame(rows)
    mine = _match.f1_intervals(per_answer, n_boot=200, rng=np.random.default_rng(11))
    keys = ["split", "judge_model", "temperature", "trial", "class"]

    def statistic(d):
        m = d.groupby(keys)[["recall", "precision"]].mean()
        return dict(
            zip(
                m.index,
                2 * m["precision"] * m["recall"] / (m["precision"] + m["recall"]),
                strict=True,
            )
        )

    ref = bootstrap_ci(
        per_answer, statistic=statistic, n_boot=200, rng=np.random.default_rng(11), by="answer_id"
    )
    ref[keys] = pd.DataFrame(ref["measure"].tolist(), index=ref.index)
    both = mine.merge(ref, on=keys)
    assert len(both) == 4
    np.testing.assert_allclose(both["f1_ci_low"], both["ci_low"], rtol=1e-12)
    np.testing.assert_allclose(both["f1_ci_high"], both["ci_high"], rtol=1e-12)


def test_class_rates_of_the_human_annotation_by_hand(bundled):
    answers, gold = bundled
    results, _ = _oracle(answers.iloc[:0], gold)
    results = results.assign(dimension=pd.Series(dtype=object), score=pd.Series(dtype=float))
    rates = s5.class_rates(results, gold, answers[answers["item_id"] == "s5-01"])
    weak = rates[(rates["answer_model"] == "answer-weak")].set_index("class")["rate"]
    # s5-01 has 2 gist and 2 detail units; the weak answer misses u1, u3 (gist) and u2, u4
    units = gold[(gold["item_id"] == "s5-01") & (gold["label"] == "unit")]
    flagged = gold[gold["answer_id"] == "s5-01|answer-weak|0"]
    for cls in s5.CLASSES:
        role = cls.split("_")[1]
        expected = (flagged["class"] == cls).sum() / (units["role"] == role).sum()
        assert weak[cls] == pytest.approx(expected)


def test_a_tiny_sim_run_end_to_end():
    config = s5.Config(judge_models=["sim/judge-a"], max_items=3, n_boot=50, seed=1)
    tables = s5.run(config)
    written = s5.tables(tables)
    assert tables.config is config and set(written) == set(tables) | {"parse_counts"}
    assert all(written[name] is frame for name, frame in tables.items())
    assert set(tables) == {
        "judgments",
        "spans",
        "calls",
        "match",
        "match_answers",
        "unit_match",
        "neither",
        "class_rates",
        "published",
    }
    n_answers = tables["judgments"][["item_id", "answer_model"]].drop_duplicates().shape[0]
    calls = tables["calls"].set_index("split")
    assert set(calls.index) == {"human", "llm"}
    assert (calls["n_runs"] == n_answers).all()
    match = tables["match"]
    assert len(match) == 2 * len(s5.CLASSES)
    assert (match["n_answers"] + match["n_answers_failed"] == n_answers).all()
    assert match["backend"].eq("sim").all() and tables["judgments"]["backend"].eq("sim").all()
    ok = match.dropna(subset=["f1"])
    assert ((ok["f1_ci_low"] <= ok["f1"] + 1e-12) & (ok["f1"] <= ok["f1_ci_high"] + 1e-12)).all()
    # the per-class metric of the run is the judgments' score column
    judged = tables["judgments"]
    assert judged["dimension"].isin(s5.CLASSES).all()
    assert (judged["score"].dropna().between(0, 1)).all()
    assert set(tables["unit_match"]["class"]) == {"gist", "detail"}
    published = tables["published"]
    assert (published["annotator"] == s5.PUBLISHED_LABEL).sum() == 8
    head = s5.headline(tables)
    assert head["n_answers"] == n_answers and head["n_runs"] == 2 * n_answers
    assert set(head["f1"]) == {"human", "llm"}
    view = s5.f1_view(match)
    assert set(view["source"]) == {"sim/judge-a", s5.PUBLISHED_LABEL}
    assert view["row"].iloc[0] == "excess_gist · human split"


def test_the_same_run_twice_gives_the_same_tables():
    config = s5.Config(judge_models=["sim/judge-a"], max_items=2, splits=["llm"], n_boot=20, seed=3)
    first, second = s5.run(config), s5.run(config)
    pd.testing.assert_frame_equal(first["match"], second["match"])
    pd.testing.assert_frame_equal(first["spans"], second["spans"])


def test_published_numbers_come_from_the_published_folder():
    scores = _data.published_scores()
    assert list(scores.columns) == ["split", "class", "recall", "precision", "f1"]
    assert len(scores) == 8 and set(scores["class"]) == set(s5.CLASSES)
    assert scores.set_index(["split", "class"]).loc[("human", "excess_gist"), "f1"] == 0.18
    neither = _data.published_neither()
    assert neither.groupby("split")["n_answers"].sum().to_dict() == {"human": 50, "llm": 50}
    assert neither["n_classes"].tolist() == list(range(5)) * 2
