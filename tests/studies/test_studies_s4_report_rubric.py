"""Study S4 (seed 003): report texts, per-dimension judging, score log, verbosity effect,
version comparison, pilot variance components and power."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats as sps

from workbench.datasets import load_dataset
from workbench.studies import s4_report_rubric as s4
from workbench.studies.s4_report_rubric import _data


@pytest.fixture(scope="module")
def texts():
    return _data.build_texts(load_dataset("s4_reports"))


def test_build_texts_pads_every_original_and_keeps_the_twins(texts):
    counts = texts["perturbation"].value_counts().to_dict()
    assert counts == {s4.ORIGINAL: 10, s4.PADDED: 10, s4.TWIN: 3}
    orig = texts[texts["perturbation"] == s4.ORIGINAL].set_index("item_id")
    for row in texts[texts["perturbation"] != s4.ORIGINAL].itertuples():
        source = orig.loc[row.source_item]
        assert row.n_words > source.n_words  # longer ...
        assert (row.pipeline_version, row.track, row.date) == (
            source.pipeline_version, source.track, source.date)  # ... same report
    padded = texts[texts["perturbation"] == s4.PADDED]
    for row in padded.itertuples():  # the operator keeps every original sentence
        first = orig.loc[row.source_item, "response"].split("\n")[0]
        assert first in row.response
    assert texts["reference"].isna().all()


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("WORKBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("s4-cache")))
    mp.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path_factory.mktemp("s4-out")))
    config = s4.Config(judge_models=["sim/judge-b"], trials=1, n_sim=200,
                       power_n_items=[5, 20])
    try:
        yield config, s4.run(config)
    finally:
        mp.undo()


def test_run_scores_six_dimensions_per_text_judge_and_prompt(small):
    config, res = small
    scores = res["scores"]
    assert list(scores.columns) == list(_data.SCORE_COLUMNS)
    assert len(scores) == 23 * 6 * 1 * 2 * config.trials
    assert scores["dimension"].nunique() == 6
    assert set(scores["mitigation"]) == {False, True}
    log = res["log"]
    assert list(log.columns) == list(_data.LOG_COLUMNS)
    assert len(log) == 23 * 2 * config.trials
    row = log.iloc[0]
    assert set(row["scores"]) == set(scores["dimension"])
    assert row["total"] == sum(row["scores"].values())
    assert 6 <= log["total"].min() and log["total"].max() <= 30
    for name in ("totals", "verbosity_effect", "versions", "components", "power",
                 "reports_needed", "failures"):
        assert name in res
    written = s4.tables(res)
    assert list(written) == ["verbosity_effect", "versions", "components", "power",
                             "reports_needed", "scores", "parse_counts"]
    assert "latency_s" not in written["scores"].columns and res.config is config


def test_mitigation_shrinks_judge_b_verbosity_effect(small):
    _, res = small
    eff = res["verbosity_effect"]
    assert set(eff["condition"]) == {s4.PADDED, s4.TWIN}
    assert set(eff["backend"]) == {"sim"}
    padded = eff[eff["condition"] == s4.PADDED].set_index("mitigation")
    assert padded.loc[False, "n"] == 10
    assert padded.loc[False, "estimate"] > 0
    assert abs(padded.loc[True, "estimate"]) < abs(padded.loc[False, "estimate"])
    head = s4.headline(res)
    assert head["shrinks"] is True and head["effect_without"] > 0
    assert head["n_calls"] == len(res["scores"]) and head["n_log_lines"] == len(res["log"])


def test_verbosity_effect_is_the_paired_difference_of_report_means(small):
    _, res = small
    tot = res["totals"]
    part = tot[(tot["mitigation"] == False) & tot["perturbation"].isin([s4.ORIGINAL, s4.PADDED])]  # noqa: E712
    wide = part.pivot_table(index="source_item", columns="perturbation", values="total")
    diff = (wide[s4.PADDED] - wide[s4.ORIGINAL]).to_numpy()
    row = res["verbosity_effect"].query("mitigation == False and condition == @s4.PADDED").iloc[0]
    assert row["estimate"] == pytest.approx(diff.mean())
    assert row["p_value"] == pytest.approx(
        sps.ttest_rel(wide[s4.PADDED], wide[s4.ORIGINAL]).pvalue)


def test_score_log_keeps_a_failed_dimension_as_null(tmp_path, monkeypatch):
    rows = []
    for k, dim in enumerate(["factual_grounding", "depth_of_analysis", "coherence",
                             "specificity", "novelty", "actionability"]):
        rows.append({"item_id": "r1", "source_item": "r1", "perturbation": "none",
                     "pipeline_version": "v1", "track": "tech", "date": "2026-02-01",
                     "judge_model": "sim/judge-a", "mitigation": True, "trial": 0,
                     "dimension": dim, "score": np.nan if k == 2 else 4.0,
                     "parse_ok": k != 2, "error": "ParseError" if k == 2 else None,
                     "backend": "sim", "latency_s": 0.5})
    log = s4.score_log(pd.DataFrame(rows))
    row = log.iloc[0]
    assert row["scores"]["coherence"] is None and row["scores"]["novelty"] == 4
    assert np.isnan(row["total"]) and row["n_failed"] == 1  # never a total with a 0 in it
    assert row["eval_duration_s"] == pytest.approx(3.0)
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path))
    name = s4.write_score_log(log)
    assert name == "s4_report_rubric/scores.jsonl"
    (line,) = (tmp_path / "results" / name).read_text(encoding="utf-8").splitlines()
    record = json.loads(line)  # valid JSON: null, not NaN
    assert record["total"] is None and record["scores"]["coherence"] is None
    assert record["slug"] == "r1" and record["judge_model"] == "sim/judge-a"
    assert set(record) == set(_data.LOG_COLUMNS)


def _totals(a: list[float], b: list[float]) -> pd.DataFrame:
    rows = [{"item_id": f"a{i}", "source_item": f"a{i}", "pipeline_version": "A", "total": v}
            for i, v in enumerate(a)]
    rows += [{"item_id": f"b{i}", "source_item": f"b{i}", "pipeline_version": "B", "total": v}
             for i, v in enumerate(b)]
    return pd.DataFrame(rows).assign(perturbation="none", judge_model="j", backend="sim",
                                     mitigation=True, trial=0)


def test_version_comparison_is_welch_with_its_interval():
    a, b = [18, 20, 21, 17, 22, 19], [21, 25, 22, 26, 20]
    row = s4.version_comparison(_totals(a, b), version_a="A", version_b="B").iloc[0]
    ref = pg.ttest(b, a, correction=True)  # pingouin: Welch when correction=True
    assert row["estimate"] == pytest.approx(np.mean(b) - np.mean(a))
    assert row["p_value"] == pytest.approx(ref["p_val"].item())  # 0.0482
    assert [row["ci_low"], row["ci_high"]] == pytest.approx(list(ref["CI95"].item()), abs=0.01)
    assert row["df"] == pytest.approx(ref["dof"].item())
    assert row["hedges_g"] == pytest.approx(pg.compute_effsize(b, a, eftype="hedges"), rel=0.02)
    assert (row["n_a"], row["n_b"]) == (6, 5)
    assert row["provisional"]  # fewer than 20 reports per version (seed 003)
    big = s4.version_comparison(_totals(a * 4, b * 4), version_a="A", version_b="B").iloc[0]
    assert not big["provisional"]


def test_pilot_components_ignore_the_version_difference():
    rng = np.random.default_rng(0)
    rows = []
    for version, shift in (("A", 0.0), ("B", 5.0)):
        for i in range(8):
            item = rng.normal(0, 2)
            for judge, lean in (("j1", 0.0), ("j2", 1.0)):
                for t in range(3):
                    rows.append({"item_id": f"{version}{i}", "pipeline_version": version,
                                 "judge_model": judge, "trial": t, "perturbation": "none",
                                 "mitigation": True,
                                 "total": 18 + shift + item + lean + rng.normal(0, 0.5)})
    data = pd.DataFrame(rows)
    vc = s4.pilot_components(data).set_index("component")["variance"]
    shifted = s4.pilot_components(data.assign(
        total=data["total"] + np.where(data["pipeline_version"] == "B", 10.0, 0.0)))
    assert shifted.set_index("component")["variance"].to_dict() == pytest.approx(vc.to_dict())
    assert vc["item"] > vc["trial"] > 0


def test_reports_needed_reads_the_first_n_reaching_the_target():
    power = pd.DataFrame({"effect": [1.0] * 3 + [2.0] * 3, "n_items": [5, 10, 20] * 2,
                          "estimate": [0.2, 0.5, 0.7, 0.5, 0.85, 0.99],
                          "power_analytic": [0.2, 0.5, 0.7, 0.5, 0.84, 0.99]})
    needed = s4.reports_needed(power, target=0.8).set_index("effect")
    assert np.isnan(needed.loc[1.0, "n_items"]) and needed.loc[1.0, "power_at_largest_n"] == 0.7
    assert needed.loc[2.0, "n_items"] == 10 and needed.loc[2.0, "power"] == 0.85


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="judge_models"):
        s4.Config(judge_models="sim/judge-a")
    with pytest.raises(ValueError, match="mitigation"):
        s4.Config(mitigation=[])
    with pytest.raises(ValueError, match="differ"):
        s4.Config(version_a="v1", version_b="v1")


def test_report_ids_judge_only_those_reports_and_their_padded_versions(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    ids = ["rag-evaluation-metrics", "llm-judge-position-bias"]
    config = s4.Config(report_ids=ids, judge_models=["sim/judge-a"], shrink_judge="sim/judge-a",
                       mitigation=[False], trials=1, n_sim=50, power_n_items=[5], progress=False)
    results = s4.run(config)
    assert set(results["texts"]["source_item"]) == set(ids)
    assert set(results["scores"]["item_id"]) == set(results["texts"]["item_id"])
    assert len(results["texts"]) == 6  # two originals, two padded, their two bundled twins
    with pytest.raises(ValueError, match=r"Config.report_ids: \['nope'\] are not reports"):
        s4.run(s4.Config(report_ids=["nope"], judge_models=["sim/judge-a"], progress=False))
