"""Registration of notebooks/s4_report_rubric.ipynb for tests/notebook/test_notebooks.py."""

# one trial: 23 texts x 6 dimensions x 2 judges x 2 prompts = 552 judge calls
SMALL = {"trials": 1, "n_sim": 200, "power_n_items": [5, 20]}
FIGURES = {"verbosity_effect.png", "verbosity_effect.svg"} | {
    f"{name}.png" for name in ("dimension_means", "version_comparison", "power")
}


def check(headline: dict, params: dict) -> None:
    assert headline["backend"] == "sim"
    assert headline["judges"] == ["sim/judge-a", "sim/judge-b"]
    n_texts = 10 + 10 + 3  # originals, their verbosity_padding, the bundled padded twins
    assert headline["n_texts"] == n_texts
    assert headline["n_calls"] == n_texts * 6 * 2 * 2 * params["trials"]
    assert headline["n_log_lines"] == n_texts * 2 * 2 * params["trials"]
    assert 0 <= headline["n_unparsed"] <= headline["n_calls"]
    # the profile built for it: judge-b's verbosity effect shrinks with the mitigation prompt
    assert headline["shrink_judge"] == "sim/judge-b"
    assert headline["effect_without"] > 0
    assert abs(headline["effect_with"]) < abs(headline["effect_without"])
    assert headline["shrinks"] is True
    # five original reports per version: a provisional comparison by the seed's n >= 20 rule
    assert headline["version_n"] == [5, 5] and headline["version_provisional"] is True
    low, high = headline["version_ci"]
    assert low < headline["version_difference"] < high
    assert set(headline["reports_needed"]) == {"1", "2", "3"}
    needed = [n for n in headline["reports_needed"].values() if n is not None]
    assert needed == sorted(needed, reverse=True)  # bigger differences need fewer reports
