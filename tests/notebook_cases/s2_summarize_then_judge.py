"""Registration of notebooks/s2_summarize_then_judge.ipynb for tests/notebook/test_notebooks.py."""

# 12 items x 4 answerers x 2 judges x 3 methods on the sim backend: a few seconds
SMALL = {"n_items": 12, "n_boot": 200}
FIGURES = {"answer_length.png", "rho_per_model.png", "rho_levels.png", "rho_levels.svg"}


def check(headline: dict, params: dict) -> None:
    n_items = params.get("n_items", 50)
    models = headline["answer_models"]
    assert headline["backend"] == "sim"
    assert headline["n_answers"] == n_items * len(models)
    assert headline["n_answers_failed"] == 0
    # every metric and LLM method scored every answer (sim judges a and b never malform)
    assert set(headline["n_failed"].values()) == {0}
    methods = [m for m in headline["rho_pooled"] if "/" in m]
    assert len(methods) == 6  # 3 LLM methods x 2 judges
    # keyword-based metrics follow the (simulated) keyword rubric: positive pooled rho
    for metric in ("keyword_score", "rouge1", "rouge2", "rougeL", "bleu"):
        assert headline["rho_pooled"][metric] > 0.3, metric
    for method in methods:  # the judges read the same content features
        assert headline["rho_pooled"][method] > 0.3, method
    # the simulated raters rank the strong answerer above the weak and tiny ones
    human = headline["human_mean"]
    assert human["sim/answer-strong"] > human["sim/answer-weak"] > human["sim/answer-tiny"]
    # answer-strong writes the longest answers (about twice the reference), as GPT-4 did
    assert headline["longest_model"] == "sim/answer-strong"
    lengths = headline["mean_length_chars"]
    assert lengths["sim/answer-strong"] > 1.3 * lengths["sim/answer-mid"]
    for value in headline["rho_mean"].values():
        assert -1 <= value <= 1
