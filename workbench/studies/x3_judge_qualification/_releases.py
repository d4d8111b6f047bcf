"""Study X3 on public releases (private): PandaLM (judges beside three annotators), UniEval
Topical-Chat (PPI of a mean human score) and LLMBar (position bias and selective judging
of many judge configurations). Each reads the release through its importer."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.datasets import llmbar, pandalm, unieval
from workbench.qualify import (
    alt_test,
    bradley_terry,
    leave_one_out_agreement,
    ppi_mean,
    ppi_simulation,
    selective_report,
)

_UNPARSED = "unparsed"


def pandalm_qualification(path: str, *, epsilon: float, fdr: float, n_boot: int,
                          rng: np.random.Generator) -> dict[str, pd.DataFrame]:
    """PandaLM test set: each judge file's Cohen's kappa with the annotators beside the
    annotators' own (leave one annotator out: mean kappa with each other annotator), and
    the alternative annotator test (``accuracy``; an unparsed verdict is a label of its
    own, so it counts as a disagreement)."""
    release = pandalm.load_release(path)
    items = release["items"].set_index("idx")
    humans = items[["annotator1", "annotator2", "annotator3"]].astype(int).astype(str)
    preds = release["predictions"].assign(verdict=lambda f: [
        _UNPARSED if v is None or pd.isna(v) else str(int(v)) for v in f["verdict"]])
    judges = preds.pivot(index="idx", columns="judge", values="verdict").reindex(humans.index)
    judges = judges.fillna(_UNPARSED)
    judges.columns.name = None
    agreement = leave_one_out_agreement(humans, judges, measure="cohen_kappa", n_boot=n_boot,
                                        rng=rng)
    tables, summary = [], []
    for judge in judges.columns:
        table, result = alt_test(humans, judges[judge].to_numpy(), epsilon=epsilon, alpha=fdr,
                                 metric="accuracy")
        tables.append(table.assign(judge_model=judge))
        summary.append({"judge_model": judge, **result})
    summary = pd.DataFrame(summary).rename(columns={"alpha": "fdr"})
    agreement = agreement.merge(summary[["judge_model", "omega", "passed"]], left_on="who",
                                right_on="judge_model", how="left").drop(columns="judge_model")
    backend = "pandalm_release"
    return {"pandalm_agreement": agreement.assign(backend=backend),
            "pandalm_alt_test": pd.concat(tables, ignore_index=True).assign(backend=backend),
            "pandalm_alt_test_summary": summary.assign(backend=backend)}


def unieval_ppi(path: str, *, n_labeled: int, sizes: list[int], n_rep: int,
                rng: np.random.Generator) -> dict[str, pd.DataFrame]:
    """Topical-Chat: PPI of each dimension's mean human score from ``n_labeled`` random
    responses' human scores and UniEval's prediction for every response; ``truth`` is the
    mean over all responses, which the simulation's intervals should cover."""
    frame = unieval.load_release(path).dropna(subset=["human", "predicted"])
    intervals, sims = [], []
    for dimension, part in frame.groupby("dimension", sort=True):
        y, yhat = part["human"].to_numpy(float), part["predicted"].to_numpy(float)
        n = min(n_labeled, len(y) - 1)
        if n < 2:
            continue
        mask = np.zeros(len(y), dtype=bool)
        mask[rng.choice(len(y), n, replace=False)] = True
        intervals.append(ppi_mean(y[mask], yhat[mask], yhat[~mask]).assign(
            dimension=dimension, truth=float(y.mean())))
        ok = [s for s in sizes if 2 <= s < len(y)]
        if ok:
            sims.append(ppi_simulation(y, yhat, ok, n_rep=n_rep, rng=rng).assign(
                dimension=dimension))
    backend = "unieval_release"
    out = {"unieval_ppi": pd.concat(intervals, ignore_index=True) if intervals else pd.DataFrame(),
           "unieval_ppi_simulation": pd.concat(sims, ignore_index=True) if sims
           else pd.DataFrame()}
    return {k: v.assign(backend=backend) if len(v) else v for k, v in out.items()}


def llmbar_verdicts(path: str) -> pd.DataFrame:
    """LLMBar verdicts as shown: ``judge_model`` (``<judge>/<strategy>``), ``first`` and
    ``second`` (``better`` or ``worse`` output, in shown order), ``first_wins``."""
    frame = llmbar.load_release(path)
    frame = frame.assign(judge_model=frame["judge"] + "/" + frame["strategy"])
    first_number = np.where(frame["order"] == 0, 1, 2)
    first = np.where(first_number == frame["label"], "better", "worse")
    verdict = pd.to_numeric(frame["verdict"], errors="coerce")
    won = np.where(verdict.notna(), (verdict == first_number).astype(float), np.nan)
    return frame[["subset", "item_id", "judge_model", "order", "verdict", "label"]].assign(
        first=first, second=np.where(first == "better", "worse", "better"), first_wins=won)


def llmbar_analysis(path: str, *, judge: str, alpha: float, delta: float, share: float,
                    rng: np.random.Generator) -> dict[str, pd.DataFrame]:
    """Per judge configuration, Bradley-Terry with the position term over both orders (the
    ``better`` output's strength against the ``worse`` one, fixed at 0; standard errors
    cluster-robust by item, judged in both orders); and selective
    judging of ``judge`` (empty: the first configuration) whose confidence is the share of
    all configurations' verdicts on the item (both orders) equal to its first-order one.
    An unparsed verdict of ``judge`` stays in, with confidence 0 and counted as wrong (as
    in the bundled set's ``selective_frame``), so it cannot inflate coverage or agreement."""
    data = llmbar_verdicts(path)
    fits = [bradley_terry(part, reference="worse", groups=["item_id"]).assign(judge_model=name)
            for name, part in data.groupby("judge_model", sort=True)
            if part["first_wins"].notna().sum() >= 2]
    judge = judge or sorted(data["judge_model"])[0]
    target = data[(data["judge_model"] == judge) & (data["order"] == 0)]
    votes = data.dropna(subset=["verdict"]).groupby("item_id")["verdict"].agg(list)
    confidence = [float(np.mean([v == verdict for v in votes.get(item, [])])) if parsed else 0.0
                  for item, verdict, parsed in zip(target["item_id"], target["verdict"],
                                                   target["first_wins"].notna(), strict=True)]
    items = target[["subset", "item_id", "verdict", "label"]].assign(
        judge_model=judge, confidence=confidence,
        correct=target["first_wins"].notna() & (target["verdict"] == target["label"]))
    backend = "llmbar_release"
    out = {"llmbar_bradley_terry": pd.concat(fits, ignore_index=True).assign(backend=backend)
           if fits else pd.DataFrame(), "llmbar_selective": pd.DataFrame()}
    if len(items) >= 2:
        split = rng.random(len(items)) < share
        out["llmbar_selective"] = selective_report(
            items["confidence"], items["correct"], split, alpha=alpha, delta=delta
        ).assign(judge_model=judge, backend=backend)
    return out
