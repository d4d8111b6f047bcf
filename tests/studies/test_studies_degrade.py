"""Every study runs to its end when 30%, 90% or 100% of its judge's replies do not parse
(issue 33): its tables are written, its headline gives the parse share and the counts,
and an analysis it cannot compute leaves a row saying why instead of raising.

The failing judge is the simulated one whose reply is replaced, at the rate and seeded by
the prompt, by text that holds no JSON, score or verdict (and no log-probabilities), at
small study sizes."""

from __future__ import annotations

import hashlib
import importlib
import math
import random

import pandas as pd
import pytest

from workbench.sim import _profiles, engine

SMALL = {
    "s1_judge_methods": dict(item_ids=["s1-01", "s1-02"], answer_models=["sim/answer-strong"],
                             judge_models=["sim/judge-a"], temperatures=[0.0], trials=2, n_boot=20),
    "s2_summarize_then_judge": dict(n_items=4, answer_models=["sim/answer-mid", "sim/answer-weak"],
                                    judge_models=["sim/judge-a"], n_boot=20, geval_samples=3),
    "s3_hivmedqa": dict(items_per_category=1, iterations=2, answer_models=["sim/answer-strong"],
                        bias_types=["frequency"]),
    "s4_report_rubric": dict(judge_models=["sim/judge-a"], trials=2, n_sim=50, mitigation=[False],
                             report_ids=["rag-evaluation-metrics", "llm-judge-position-bias"],
                             bundled_twins=False, power_n_items=[5]),
    "s5_gist_detail": dict(judge_models=["sim/judge-a"], max_items=2, n_boot=20),
    "x1_bias_probes": dict(items_per_category=1, answer_models=["sim/answer-strong", "sim/answer-weak"],
                           judge_models=["sim/judge-a"],
                           operators=["position_swap", "verbosity_padding", "authority"]),
    "x2_human_agreement": dict(n_items=4, answer_models=["sim/answer-mid", "sim/answer-weak"],
                               judge_models=["sim/judge-a"], metrics=["rougeL"],
                               pairwise_judges=["sim/judge-a"], n_boot=20),
    "x3_judge_qualification": dict(n_items=6, answer_models=["sim/answer-mid", "sim/answer-weak"],
                                   lc_baseline="sim/answer-mid", n_boot=20, ppi_labels=6,
                                   ppi_sizes=[3, 6], ppi_reps=5),
}
RATES = (0.3, 0.9, 1.0)


def junk_at(rate: float, respond):
    """``respond`` of the simulated engine, but a judge's reply is junk (no JSON, no score,
    no verdict, no log-probabilities) with probability ``rate``, seeded by the prompt."""

    def answer(profile, messages, **kwargs):
        reply = respond(profile, messages, **kwargs)
        if profile in _profiles.JUDGES and reply.extra.get("task") in ("json", "score", "verdict"):
            seed = hashlib.sha256(repr((profile, messages, kwargs.get("sample"))).encode()).digest()
            if random.Random(seed).random() < rate:
                reply.text, reply.logprobs = "I cannot tell; both seem fine to me.", None
        return reply

    return answer


@pytest.fixture
def failing_judges(monkeypatch):
    """``set(rate)``: every simulated judge's replies fail to parse at ``rate``."""

    def set_rate(rate: float) -> None:
        monkeypatch.setattr(engine, "respond", junk_at(rate, engine.respond))

    return set_rate


def _run(name: str, tmp_path, monkeypatch):
    study = importlib.import_module(f"workbench.studies.{name}")
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path / "out"))
    results = study.run(study.Config(**SMALL[name], progress=False))
    tables = study.tables(results)
    for frame in tables.values():
        assert isinstance(frame, pd.DataFrame)
        frame.to_csv(tmp_path / "t.csv", index=False)  # what the notebook writes
    return study, results, tables


@pytest.mark.slow
@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("name", sorted(SMALL))
def test_a_study_runs_to_its_end_when_replies_fail_to_parse(name, rate, failing_judges, tmp_path,
                                                            monkeypatch):
    failing_judges(rate)
    study, results, tables = _run(name, tmp_path, monkeypatch)
    head = study.headline(results)
    assert head["n_rows_parsed"] + head["n_rows_unparsed"] > 0
    assert "structured_replies" in head
    if rate == 1.0:
        assert head["n_rows_parsed"] == 0 and head["parse_share"] == 0.0
    elif rate == 0.9:  # (a G-Eval row parses when one of its samples does: at 0.3 most do)
        assert head["n_rows_unparsed"] > 0 and head["parse_share"] < 1.0
    else:
        assert 0.0 <= head["parse_share"] <= 1.0
    assert "parse_counts" in tables and tables["parse_counts"]["n_unparsed"].sum() == head["n_rows_unparsed"]
    for value in head.values():  # plain values a JSON headline can hold (NaN as None)
        assert not (isinstance(value, float) and math.isnan(value))


#: At 100%: the analyses that cannot be computed, and the row each leaves.
WHY_NOT = {"s3_hivmedqa": "tests", "s4_report_rubric": "components", "s5_gist_detail": "match"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WHY_NOT))
def test_an_analysis_that_cannot_be_computed_leaves_a_row_saying_why(name, failing_judges, tmp_path,
                                                                     monkeypatch):
    failing_judges(1.0)
    _, results, _ = _run(name, tmp_path, monkeypatch)
    note = results[WHY_NOT[name]]["note"].dropna().astype(str)
    assert len(note) and note.str.startswith("not computed: ").all()


def test_an_error_with_every_reply_parsed_is_raised_not_hidden():
    from workbench.studies.common.parsing import attempt

    def broken():
        raise KeyError("a bug")

    with pytest.raises(KeyError, match="a bug"):
        attempt("x", broken, pd.DataFrame({"parse_ok": [True, True]}), ["estimate"])
    row = attempt("x", broken, pd.DataFrame({"parse_ok": [True, False]}), ["estimate"])
    assert row["note"].tolist() == ["not computed: KeyError: 'a bug'"] and row["estimate"].isna().all()
