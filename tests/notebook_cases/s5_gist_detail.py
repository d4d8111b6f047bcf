"""Registration of notebooks/s5_gist_detail.ipynb for tests/notebook/test_notebooks.py."""

import math

# 8 questions (20 answers), two detecting models (judge-f emits malformed replies), both splits
SMALL = {
    "judge_models": ["sim/judge-a", "sim/judge-f"],
    "max_items": 8,
    "n_boot": 200,
}
FIGURES = {
    "f1_by_class.png",
    "f1_by_class.svg",
    "unit_split.png",
    "neither_flags.png",
    "class_rates.png",
}
CLASSES = ("excess_gist", "excess_detail", "missing_gist", "missing_detail")


def check(headline: dict, params: dict) -> None:
    judges = params["judge_models"]
    assert headline["backend"] == ["sim"]
    n = headline["n_answers"]
    assert n > 0
    # every answer judged once per split and judge; failed runs are counted, not dropped
    assert headline["n_runs"] == n * len(judges) * 2
    assert 0 <= headline["n_runs_failed"] < headline["n_runs"]
    assert headline["published_f1"]["human"]["excess_gist"] == 0.18  # seed 004 table 2
    for split in ("human", "llm"):
        assert set(headline["f1"][split]) == set(judges)
        for judge in judges:
            f1 = headline["f1"][split][judge]
            assert set(f1) == set(CLASSES)
            assert all(v is None or 0.0 <= v <= 1.0 for v in f1.values())
            # the sim detectors find most missing detail; excess gist is the hard class
            assert f1["missing_detail"] > 0.5
            counts = headline["neither"][split][judge]
            assert len(counts) == 5 and sum(counts) <= n
    for judge in judges:
        assert set(headline["unit_f1"][judge]) == {"gist", "detail"}
        assert all(0.0 < v <= 1.0 for v in headline["unit_f1"][judge].values())
    # the strong answer misses less of the gist than the weak one, for people and models
    for source, by_model in headline["rates"].items():
        strong, weak = by_model["answer-strong"], by_model["answer-weak"]
        assert not math.isnan(weak["missing_gist"])
        assert weak["missing_gist"] > strong["missing_gist"], source
