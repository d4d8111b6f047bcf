"""Registration of notebooks/s1_judge_methods.ipynb for tests/notebook/test_notebooks.py."""

import math

# 4 prompts x 3 answerers x 2 judges (judge-f: ~5 % malformed replies) x 3 methods x
# 2 trials at one temperature: about 500 judge calls
SMALL = {
    "item_ids": ["s1-01", "s1-03", "s1-06", "s1-09"],
    "answer_models": ["sim/answer-strong", "sim/answer-mid", "sim/answer-tiny"],
    "judge_models": ["sim/judge-a", "sim/judge-f"],
    "temperatures": [0.0],
    "trials": 2,
    "n_boot": 100,
}
FIGURES = {
    "consistency_index.png",
    "consistency_index.svg",
    "variance_ratio.png",
    "variance_ratio.svg",
    "method_scatter.png",
    "weakness_map.png",
}
METHODS = ("holistic", "holistic_simple", "checklist")


def check(headline: dict, params: dict) -> None:
    from workbench.datasets import load_dataset

    answerers = params["answer_models"]
    judges = params["judge_models"]
    rubric = load_dataset("s1_medical_ja")["rubric"]
    if params.get("item_ids"):
        rubric = rubric[rubric["item_id"].isin(params["item_ids"])]
    n_prompts = rubric["item_id"].nunique()
    n_items = int((rubric["kind"] == "item").sum())
    assert headline["backend"] == "sim"
    assert headline["temperature"] == params["temperatures"][0]
    assert headline["n_conversations"] == n_prompts * len(answerers)
    assert headline["n_answer_failures"] == 0
    per_answerer = 2 * n_prompts + n_items  # holistic + simple + one call per checklist item
    expected = len(answerers) * len(judges) * len(params["temperatures"]) * params["trials"]
    assert headline["n_judge_calls"] == expected * per_answerer
    for method in METHODS:
        means = headline["model_means"][method]
        assert means["sim/answer-strong"] > means["sim/answer-tiny"], method
        for reading in ("trials", "trials+judges"):
            value = headline["consistency_index"][method][reading]
            assert value is not None and 0 < value < 1, (method, reading, value)
        for reading in ("trials", "trials+judges", "trial means"):
            value = headline["variance_ratio"][method][reading]
            assert value is not None and value > 0 and math.isfinite(value), (method, reading)
        # the malformed replies of judge-f are counted, never scored
        assert headline["n_scores_missing"][method] <= headline["n_unparsed"][method] + \
            headline["n_call_failed"][method]
    assert headline["pearson_r"]["holistic ~ holistic_simple"] > 0
    assert headline["pearson_r"]["holistic ~ checklist"] > 0
    assert sum(headline["n_unparsed"].values()) > 0  # judge-f's malformed replies
    # the tiny answerer gives dangerous advice: some conversations are flagged, not all
    assert 1 <= headline["n_flagged"] < headline["n_conversations"]
