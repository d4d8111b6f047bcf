"""Registration of notebooks/x1_bias_probes.ipynb for tests/notebook/test_notebooks.py."""

from pathlib import Path

# 5 questions per category (15, 5 of them cueable) x 3 answer models, the four judges the
# checks name, operators of each kind, and the LLMBar branch on the test fixture release.
SMALL = {
    "items_per_category": 5,
    "judge_models": ["sim/judge-a", "sim/judge-b", "sim/judge-d", "sim/judge-e"],
    "operators": ["verbosity_padding", "self_label", "recency", "position_swap"],
    "llmbar_dir": str(Path(__file__).resolve().parent.parent / "fixtures" / "llmbar"),
}
# the switches flipped (tests/notebook/test_notebooks.py::test_notebook_runs_with_each_switch): the
# JudgeBench branch on its fixture, LLMBar off, no reference shown to the judges
VARIANTS = {
    "position_swap_only": {"operators": ["position_swap"]},
    "judgebench_no_llmbar_no_reference": {
        "llmbar_dir": "",
        "use_reference": False,
        "judgebench_dir": str(Path(__file__).resolve().parent.parent / "fixtures" / "judgebench"),
    },
}
FIGURES = {"effects.png", "effects.svg", "position_consistency.png"}


def check(headline: dict, params: dict) -> None:
    judges = params["judge_models"]
    assert headline["backend"] == ["sim"]
    assert set(headline["operators"]) == set(params["operators"])
    agreement = headline["position_agreement"]
    assert set(agreement) == set(judges)
    assert all(0.0 <= v <= 1.0 for v in agreement.values())
    # judge-d is built with a strong preference for the first answer shown
    assert agreement["sim/judge-d"] < agreement["sim/judge-a"]
    assert headline["flip_rate"]["sim/judge-d"] > headline["flip_rate"]["sim/judge-a"]
    # judge-b has a strong verbosity slope; judge-e prefers answers said to be its own
    if "verbosity_padding" in params["operators"]:
        assert headline["effect"]["verbosity_padding"]["sim/judge-b"] > 0
        assert headline["effect_ci_low"]["verbosity_padding"]["sim/judge-b"] > 0
        assert (
            headline["effect"]["verbosity_padding"]["sim/judge-b"]
            > (headline["effect"]["verbosity_padding"]["sim/judge-a"])
        )
    if "self_label" in params["operators"]:
        assert headline["effect"]["self_label"]["sim/judge-e"] > 0
        assert (
            headline["effect"]["self_label"]["sim/judge-e"]
            > headline["effect"]["self_label"]["sim/judge-a"]
        )
    # every call is counted; sim answerers and these judges do not fail
    assert headline["n_calls"]["pairwise"] > 0
    assert (headline["n_calls"].get("score", 0) > 0) == (params["operators"] != ["position_swap"])
    assert headline["n_failed"]["answer"] == 0
    # the LLMBar fixture: three judge/strategy runs, pooled and per subset
    if params.get("llmbar_dir"):
        pooled = [r for r in headline["llmbar"] if r["subset"] == "all"]
        assert {(r["judge"], r["strategy"]) for r in pooled} == {
            ("JudgeA", "CoT"),
            ("JudgeA", "Vanilla"),
            ("JudgeB", "Vanilla"),
        }
        assert all(r["n"] > 0 and 0.0 <= r["agreement"] <= 1.0 for r in pooled)
    else:
        assert headline["llmbar"] == []
    # the JudgeBench fixture: arena_hard 3 of 5 pairs right, the reward model 4 of 5
    if params.get("judgebench_dir"):
        assert headline["judgebench"]["gpt-4o-mini | gpt-4o-2024-05-13"]["all"] == 60.0
        assert headline["judgebench"]["org_rm | gpt-4o-2024-05-13"]["all"] == 80.0
    else:
        assert "judgebench" not in headline
