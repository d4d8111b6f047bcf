"""Factorial designs and the cost estimate (issue 3 item 2): estimate counts match the
calls actually made, and a rerun is all cached."""

from __future__ import annotations

import pandas as pd
import pytest

import workbench.llm as llm
from workbench.judges import (
    Design,
    JudgeSpec,
    estimate,
    estimate_tokens,
    expand_design,
    plan_requests,
    run_design,
    run_judging,
)
from workbench.llm import Completion, Usage, cache_key

REF = "HIV is transmitted through blood, sexual contact, and from mother to child during birth."


@pytest.fixture
def items() -> pd.DataFrame:
    answers = [REF, "Through blood and sex.", "HIV spreads by air and by touching."]
    return pd.DataFrame([dict(item_id="q1", lang="en", question="How is HIV transmitted?", reference=REF,
                              response=a, answer_model=f"m{k}", wrong_answer="air")
                         for k, a in enumerate(answers)])


@pytest.fixture
def rubric() -> pd.DataFrame:
    return pd.DataFrame([
        dict(item_id="q1", criterion_id="c1", text="Names blood", weight=5, kind="item"),
        dict(item_id="q1", criterion_id="c2", text="Recommends herbal remedies", weight=-10, kind="item"),
    ])


@pytest.fixture
def sent(monkeypatch):
    """Cache keys of every request passed to complete_many."""
    keys: list[str] = []
    real = llm.complete_many

    def counting(requests, **kwargs):
        requests = list(requests)
        keys.extend(llm.cache_key(r) for r in requests)
        return real(requests, **kwargs)

    monkeypatch.setattr(llm, "complete_many", counting)
    return keys


def test_design_expands_judges_protocols_temperatures_trials_perturbations(items, rubric):
    design = Design(items, specs=(JudgeSpec("holistic_simple", "sim/judge-a"), JudgeSpec("checklist", "sim/judge-a")),
                    judges=("sim/judge-a", "sim/judge-b"), temperatures=(0.0, 1.0), trials=3,
                    perturbations=("none", "verbosity_padding", ("bandwagon", {"share": 80})), rubric=rubric,
                    study="x")
    runs = expand_design(design)
    assert len(runs) == 3 * 2 * 2
    assert {r.spec.judge_model for r in runs} == {"sim/judge-a", "sim/judge-b"}
    assert all(r.spec.temperatures == (0.0, 1.0) and r.spec.trials == 3 and r.spec.study == "x" for r in runs)
    assert {r.perturbation for r in runs} == {"none", "verbosity_padding", "bandwagon"}
    padded = next(r for r in runs if r.perturbation == "verbosity_padding").items
    assert padded["source_item"].tolist() == ["q1"] * 3 and padded["item_id"].iloc[0] == "q1~verbosity_padding"


@pytest.mark.slow
def test_estimate_matches_the_calls_made_single_stage(items, rubric, sent):
    design = Design(items, specs=(JudgeSpec("holistic_simple", "sim/judge-a"),
                                  JudgeSpec("checklist", "sim/judge-a"),
                                  JudgeSpec("dimensions", "sim/judge-a"),
                                  JudgeSpec("dimensions", "sim/judge-a", per_call=True, mitigation=True),
                                  JudgeSpec("geval", "sim/judge-a", geval_mode="logprobs")),
                    judges=("sim/judge-a", "sim/judge-c"), temperatures=(0.0, 1.0), trials=1,
                    perturbations=("none", "verbosity_padding", "recency"), rubric=rubric)
    before = estimate(design).set_index("model")
    assert before["exact"].all() and before["n_cached"].eq(0).all()
    results = run_design(design, progress=False)
    assert before["n_calls"].sum() == len(set(sent))
    per_judge = results.dropna(subset=["cache_key"]).drop_duplicates("cache_key").groupby("judge_model").size()
    for judge in ("sim/judge-a", "sim/judge-c"):
        assert before.loc[judge, "n_calls"] == per_judge[judge]
    after = estimate(design).set_index("model")
    assert (after["n_cached"] == before["n_calls"]).all() and after["n_to_call"].eq(0).all()
    assert after["prompt_tokens"].eq(0).all()


def test_estimate_matches_the_calls_made_two_stages(items, sent):
    design = Design(items, specs=(JudgeSpec("summarize_then", inner=JudgeSpec("geval", "sim/judge-a")),
                                  JudgeSpec("decompose", "sim/judge-a")), trials=2)
    before = estimate(design).set_index("model")
    assert not before.loc["sim/judge-a", "exact"]  # the judge calls depend on uncached replies
    run_design(design, progress=False)
    assert before["n_calls"].sum() == len(set(sent))
    assert before.loc["sim/summarizer", "n_calls"] == 3
    after = estimate(design).set_index("model")
    assert after["exact"].all() and (after["n_cached"] == after["n_calls"]).all()
    assert (after["n_calls"] == before["n_calls"]).all()


def test_estimate_counts_llm_perturbations(items, sent):
    design = Design(items, JudgeSpec("holistic_simple", "sim/judge-a"), perturbations=("none", "paraphrase"))
    before = estimate(design).set_index("model")
    assert before.loc["sim/paraphraser", "n_calls"] == 3 and not before.loc["sim/judge-a", "exact"]
    run_design(design, progress=False)
    after = estimate(design).set_index("model")
    assert after.loc["sim/paraphraser", "n_cached"] == 3 and after["exact"].all()
    assert after["n_calls"].sum() == len(set(sent))


def test_estimate_prices_real_models_without_calling(items, sent):
    out = estimate(Design(items, JudgeSpec("holistic_simple", "gpt-4o", trials=4))).iloc[0]
    assert out["n_calls"] == 12 and out["n_to_call"] == 12 and out["price_known"]
    assert out["cost_usd"] > 0 and out["prompt_tokens"] > 0 and out["completion_tokens"] == 12 * 100
    unknown = estimate(Design(items, JudgeSpec("holistic_simple", "openai/no-such-model"))).iloc[0]
    assert not unknown["price_known"] and unknown["cost_usd"] == 0
    assert sent == []  # nothing was sent


def test_estimate_treats_refresh_mode_as_uncached(items, monkeypatch):
    design = Design(items, JudgeSpec("holistic_simple", "sim/judge-a"))
    run_design(design, progress=False)
    assert estimate(design)["n_cached"].iloc[0] == 3
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "refresh")
    assert estimate(design)["n_cached"].iloc[0] == 0


def test_estimate_tokens():
    assert estimate_tokens("") == 0
    assert estimate_tokens("a" * 400) == 100
    assert estimate_tokens("橋" * 30) == 20


def test_design_validation(items):
    with pytest.raises(ValueError, match="unknown operator"):
        Design(items, JudgeSpec("holistic_simple", "sim/judge-a"), perturbations=("shout",))
    with pytest.raises(ValueError, match="Design.specs"):
        Design(items, specs=())


def _reply(req) -> str:
    """A fixed reply per kind of prompt (what it is does not matter, only that later
    stages can be planned from it)."""
    prompt = req.messages[-1]["content"]
    if "Text only: summary" in prompt:
        return "A short summary."
    if 'Return JSON only: {"units"' in prompt:
        return '{"units": [{"id": "u1", "role": "gist", "text": "blood"}]}'
    if "Score only" in prompt:
        return "4"
    if "[[A]]" in prompt:
        return "[[A]]"
    return '{"excess": [], "missing": []}'


def _completion(req, *, cached: bool) -> Completion:
    # no log-probabilities: G-Eval in auto mode falls back to samples
    return Completion(_reply(req), req.model, Usage(10, 2), 0.0, 0.0, cached, cache_key(req), None, "test")


@pytest.mark.parametrize("spec", [
    JudgeSpec("holistic_simple", "x/judge", trials=2, mitigation=True),
    JudgeSpec("holistic", "x/judge"),
    JudgeSpec("pairwise", "x/judge", temperature=(0.0, 1.0)),
    JudgeSpec("checklist", "x/judge"),
    JudgeSpec("dimensions", "x/judge"),
    JudgeSpec("dimensions", "x/judge", per_call=True),
    JudgeSpec("geval", "x/judge", geval_samples=3, temperature=(0.0, 1.0)),
    JudgeSpec("geval", "x/judge", geval_mode="samples", geval_samples=2),
    JudgeSpec("summarize_then", inner=JudgeSpec("geval", "x/judge", geval_samples=2)),
    JudgeSpec("summarize_then", inner=JudgeSpec("checklist", "x/judge")),
    JudgeSpec("decompose", "x/judge", trials=2),
], ids=lambda spec: f"{spec.protocol}-{spec.template_id}")
def test_estimate_walks_the_calls_the_run_sends(items, rubric, monkeypatch, spec):
    # the estimate walks the same stages as run_judging: with every reply cached, it
    # plans exactly the requests the run sends, in the same order (samples of G-Eval
    # auto mode included: the cached replies carry no log-probabilities)
    sent: list = []

    def complete_many(requests, **_):
        sent.extend(requests)
        return [_completion(r, cached=False) for r in requests]

    monkeypatch.setattr(llm, "complete_many", complete_many)
    monkeypatch.setattr(llm, "peek", lambda req: _completion(req, cached=True))
    items = items.assign(criteria='[{"kind": "must", "text": "Names blood"}]', response_other="By air.")
    run_judging(items, spec, rubric=rubric, progress=False)
    planned = plan_requests(items, spec, rubric=rubric)
    assert [p.key for p in planned] == [cache_key(r) for r in sent] and all(p.cached for p in planned)
    if spec.protocol == "geval" and spec.geval_mode == "auto":
        assert sum(p.stage == "judge" for p in planned) == 3 * 2 * (1 + 3)


def test_estimate_counts_later_stages_inexact_until_their_input_is_cached(items, monkeypatch):
    # nothing cached: the judge calls on summaries are guesses (key None), the summaries exact
    monkeypatch.setattr(llm, "peek", lambda req: None)
    planned = plan_requests(items, JudgeSpec("summarize_then", inner=JudgeSpec("geval", "x/judge")))
    assert [p.stage for p in planned] == ["summary"] * 3 + ["judge"] * 3
    assert all(p.key is not None for p in planned[:3]) and all(p.key is None for p in planned[3:])
    assert not any(p.cached for p in planned)


def test_estimate_splits_online_and_batch_by_deadline_at_a_quota(items, monkeypatch):
    monkeypatch.delenv("WORKBENCH_RPM", raising=False)
    monkeypatch.delenv("WORKBENCH_TPM", raising=False)
    many = pd.concat([items.assign(item_id=f"q{k}", question=f"How is HIV transmitted? ({k})")
                      for k in range(20)], ignore_index=True)
    design = Design(many, JudgeSpec("holistic_simple", "gpt-4o-mini"))
    plain = estimate(design).set_index("model").loc["gpt-4o-mini"]
    assert plain["n_to_call"] == 60
    row = estimate(design, deadline=30, rpm=60).set_index("model").loc["gpt-4o-mini"]
    assert (row["n_online"], row["n_batch"]) == (30, 30)  # one a second for 30 s
    assert row["cost_usd_auto"] == pytest.approx(plain["cost_usd"] / 2 + plain["cost_usd_batch"] / 2)
    per_call = (plain["prompt_tokens"] + plain["completion_tokens"]) / 60
    tight = estimate(design, deadline=60, tpm=per_call * 10).set_index("model").loc["gpt-4o-mini"]
    assert tight["n_online"] in (9, 10)  # 10 calls' tokens a minute (floor of a float)
    free = estimate(design, deadline=30).set_index("model").loc["gpt-4o-mini"]
    assert free["n_batch"] == 0  # no quota known: all online
