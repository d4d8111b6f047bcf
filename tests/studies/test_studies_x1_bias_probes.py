"""workbench.studies.x1_bias_probes: config, probe kinds, position tables, LLMBar, a tiny run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from workbench import perturb
from workbench.stats import position_consistency
from workbench.studies import x1_bias_probes as x1
from workbench.studies.x1_bias_probes import _analysis, _probes

LLMBAR = Path(__file__).resolve().parents[1] / "fixtures" / "llmbar"
JUDGEBENCH = Path(__file__).resolve().parents[1] / "fixtures" / "judgebench"


def test_every_operator_has_a_probe_kind():
    assert set(x1.ALL_OPERATORS) == set(perturb.OPERATORS) - {"none"}
    kinds = {op: x1.probe_kind(op) for op in x1.ALL_OPERATORS}
    assert kinds["position_swap"] == "pairwise"
    assert {op for op, k in kinds.items() if k == "question"} == set(perturb.QUESTION_OPERATORS)
    assert kinds["verbosity_padding"] == kinds["self_label"] == kinds["paraphrase"] == "answer"
    with pytest.raises(ValueError, match="unknown perturbation"):
        x1.probe_kind("shouting")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"operators": ["shouting"]}, "unknown perturbation"),
        ({"operators": ["none"]}, "baseline"),
        ({"protocol": "pairwise"}, "protocol"),
        ({"self_label_author": "me"}, "self_label_author"),
        ({"items_per_category": -2}, "items_per_category"),
        ({"answer_models": ["sim/answer-mid"], "operators": ["position_swap"]}, "two or more"),
        ({"operator_params": {"nope": {}}}, "unknown perturbation"),
    ],
)
def test_config_is_validated(changes, message):
    with pytest.raises(ValueError, match=message):
        x1.Config(**changes)


def test_llm_operators_get_the_rewrite_model():
    config = x1.Config(
        rewrite_model="sim/summarizer", operator_params={"sentiment": {"polarity": "negative"}}
    )
    assert config.params_for("paraphrase") == {"model": "sim/summarizer"}
    assert config.params_for("sentiment") == {"polarity": "negative", "model": "sim/summarizer"}
    assert config.params_for("authority") == {}


def test_pair_items_compares_every_pair_of_answer_models():
    base = pd.DataFrame(
        {
            "item_id": ["q1"] * 3 + ["q2"] * 2,
            "lang": "en",
            "question": "Q?",
            "reference": "R.",
            "answer_model": ["m1", "m2", "m3", "m1", "m3"],
            "response": ["a1", "a2", "a3", "b1", "b3"],
        }
    )
    pairs = _probes.pair_items(base, ["m1", "m2", "m3"])
    assert list(pairs["item_id"]) == ["q1|m1 vs m2", "q1|m1 vs m3", "q1|m2 vs m3", "q2|m1 vs m3"]
    row = pairs.iloc[3]
    assert (row["response_a"], row["response_b"], row["source_item"]) == ("b1", "b3", "q2")


def _verdicts(pairs: list[tuple], judge: str = "j") -> pd.DataFrame:
    rows = []
    for k, (first, second) in enumerate(pairs):
        for order, verdict in enumerate((first, second)):
            rows.append(
                {
                    "item_id": f"p{k}",
                    "judge_model": judge,
                    "temperature": 0.0,
                    "trial": 0,
                    "order": order,
                    "verdict": verdict,
                }
            )
    return pd.DataFrame(rows)


def test_position_table_agreement_and_its_wilson_interval():
    # 10 pairs: 7 agree, 2 flip, 1 has an unparsed second verdict (a flip too)
    pairs = [("A", "A")] * 5 + [("tie", "tie")] * 2 + [("A", "B"), ("B", "tie"), ("A", None)]
    frame = _verdicts(pairs)
    table = x1.position_table(frame)
    row = table.iloc[0]
    assert row["n"] == 10 and row["n_unparsed"] == 1
    assert row["agreement"] == pytest.approx(0.7) and row["flip_rate"] == pytest.approx(0.3)
    low, high = proportion_confint(7, 10, alpha=0.05, method="wilson")
    assert row["agreement_ci_low"] == pytest.approx(low, abs=1e-9)
    assert row["agreement_ci_high"] == pytest.approx(high, abs=1e-9)
    ref = position_consistency(frame, item="item_id", order="order", verdict="verdict")
    assert row["agreement"] == pytest.approx(ref["agreement"].iloc[0])
    flips = x1.position_flips(frame).iloc[0]
    assert flips["measure"] == "flip_rate" and flips["estimate"] == pytest.approx(0.3)
    assert flips["operator"] == "position_swap" and flips["probe_kind"] == "pairwise"


def test_llmbar_branch_on_the_fixture_release():
    table = x1.llmbar_position(str(LLMBAR))
    assert (table["source"] == "LLMBar release").all() and (table["backend"] == "llmbar").all()
    pooled = table[table["subset"] == "all"].set_index(["judge_model", "strategy"])
    assert set(pooled.index) == {("JudgeA", "CoT"), ("JudgeA", "Vanilla"), ("JudgeB", "Vanilla")}
    # JudgeA/Vanilla on Natural: verdicts (1,1), (2,1), (1,unparsed); labels 1, 2, 1
    row = pooled.loc[("JudgeA", "Vanilla")]
    assert row["n"] == 3 and row["n_unparsed"] == 1
    assert row["agreement"] == pytest.approx(1 / 3)
    assert row["accuracy_order0"] == pytest.approx(1.0)
    assert row["accuracy_order1"] == pytest.approx(1 / 3)
    # JudgeB/Vanilla: (1,1) and (2, "3" = unparsed)
    assert pooled.loc[("JudgeB", "Vanilla"), "agreement"] == pytest.approx(0.5)
    with pytest.raises(Exception, match="not found"):
        x1.llmbar_position(str(LLMBAR / "no-such-folder"))


def test_judgebench_branch_on_the_fixture_release():
    table = x1.judgebench_accuracy(str(JUDGEBENCH))
    assert (table["backend"] == "judgebench").all()
    assert list(table.columns) == _analysis.JUDGEBENCH_COLUMNS
    arena = table[table["judge_name"] == "arena_hard"].set_index("category")
    assert list(arena.index) == ["all", "knowledge", "reasoning", "math", "coding"]
    assert arena.loc["all", "pct_correct"] == 60.0  # inconsistent orders count as wrong
    head = x1.headline({**_empty_run(), "judgebench_accuracy": table})
    assert head["judgebench"]["gpt-4o-mini | gpt-4o-2024-05-13"]["math"] == 0.0
    with pytest.raises(Exception, match="not a JudgeBench checkout"):
        x1.judgebench_accuracy(str(LLMBAR))


def _empty_run() -> dict:
    return {"effects": pd.DataFrame(columns=_analysis.EFFECT_COLUMNS),
            "position": pd.DataFrame(columns=_analysis.POSITION_COLUMNS),
            "llmbar_position": pd.DataFrame(columns=_analysis.POSITION_COLUMNS),
            "failures": pd.DataFrame(columns=["stage", "n_calls", "n_failed", "backend"])}


def test_relative_llmbar_dir_is_read_from_the_project_root(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert _analysis.resolve_path("tests/fixtures/llmbar").resolve() == LLMBAR
    assert len(x1.llmbar_position("tests/fixtures/llmbar")) == 6


def test_a_tiny_sim_run_end_to_end():
    config = x1.Config(
        items_per_category=3,
        judge_models=["sim/judge-a", "sim/judge-b"],
        operators=["verbosity_padding", "recency", "position_swap", "self_label"],
    )
    tables = x1.run(config)
    assert tables.config is config and tables["judgebench_accuracy"].empty
    assert set(x1.tables(tables)) == set(tables) - {"judgebench_accuracy"} | {"parse_counts"}  # no CSV
    coverage = tables["coverage"].set_index("operator")
    assert set(coverage.index) == {
        "none",
        "verbosity_padding",
        "recency",
        "position_swap",
        "self_label",
    }
    items = _probes.load_items("s3_hiv_en", items_per_category=3)
    assert len(items) == 9 and set(items["category"]) == {1, 2, 3}
    cued = int((items["wrong_answer"].fillna("") != "").sum())
    assert cued == 3
    assert coverage.loc["recency", "n_items"] == cued * 3
    assert coverage.loc["recency", "n_skipped"] == (9 - cued) * 3
    effects = tables["effects"].set_index(["operator", "judge_model"])
    assert effects.loc[("position_swap", "sim/judge-a"), "measure"] == "flip_rate"
    assert effects.loc[("verbosity_padding", "sim/judge-b"), "n"] == 27
    assert effects.loc[("recency", "sim/judge-a"), "n"] == 9  # cued answers, paired with baseline
    assert (effects["backend"] == "sim").all()
    scores = tables["scores"]
    # per judge: baseline + padding + self-label on 27 answers, and the cued answers
    per_judge = scores.groupby("judge_model").size()
    assert (per_judge == 27 * 3 + cued * 3).all()
    recency = scores[scores["perturbation"] == "recency"]
    assert recency["item_id"].str.endswith("~recency").all()
    assert set(recency["source_item"]) == set(items.loc[items["category"] == 3, "item_id"])
    failures = tables["failures"]
    assert failures.loc[failures["stage"] == "score", "n_calls"].sum() == len(scores)
    assert failures.loc[failures["stage"] == "pairwise", "n_calls"].sum() == len(tables["verdicts"])
    assert len(tables["verdicts"]) == 2 * 9 * 3 * 2  # judges x questions x pairs x orders
    assert tables["llmbar_position"].empty
    head = x1.headline(tables)
    assert set(head["position_agreement"]) == {"sim/judge-a", "sim/judge-b"}
    assert (
        head["effect"]["verbosity_padding"]["sim/judge-b"]
        > head["effect"]["verbosity_padding"]["sim/judge-a"]
    )
    assert head["n_calls"]["answer"] == 27 + cued * 3
    assert "judgebench" not in head
    view = x1.position_view(tables["position"], tables["llmbar_position"])
    assert list(view["judge_model"]) == ["sim/judge-a", "sim/judge-b"]


def test_self_label_names_the_judge_or_the_answer_model():
    base = pd.DataFrame(
        {
            "item_id": ["q1"],
            "lang": "en",
            "question": "Q?",
            "reference": "R.",
            "answer_model": ["sim/answer-mid"],
            "answer_sample": [0],
            "response": ["An answer."],
        }
    )
    by_judge = x1.Config(judge_models=["sim/judge-e"])
    by_answer = x1.Config(self_label_author="answer")
    assert (
        _probes.self_labelled(base, by_judge, "sim/judge-e")["author"].iloc[0] == "sim/judge-e"
    )
    assert (
        _probes.self_labelled(base, by_answer, "sim/judge-e")["author"].iloc[0]
        == "sim/answer-mid"
    )


def test_a_failing_llm_operator_is_reported_not_dropped(monkeypatch):
    from workbench.errors import ProviderError

    def broken(items, name, **kwargs):
        if name == "paraphrase":
            raise ProviderError("2 of 2 paraphrase calls failed: boom")
        return real(items, name, **kwargs)

    real = perturb.apply
    monkeypatch.setattr(_probes.perturb, "apply", broken)
    base = pd.DataFrame(
        {
            "item_id": ["q1", "q2"],
            "lang": "en",
            "question": "Q?",
            "reference": "R.",
            "answer_model": "m",
            "answer_sample": 0,
            "response": "An answer.",
        }
    )
    frames, coverage = _probes.perturb_answers(base, x1.Config(operators=["paraphrase", "bandwagon"]))
    rows = {c["operator"]: c for c in coverage}
    assert "boom" in rows["paraphrase"]["error"] and rows["paraphrase"]["n_skipped"] == 2
    assert rows["bandwagon"]["error"] is None
    assert [f["perturbation"].iloc[0] for f in frames] == ["none", "bandwagon"]


def test_question_probes_on_a_set_without_cues_are_reported_as_skipped():
    config = x1.Config(
        dataset="s2_civil_ja",
        items_per_category=1,
        answer_models=["sim/answer-mid"],
        judge_models=["sim/judge-a"],
        operators=["recency"],
    )
    tables = x1.run(config)
    coverage = tables["coverage"].set_index("operator")
    n = len(_probes.load_items("s2_civil_ja", items_per_category=1))
    assert coverage.loc["recency", "n_items"] == 0 and coverage.loc["recency", "n_skipped"] == n
    assert tables["effects"].empty and list(tables["effects"].columns) == _analysis.EFFECT_COLUMNS
    assert len(tables["scores"]) == n  # the baseline is still judged
    assert x1.headline(tables)["effect"] == {}


def test_score_effects_of_a_judge_whose_scores_never_parse_is_empty_not_a_crash():
    """A real judge that never answers in the format (seen with a 135M local model): the
    effects table is empty with its columns; the unparsed rows stay in the results."""
    from workbench.studies.x1_bias_probes._analysis import EFFECT_COLUMNS, score_effects

    results = pd.DataFrame({
        "source_item": ["a", "a", "b", "b"], "answer_model": ["m"] * 4,
        "perturbation": ["none", "verbosity_padding"] * 2, "judge_model": ["openai/x"] * 4,
        "score": [float("nan")] * 4,
    })
    out = score_effects(results)
    assert out.empty and list(out.columns) == list(EFFECT_COLUMNS)
