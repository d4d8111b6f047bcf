"""Every measure from one judge table, checked against reference code written from the
published definitions (a leaderboard with both orders, ties and scenario groups; story- and
system-level correlations), and the clear errors when the data cannot support a measure."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from workbench import qualify as q
from workbench.datasets import load_pairwise, load_pointwise, validate_pairwise
from workbench.datasets.judgebench import accuracy as judgebench_accuracy
from workbench.report import qualification_report

GROUPS = {"Writing": ["blog", "essay"], "Code": ["code_generation"]}


def _leaderboard_release(folder, n=60, seed=3):
    """A leaderboard-shaped release: items (scenario, label 0/1/2) and one prediction file
    per order, line-aligned, the second in the order shown (positional)."""
    rng = np.random.default_rng(seed)
    scenarios = rng.choice(["blog", "essay", "code_generation"], n)
    labels = rng.choice([0, 1, 2], n, p=[0.45, 0.45, 0.1])
    first = np.where(rng.random(n) < 0.7, labels, rng.choice([0, 1, 2], n))
    second_orig = np.where(rng.random(n) < 0.6, first, rng.choice([0, 1, 2], n))
    shown = np.array([{0: 1, 1: 0, 2: 2}[v] for v in second_orig])  # as the judge wrote it
    items = [{"scenario": s, "label": int(lab)} for s, lab in zip(scenarios, labels, strict=True)]
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    (folder / "o0.jsonl").write_text("".join(json.dumps({"output": int(v)}) + "\n" for v in first))
    (folder / "o1.jsonl").write_text("".join(json.dumps({"output": int(v)}) + "\n" for v in shown))
    return scenarios, labels, first, second_orig


def _reference_leaderboard(scenarios, labels, first, second):
    """Written from the published rule (Auto-J, Li et al. 2024): agreement counts an item
    only when both orders equal the label; consistency: the two verdicts equal."""
    group_of = {s: g for g, ss in GROUPS.items() for s in ss}
    out = {}
    for name in [*GROUPS, "all"]:
        idx = [i for i, s in enumerate(scenarios) if name == "all" or group_of[s] == name]
        out[name] = {
            "both": sum(first[i] == second[i] == labels[i] for i in idx) / len(idx),
            "consistency": sum(first[i] == second[i] for i in idx) / len(idx),
            "single": sum(first[i] == labels[i] for i in idx) / len(idx),
            "n": len(idx)}
    return out


def test_leaderboard_reproduces_the_published_definitions(tmp_path):
    scenarios, labels, first, second = _leaderboard_release(tmp_path)
    table = load_pairwise({0: tmp_path / "o0.jsonl", 1: tmp_path / "o1.jsonl"},
                          items=tmp_path / "items.jsonl",
                          columns={"verdict": "output", "group": "scenario"},
                          verdicts={0: "A", 1: "B", 2: "tie"}, second_order="positional",
                          constants={"judge": "my-judge"},
                          recode={"group": {s: g for g, ss in GROUPS.items() for s in ss}})
    board = q.pairwise_leaderboard(table, by="group").set_index("group")
    expected = _reference_leaderboard(scenarios, labels, first, second)
    assert list(board.index) == ["Writing", "Code", "all"] or set(board.index) == {
        "Writing", "Code", "all"}
    for name, ref in expected.items():
        row = board.loc[name]
        assert row["n"] == ref["n"]
        assert row["accuracy_both"] == pytest.approx(ref["both"])
        assert row["agreement"] == pytest.approx(ref["consistency"])
        assert row["accuracy_order0"] == pytest.approx(ref["single"])
    assert expected["all"]["both"] < expected["all"]["single"]  # the fixture tells them apart
    # forgetting that order 1 is positional would change the consistency
    wrong = load_pairwise({0: tmp_path / "o0.jsonl", 1: tmp_path / "o1.jsonl"},
                          items=tmp_path / "items.jsonl", columns={"verdict": "output"},
                          verdicts={0: "A", 1: "B", 2: "tie"}, second_order="original",
                          constants={"judge": "my-judge"})
    assert q.pairwise_leaderboard(wrong)["agreement"].iloc[0] != pytest.approx(
        expected["all"]["consistency"])


def _story_release(folder, seed=5):
    """One row per system, list cells of per-story values (human mean and two metrics)."""
    rng = np.random.default_rng(seed)
    systems = [f"sys{k}" for k in range(6)]
    quality = np.linspace(1.5, 4, 6)
    rows, human, metric = [], {}, {}
    for s, qual in zip(systems, quality, strict=True):
        h = np.round(np.clip(qual + rng.normal(0, 0.8, 8), 1, 5) * 3) / 3
        m = 0.1 * h + rng.normal(0, 0.15, 8)
        human[s], metric[s] = h, m
        rows.append(f'{s},"{json.dumps(h.tolist())}","{json.dumps(m.tolist())}",'
                    f'"{json.dumps(rng.random(8).tolist())}"')
    (folder / "scores.csv").write_text("Model,Relevance,BLEU,noise\n" + "\n".join(rows) + "\n")
    return systems, human, metric


def test_story_and_system_level_correlations_match_scipy(tmp_path):
    systems, human, metric = _story_release(tmp_path)
    table = load_pointwise(tmp_path / "scores.csv", columns={"system": "Model",
                           "label": "Relevance"}, judges=["BLEU"], explode=True)
    x = np.concatenate([metric[s] for s in systems])
    y = np.concatenate([human[s] for s in systems])
    xs = [metric[s].mean() for s in systems]
    ys = [human[s].mean() for s in systems]
    for method, fn in (("pearson", sps.pearsonr), ("spearman", sps.spearmanr),
                       ("kendall", sps.kendalltau)):
        res = q.judge_correlations(table, method=method, level=["pooled", "system"])
        res = res.set_index("level")
        assert res.loc["pooled", "estimate"] == pytest.approx(fn(x, y)[0])
        assert res.loc["pooled", "n"] == 48
        assert res.loc["system", "estimate"] == pytest.approx(fn(xs, ys)[0])
        # 6 systems: the permutation p-value over all 720 orderings, counted here by hand
        # (two-sided: twice the smaller tail)
        # (Kendall without ties: scipy's exact p-value), and no interval
        taus = np.array([fn(order, ys)[0] for order in itertools.permutations(xs)])
        observed = fn(xs, ys)[0]
        exact = min(1.0, 2 * min(np.mean(taus >= observed - 1e-12),
                                 np.mean(taus <= observed + 1e-12)))
        assert res.loc["system", "p_value"] == pytest.approx(exact)
        if method == "kendall":
            assert exact == pytest.approx(sps.kendalltau(xs, ys, method="exact").pvalue)
        assert np.isnan(res.loc["system", "ci_low"]) and res.loc["system", "n"] == 6
    # per-item (story prompt) correlations across systems, then their mean
    res = q.judge_correlations(table, method="kendall", level=["per_group_mean"], by="item_id")
    per_item = [sps.kendalltau([metric[s][i] for s in systems], [human[s][i] for s in systems])[0]
                for i in range(8)]
    assert res["estimate"].iloc[0] == pytest.approx(np.nanmean(per_item))


def _people_table(n_items=40, n_raters=3, seed=0, pairwise=True):
    rng = np.random.default_rng(seed)
    rows = []
    truth = rng.choice(["A", "B"], n_items) if pairwise else rng.normal(3, 1, n_items)
    for i in range(n_items):
        for r in range(n_raters):
            if pairwise:
                v = truth[i] if rng.random() < 0.85 else ("B" if truth[i] == "A" else "A")
            else:
                v = truth[i] + rng.normal(0, 0.5)
            rows.append({"item_id": i, "annotator": f"r{r}",
                         ("verdict" if pairwise else "score"): v})
        v = truth[i] if pairwise and rng.random() < 0.8 else (
            ("B" if truth[i] == "A" else "A") if pairwise else truth[i] + rng.normal(0, 0.6))
        rows.append({"item_id": i, "judge": "j", ("verdict" if pairwise else "score"): v,
                     "confidence": rng.random()})
    return pd.DataFrame(rows)


def test_measures_from_annotator_rows():
    table = validate_pairwise(_people_table())
    ceiling = q.human_ceiling(table, n_boot=0)
    assert ceiling["who"].tolist() == ["j", "r0", "r1", "r2", "human ceiling"]
    alt = q.judge_alt_test(table, epsilon=0.2, min_items=30)
    assert alt["judge"].tolist() == ["j"] and 0 <= alt["omega"].iloc[0] <= 1
    with pytest.warns(UserWarning, match="one presentation order"):
        board = q.pairwise_leaderboard(table)
    ref = q.human_reference(table).set_index("item_id")["human"]
    judge = table[table["judge"] == "j"].set_index("item_id")["verdict"]
    assert board["accuracy_order0"].iloc[0] == pytest.approx((judge == ref[judge.index]).mean())
    ppi = q.judge_ppi(table, judge="j", n_rep=20)
    assert set(ppi["needed"]["method"]) == {"ppi", "classical"}
    sel = q.judge_selective(table, judge="j", alpha=0.3, delta=0.2)
    assert sel["policy"].tolist() == ["selective", "all items"]


def test_pointwise_ceiling_and_alt_test():
    from workbench.datasets import validate_pointwise

    table = validate_pointwise(_people_table(pairwise=False))
    ceiling = q.human_ceiling(table, n_boot=0)
    assert ceiling.loc[ceiling["who"] == "human ceiling", "measure"].iloc[0] == "pearson"
    assert "omega" in q.judge_alt_test(table)


def test_clear_errors_when_the_data_cannot_support_a_measure():
    one_rater = validate_pairwise(_people_table(n_raters=1))
    with pytest.raises(ValueError, match="at least two annotators"):
        q.human_ceiling(one_rater)
    with pytest.raises(ValueError, match="at least two annotators"):
        q.judge_alt_test(one_rater)
    with pytest.raises(ValueError, match="alt_test needs at least two annotators"):
        q.alt_test(pd.DataFrame({"a": [1, 0] * 20}), np.array([1, 0] * 20))
    no_labels = validate_pairwise(pd.DataFrame({"item_id": [1, 2], "judge": "j",
                                                "verdict": ["A", "B"]}))
    with pytest.raises(ValueError, match="no human labels"):
        q.pairwise_leaderboard(no_labels)
    with pytest.raises(ValueError, match="confidence"):
        q.judge_selective(validate_pairwise(pd.DataFrame(
            {"item_id": [1], "judge": "j", "verdict": ["A"], "label": ["A"]})), judge="j")
    one_order = validate_pairwise(pd.DataFrame({"item_id": [1, 2], "judge": "j",
                                                "verdict": ["A", "B"], "label": ["A", "A"]}))
    with pytest.warns(UserWarning, match="one presentation order"):
        board = q.pairwise_leaderboard(one_order)
    assert board["accuracy_order0"].iloc[0] == 0.5 and np.isnan(board["accuracy_both"].iloc[0])
    few = load_pointwise(pd.DataFrame({"item_id": [1, 2, 3], "system": ["a", "a", "b"],
                                       "m": [1, 2, 3], "h": [1, 3, 2]}),
                         columns={"label": "h"}, judges=["m"])
    with pytest.raises(ValueError, match="at least 3 systems"):
        q.judge_correlations(few, level="system")


def test_bradley_terry_from_the_same_verdicts():
    rng = np.random.default_rng(0)
    strength = {"x": 0.0, "y": 1.0, "z": -1.0}
    rows = []
    for i in range(1500):
        a, b = rng.choice(list(strength), 2, replace=False)
        for order in (0, 1):
            first_is_a = order == 0
            eta = 0.4 + (strength[a] - strength[b]) * (1 if first_is_a else -1)
            first_wins = rng.random() < 1 / (1 + np.exp(-eta))
            winner_is_a = first_wins == first_is_a
            rows.append({"item_id": i, "order": order, "judge": "j", "system_a": a,
                         "system_b": b, "verdict": "A" if winner_is_a else "B"})
    table = validate_pairwise(pd.DataFrame(rows), second_order="original")
    fit = q.pairwise_bradley_terry(table)
    strengths = fit[fit["term"] == "strength"].set_index("a")["estimate"]
    assert strengths["y"] == pytest.approx(1.0, abs=0.15)
    assert strengths["z"] == pytest.approx(-1.0, abs=0.15)
    assert fit.loc[fit["term"] == "position", "estimate"].iloc[0] == pytest.approx(0.4, abs=0.1)
    assert (fit["judge"] == "j").all() and fit["n"].iloc[0] == 3000
    with pytest.raises(ValueError, match="system_a and system_b"):
        q.pairwise_bradley_terry(validate_pairwise(pd.DataFrame(
            {"item_id": [1], "judge": "j", "verdict": ["A"]})))


def test_judgebench_accuracy_takes_a_tie_label():
    v = pd.DataFrame({"judge_name": "j", "judge_model": "m", "response_model": "r",
                      "category": "math", "pair_id": ["p", "p"], "label": "A=B",
                      "game": [0, 1], "decision": ["A=B", "A=B"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = judgebench_accuracy(v)
    assert out["n_correct"].tolist() == [1, 1]


# --- the fixture tables: every section of the report, the CLI, studies X2 and X3 -------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "judge_tables"
PAIRWISE = FIXTURES / "pairwise_people.csv"
POINTWISE = FIXTURES / "pointwise_stories.csv"
#: load_table keyword arguments of the fixture tables (also the studies' ``table_spec``)
PAIRWISE_SPEC = {
    "columns": {"item_id": "pair", "order": "shown", "annotator": "rater", "judge": "model",
                "verdict": "choice", "group": "topic", "system_a": "sys_a", "system_b": "sys_b",
                "length_a": "len_a", "length_b": "len_b", "confidence": "conf"},
    "verdicts": {1: "A", 2: "B"}, "recode": {"order": {"AB": 0, "BA": 1}},
    "second_order": "positional"}
POINTWISE_SPEC = {"columns": {"item_id": "story", "system": "model"},
                  "judges": ["llm_judge", "overlap"], "annotators": ["rater1", "rater2", "rater3"]}


def test_report_of_a_table_with_every_column(tmp_path):
    from workbench.datasets import load_table

    table = load_table(PAIRWISE, **PAIRWISE_SPEC)
    assert table.attrs["workbench_table"] == "pairwise"
    assert table.loc[table["judge"] != "", "verdict"].isna().sum() > 0  # unparsed, kept
    report = qualification_report(table, tmp_path / "r", n_boot=50, n_rep=20)
    for name in ("leaderboard", "ceiling", "alt_test", "ppi_needed", "bradley_terry",
                 "selective", "weakest", "skipped"):
        assert (tmp_path / "r" / f"{name}.csv").exists(), name
    assert report["skipped"].empty, report["skipped"]
    board = report["leaderboard"]
    assert set(board["group"]) == {"code", "writing", "math", "all"}
    good = board[(board["judge"] == "judge-good") & (board["group"] == "all")].iloc[0]
    first = board[(board["judge"] == "judge-first") & (board["group"] == "all")].iloc[0]
    assert good["agreement"] > first["agreement"]  # the first-position judge flips more
    bt = report["bradley_terry"]
    position = bt[bt["term"] == "position"].set_index("judge")["estimate"]
    assert position["judge-first"] > position["judge-good"]
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") >= 3
    assert "Alternative annotator test" in page and "human ceiling" in page


def test_cli_on_a_pointwise_table(tmp_path):
    from typer.testing import CliRunner

    from workbench.cli import app

    result = CliRunner().invoke(app, [
        "qualify", str(POINTWISE), "-c", "item_id: story", "-c", "system: model",
        "--judges", "llm_judge,overlap", "--annotators", "rater1,rater2,rater3",
        "--out", str(tmp_path / "r"), "--n-boot", "50", "--n-rep", "20"])
    assert result.exit_code == 0, result.output
    corr = pd.read_csv(tmp_path / "r" / "correlations.csv")
    assert {"pooled", "system", "per_group_mean"} <= set(corr["level"])
    raw = pd.read_csv(POINTWISE)
    human = raw[["rater1", "rater2", "rater3"]].mean(axis=1)
    pooled = corr[(corr["judge"] == "llm_judge") & (corr["level"] == "pooled")]
    assert pooled["estimate"].iloc[0] == pytest.approx(sps.kendalltau(raw["llm_judge"],
                                                                      human).statistic)
    weakest = pd.read_csv(tmp_path / "r" / "weakest.csv")  # no group column: per system
    assert weakest["scope"].str.startswith("system ").all() and len(weakest) == 6
    alt = pd.read_csv(tmp_path / "r" / "alt_test.csv")
    assert set(alt["judge"]) == {"llm_judge", "overlap"}
    assert "passes" in result.output or "does not pass" in result.output


def test_studies_x2_and_x3_take_the_table():
    from workbench.studies import x2_human_agreement as x2
    from workbench.studies import x3_judge_qualification as x3

    res = x2.run(x2.Config(bundled=False, table=str(PAIRWISE), table_spec=PAIRWISE_SPEC,
                           n_boot=50))
    direct = q.pairwise_leaderboard(load_pairwise(PAIRWISE, **PAIRWISE_SPEC), by="group")
    pd.testing.assert_frame_equal(res["table_agreement"], direct)
    assert set(res["table_ceiling"]["who"]) >= {"judge-good", "human ceiling"}
    head = x2.headline(res)
    assert set(head["table_accuracy_both"]) == {"judge-good", "judge-first"}
    assert "table_agreement" in x2.tables(res)
    res3 = x3.run(x3.Config(bundled=False, table=str(POINTWISE), table_spec=POINTWISE_SPEC,
                            n_boot=50, ppi_reps=20))
    assert set(res3["table_alt_test"]["judge"]) == {"llm_judge", "overlap"}
    assert not len(res3["table_bradley_terry"])  # pointwise: no verdicts to fit
    assert "table_labels_needed" in x3.headline(res3)
    for name in x3.tables(res3):  # every table in its declared columns
        assert list(res3[name].columns) == x3._study._TABLES[name], name
