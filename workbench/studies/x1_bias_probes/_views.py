"""X1 views: frames shaped for the notebook's figures, and the headline numbers."""

from __future__ import annotations

import pandas as pd


def effect_view(effects: pd.DataFrame) -> pd.DataFrame:
    """The score probes' effects for the figure: one row per operator x judge with
    ``operator`` (rows, in the order of the table), ``judge_model`` (colours),
    ``estimate``, ``ci_low``, ``ci_high``, ``backend``; flip rates are left out (another
    scale: see :func:`position_view`)."""
    out = effects[effects["measure"] == "mean_difference"]
    return out[
        [
            "operator",
            "kind",
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
    given, the LLMBar release's judges pooled over subsets (``judge`` = ``<judge> /
    <strategy>``), with ``source`` telling them apart."""
    frames = [position.assign(label=position["judge"])]
    if llmbar is not None and len(llmbar):
        pooled = llmbar[llmbar["subset"] == "all"]
        frames.append(pooled.assign(label=pooled["judge"] + " / " + pooled["strategy"]))
    out = (
        pd.concat([f for f in frames if len(f)], ignore_index=True)
        if any(len(f) for f in frames)
        else frames[0]
    )
    return out[
        [
            "label",
            "source",
            "agreement",
            "agreement_ci_low",
            "agreement_ci_high",
            "n",
            "n_unparsed",
            "backend",
        ]
    ].rename(columns={"label": "judge"})


def _nested(frame: pd.DataFrame, outer: str, inner: str, value: str) -> dict:
    return {
        o: dict(zip(g[inner], g[value], strict=True)) for o, g in frame.groupby(outer, sort=False)
    }


def headline(tables: dict[str, pd.DataFrame]) -> dict:
    """The numbers the notebook records: effect (and its CI and p) per operator and judge,
    flip rate and agreement per judge, the LLMBar consistency when analysed, and the
    counts of calls and failures."""
    eff = tables["effects"]
    scores = eff[eff["measure"] == "mean_difference"]
    flips = eff[eff["measure"] == "flip_rate"]
    failures = tables["failures"]
    llmbar = tables["llmbar_position"]
    by_stage = failures.groupby("stage")[["n_calls", "n_failed"]].sum()
    return {
        "effect": _nested(scores, "operator", "judge_model", "estimate"),
        "effect_ci_low": _nested(scores, "operator", "judge_model", "ci_low"),
        "effect_p_value": _nested(scores, "operator", "judge_model", "p_value"),
        "flip_rate": dict(zip(flips["judge_model"], flips["estimate"], strict=True)),
        "position_agreement": dict(
            zip(tables["position"]["judge"], tables["position"]["agreement"], strict=True)
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
        "n_calls": {stage: int(row["n_calls"]) for stage, row in by_stage.iterrows()},
        "n_failed": {stage: int(row["n_failed"]) for stage, row in by_stage.iterrows()},
        "operators": sorted(set(eff["operator"])),
        "backend": sorted(set(failures["backend"])),
    }
