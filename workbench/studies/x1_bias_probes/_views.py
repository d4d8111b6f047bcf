"""X1 views: frames shaped for the notebook's figures, and the headline numbers."""

from __future__ import annotations

import pandas as pd

from workbench.studies.common.parsing import headline_parse


def effect_view(effects: pd.DataFrame) -> pd.DataFrame:
    """The score probes' effects for the figure: one row per operator x judge with
    ``operator`` (rows, in the order of the table), ``judge_model`` (colours),
    ``estimate``, ``ci_low``, ``ci_high``, ``backend``; flip rates are left out (another
    scale: see :func:`position_view`)."""
    out = effects[effects["measure"] == "mean_difference"]
    return out[
        [
            "operator",
            "probe_kind",
            "judge_model",
            "estimate",
            "ci_low",
            "ci_high",
            "p_value",
            "n",
            "backend",
        ]
    ].reset_index(drop=True)


def position_view(position: pd.DataFrame, llmbar: pd.DataFrame | None = None) -> pd.DataFrame:
    """Agreement of the two orders per judge for the figure: the probe's judges and, when
    given, the LLMBar release's judges pooled over subsets (``judge_model`` =
    ``<judge> / <strategy>``), with ``source`` telling them apart."""
    pooled = llmbar[llmbar["subset"] == "all"] if llmbar is not None else position.iloc[:0]
    pooled = pooled.assign(judge_model=pooled["judge_model"] + " / " + pooled["strategy"])
    out = pd.concat([f for f in (position, pooled) if len(f)] or [position], ignore_index=True)
    return out[
        [
            "judge_model",
            "source",
            "agreement",
            "agreement_ci_low",
            "agreement_ci_high",
            "n",
            "n_unparsed",
            "backend",
        ]
    ]


def _nested(frame: pd.DataFrame, outer: str, inner: str, value: str) -> dict:
    return {
        o: dict(zip(g[inner], g[value], strict=True)) for o, g in frame.groupby(outer, sort=False)
    }


def _judgebench(accuracy: pd.DataFrame | None) -> dict:
    """``judgebench``: per judge model, its accuracy (percent) per category (and ``all``);
    absent when no release was analysed."""
    if accuracy is None or accuracy.empty:
        return {}
    return {"judgebench": {
        f"{judge} | {responses}": dict(zip(part["category"], part["pct_correct"].round(2),
                                           strict=True))
        for (judge, responses), part in accuracy.groupby(["judge_model", "response_model"],
                                                         sort=False)}}


def headline(results: dict[str, pd.DataFrame]) -> dict:
    """The numbers the notebook records (:func:`_headline`), with the share of judge rows
    parsed, their counts and the structured-reply form each judge used."""
    return {**_headline(results), **headline_parse(results, names=["scores", "verdicts"])}


def _headline(results: dict[str, pd.DataFrame]) -> dict:
    """The numbers the notebook records: effect (and its CI and p) per operator and judge,
    flip rate and agreement per judge, the LLMBar consistency when analysed (its rows
    keyed ``judge``, as recorded since the first release), the JudgeBench accuracy when
    analysed, and the counts of calls and failures."""
    eff = results["effects"]
    scores = eff[eff["measure"] == "mean_difference"]
    flips = eff[eff["measure"] == "flip_rate"]
    failures = results["failures"]
    llmbar = results["llmbar_position"].rename(columns={"judge_model": "judge"})
    by_stage = failures.groupby("stage")[["n_calls", "n_failed"]].sum()
    return {
        "effect": _nested(scores, "operator", "judge_model", "estimate"),
        "effect_ci_low": _nested(scores, "operator", "judge_model", "ci_low"),
        "effect_p_value": _nested(scores, "operator", "judge_model", "p_value"),
        "flip_rate": dict(zip(flips["judge_model"], flips["estimate"], strict=True)),
        "position_agreement": dict(
            zip(results["position"]["judge_model"], results["position"]["agreement"], strict=True)
        ),
        "llmbar": llmbar[
            [
                "judge",
                "strategy",
                "subset",
                "n",
                "n_unparsed",
                "agreement",
                "accuracy",
                "kappa_order0",
                "kappa_order1",
            ]
        ]
        if len(llmbar)
        else [],
        **_judgebench(results.get("judgebench_accuracy")),
        "n_calls": {stage: int(row["n_calls"]) for stage, row in by_stage.iterrows()},
        "n_failed": {stage: int(row["n_failed"]) for stage, row in by_stage.iterrows()},
        "operators": sorted(set(eff["operator"])),
        "backend": sorted(set(failures["backend"])),
    }
