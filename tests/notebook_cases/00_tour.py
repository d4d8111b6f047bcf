"""Registration of notebooks/00_tour.ipynb for tests/notebook/test_notebooks.py."""

PARAMETERS = {
    "dataset",
    "item_index",
    "answer_model",
    "judge_model",
    "n_batch",
    "batch_temperature",
    "cache_mode",
    "fresh_cache",
    "progress",
    "seed",
}
# fresh_cache False: the tour uses this test's own (empty) cache folder
SMALL = {"n_batch": 4, "fresh_cache": False, "progress": False}
FIGURES = {"cost_cache.png", "cost_cache.svg"}


def check(headline: dict, params: dict) -> None:
    assert headline["backend"] == "sim"
    assert headline["first_cached"] is False  # a fresh cache: the first call is made
    assert headline["second_cached"] is True  # the same call again is replayed
    assert headline["same_reply"] is True
    assert headline["n_batch"] == params["n_batch"]
    assert headline["batch_provider_calls"] + headline["batch_failures"] == params["n_batch"]
    assert headline["batch_failures"] == 0
    assert headline["replay_hits"] == params["n_batch"]  # the replayed batch: all hits
    assert 1 <= headline["distinct_batch_replies"] <= params["n_batch"]
    assert headline["total_cost_usd"] == 0.0  # sim models cost nothing
