"""workbench.qualify: each statistic against a reference implementation or a formula, and
the guarantees (PPI coverage, selective-judging risk) by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from scipy import stats as sps
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW

from workbench import qualify as q

# --- agreement and the human ceiling ------------------------------------------------------------


def _raters(n=120, k=4, seed=0, noise=0.6):
    rng = np.random.default_rng(seed)
    truth = rng.normal(3, 1, n)
    humans = pd.DataFrame({f"r{j}": truth + rng.normal(0, noise, n) for j in range(k)})
    return truth, humans, rng


def test_leave_one_out_agreement_matches_scipy():
    truth, humans, rng = _raters()
    judge = truth + rng.normal(0, 0.3, len(truth))
    out = q.leave_one_out_agreement(humans, pd.DataFrame({"j": judge}), n_boot=0)
    cols = list(humans.columns)
    ref_judge = np.mean([sps.pearsonr(judge, humans.drop(columns=c).mean(axis=1)).statistic
                         for c in cols])
    ref_raters = [sps.pearsonr(humans[c], humans.drop(columns=c).mean(axis=1)).statistic
                  for c in cols]
    got = out.set_index("who")["estimate"]
    assert got["j"] == pytest.approx(ref_judge)
    assert got[cols].to_numpy() == pytest.approx(ref_raters)
    assert got["human ceiling"] == pytest.approx(np.mean(ref_raters))
    # a judge closer to the truth than any person beats the ceiling
    assert got["j"] > got["human ceiling"]


@pytest.mark.slow
def test_leave_one_out_kappa_matches_statsmodels_and_bootstrap_ci():
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 3, 200)
    flip = lambda: np.where(rng.random(200) < 0.2, rng.integers(0, 3, 200), truth)  # noqa: E731
    humans = pd.DataFrame({"a": flip(), "b": flip(), "c": flip()})
    out = q.leave_one_out_agreement(humans, measure="cohen_kappa", n_boot=200, rng=0)
    row = out.set_index("who").loc["a"]

    def kappa(x, y):
        table = pd.crosstab(x, y).reindex(index=[0, 1, 2], columns=[0, 1, 2], fill_value=0)
        return cohens_kappa(table.to_numpy()).kappa

    assert row["estimate"] == pytest.approx(np.mean([kappa(humans.a, humans.b),
                                                     kappa(humans.a, humans.c)]))
    assert row["ci_low"] < row["estimate"] < row["ci_high"]


# --- the alternative annotator test ---------------------------------------------------------------


def _alt_test_reference(humans: dict, llm: dict, epsilon: float, q_fdr: float, score):
    """Algorithm 1 of Calderon et al. (2025), written from the paper with plain loops."""
    p_values, advantage = [], []
    for held in humans:
        w_f, w_h = [], []
        for i, label in humans[held].items():
            rest = [humans[h][i] for h in humans if h != held and i in humans[h]]
            if not rest:
                continue
            s_h, s_f = score(label, rest), score(llm[i], rest)
            w_f.append(float(s_f >= s_h))
            w_h.append(float(s_h >= s_f))
        d = np.array(w_h) - np.array(w_f)
        p_values.append(sps.ttest_1samp(d, epsilon, alternative="less").pvalue)
        advantage.append(np.mean(w_f))
    reject = multipletests(p_values, alpha=q_fdr, method="fdr_by")[0]
    return float(np.mean(reject)), float(np.mean(advantage)), p_values


@pytest.mark.parametrize("metric", ["accuracy", "neg_rmse"])
def test_alt_test_matches_the_papers_algorithm(metric):
    rng = np.random.default_rng(3)
    n = 80
    if metric == "accuracy":
        truth = rng.integers(0, 3, n)
        noisy = lambda p: np.where(rng.random(n) < p, rng.integers(0, 3, n), truth)  # noqa: E731
        humans = pd.DataFrame({f"h{j}": noisy(0.3) for j in range(5)})
        judge = noisy(0.25)

        def score(x, rest):
            return np.mean([x == r for r in rest])
    else:
        truth = rng.normal(3, 1, n)
        humans = pd.DataFrame({f"h{j}": truth + rng.normal(0, 0.5, n) for j in range(5)})
        judge = truth + rng.normal(0, 0.45, n)

        def score(x, rest):
            return -np.sqrt(np.mean([(x - r) ** 2 for r in rest]))
    humans.iloc[:10, 0] = np.nan  # h0 skipped ten items
    as_dict = {h: {i: v for i, v in humans[h].items() if not pd.isna(v)} for h in humans}
    omega, advantage, p_values = _alt_test_reference(as_dict, dict(enumerate(judge)), 0.15,
                                                     0.05, score)
    table, summary = q.alt_test(humans, judge, epsilon=0.15, alpha=0.05, metric=metric)
    assert table["p_value"].to_numpy() == pytest.approx(p_values)
    assert summary["omega"] == pytest.approx(omega)
    assert summary["advantage"] == pytest.approx(advantage)
    assert table.loc[0, "n_items"] == n - 10


def test_alt_test_separates_a_good_judge_from_a_bad_one():
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 2, 150)
    noisy = lambda p: np.where(rng.random(150) < p, 1 - truth, truth)  # noqa: E731
    humans = pd.DataFrame({f"h{j}": noisy(0.15) for j in range(4)})
    assert q.alt_test(humans, truth, epsilon=0.1)[1]["passed"]
    assert not q.alt_test(humans, noisy(0.45), epsilon=0.1)[1]["passed"]


# --- prediction-powered inference ----------------------------------------------------------------


def test_ppi_mean_matches_the_formula_and_ppi_python():
    rng = np.random.default_rng(5)
    y = rng.normal(2, 1, 60)
    yhat = y + rng.normal(0.4, 0.5, 60)
    unl = rng.normal(2.4, 1.1, 2000)
    out = q.ppi_mean(y, yhat, unl, alpha=0.05, lam=1.0).set_index("method")
    # Angelopoulos et al. (2023), mean estimation: theta = mean(f_unl) + mean(y - f)
    theta = unl.mean() + (y - yhat).mean()
    se = np.sqrt(unl.var(ddof=1) / len(unl) + (y - yhat).var(ddof=1) / len(y))
    z = sps.norm.ppf(0.975)
    assert out.loc["ppi", "estimate"] == pytest.approx(theta)
    assert out.loc["ppi", "ci_low"] == pytest.approx(theta - z * se, rel=1e-3)
    assert out.loc["ppi", "ci_high"] == pytest.approx(theta + z * se, rel=1e-3)
    low, high = ppi_mean_ci(y, yhat, unl, alpha=0.05)  # PPI++ (tuned lambda)
    tuned = q.ppi_mean(y, yhat, unl, alpha=0.05).set_index("method")
    assert tuned.loc["ppi", ["ci_low", "ci_high"]].to_numpy() == pytest.approx([low[0], high[0]])
    # the classical row is the z interval of the labelled mean: ybar +- z * s / sqrt(n)
    half = z * y.std(ddof=1) / np.sqrt(len(y))
    assert out.loc["classical", "estimate"] == pytest.approx(y.mean())
    assert out.loc["classical", ["ci_low", "ci_high"]].to_numpy() == pytest.approx(
        [y.mean() - half, y.mean() + half])
    assert out.loc["ppi", "width"] < out.loc["classical", "width"]


@pytest.mark.parametrize("case", ["scores", "win rate", "lam clipped", "lam fixed",
                                  "own unlabelled sets"])
def test_batched_intervals_are_ppi_pythons_and_statsmodels(case):
    """ppi_mean_intervals gives, row by row, ppi_py.ppi_mean_ci's interval and
    ppi_mean_pointestimate's estimate; classical_mean_intervals statsmodels'
    DescrStatsW.zconfint_mean (each to 1e-12). Cases: 1-5 scores from a good judge, 0/1
    labels, a judge running against the labels (PPI++'s lam clipped to 0), a fixed lam,
    and an unlabelled set of its own per row (ppi_simulation's resamples)."""
    rng = np.random.default_rng(11)
    pool = np.clip(rng.normal(3.2, 0.9, 300), 1, 5)
    judge = np.clip(pool + rng.normal(0.3, 0.4, 300), 1, 5)
    if case == "win rate":
        pool, judge = (pool > 3).astype(float), (judge > 3.2).astype(float)
    if case == "lam clipped":
        judge = 6.0 - judge
    draws = rng.integers(300, size=(40, 25))
    y = pool[draws] if case == "win rate" else np.round(pool[draws] + rng.normal(0, 0.4, draws.shape))
    unl = rng.integers(300, size=(40, 275)) if case == "own unlabelled sets" else None
    lam = 0.7 if case == "lam fixed" else None
    low, high, est = q.ppi_mean_intervals(y, judge[draws], judge if unl is None else judge[unl],
                                          alpha=0.1, lam=lam)
    c_low, c_high, c_mean = q.classical_mean_intervals(y, alpha=0.1)
    for s in range(len(draws)):
        f_unl = judge if unl is None else judge[unl[s]]
        ref_low, ref_high = ppi_mean_ci(y[s], judge[draws[s]], f_unl, alpha=0.1, lam=lam)
        assert [low[s], high[s]] == pytest.approx([ref_low[0], ref_high[0]], abs=1e-12)
        if lam is not None:
            ref = ppi_mean_pointestimate(y[s], judge[draws[s]], f_unl, lam=lam)
            assert est[s] == pytest.approx(float(np.ravel(ref)[0]), abs=1e-12)
        ref_low, ref_high = DescrStatsW(y[s]).zconfint_mean(alpha=0.1)
        assert [c_low[s], c_high[s], c_mean[s]] == pytest.approx([ref_low, ref_high, y[s].mean()],
                                                                 abs=1e-12)
    assert (high > low).all()


@pytest.mark.parametrize("lam", [1.0, None])
def test_ppi_coverage_by_simulation(lam):
    """1,000 simulated studies through workbench's ppi_mean: the 95% interval covers the
    true mean 93-97% of the time."""
    rng = np.random.default_rng(6)
    hits = 0
    for _ in range(1000):
        y_all = rng.binomial(1, 0.6, 1100).astype(float)  # a win rate: 0/1 human labels
        judge = np.where(rng.random(1100) < 0.8, y_all, 1 - y_all)  # 80% agreement, biased
        judge = np.where((judge == 0) & (rng.random(1100) < 0.1), 1.0, judge)
        out = q.ppi_mean(y_all[:100], judge[:100], judge[100:], alpha=0.05, lam=lam)
        low, high = out.loc[out["method"] == "ppi", ["ci_low", "ci_high"]].to_numpy()[0]
        hits += low <= 0.6 <= high
    assert 0.93 <= hits / 1000 <= 0.97


def test_ppi_simulation_and_labels_needed():
    rng = np.random.default_rng(7)
    y = rng.normal(3, 1, 600)
    yhat = y + rng.normal(0.5, 0.4, 600)
    sim = q.ppi_simulation(y, yhat, [20, 80], n_rep=200, rng=0)
    ppi = sim[sim["method"] == "ppi"].set_index("n_labeled")
    cls = sim[sim["method"] == "classical"].set_index("n_labeled")
    assert (ppi["width"] < cls["width"]).all()
    assert ppi.loc[20, "width"] > ppi.loc[80, "width"]
    assert (sim["coverage"] > 0.88).all()
    need = q.labels_needed(sim, float(ppi.loc[80, "width"]) + 1e-9).set_index("method")
    assert need.loc["ppi", "n_labeled"] == 80
    with pytest.raises(ValueError):
        q.ppi_simulation(y, yhat, [600])
    with pytest.raises(ValueError, match="NaN"):
        q.ppi_simulation(np.r_[y[:-1], np.nan], yhat, [20])


def test_ppi_simulation_coverage_does_not_climb_with_the_pilot_share():
    """Resampling with replacement: labelling most of the pilot does not make every
    interval cover (without replacement the coverage tends to 1 as n/N grows)."""
    rng = np.random.default_rng(11)
    y = rng.normal(3, 1, 100)
    yhat = y + rng.normal(0.3, 0.8, 100)
    sim = q.ppi_simulation(y, yhat, [80], n_rep=400, rng=1, lam=1.0)
    assert (sim["coverage"] < 0.99).all() and (sim["coverage"] > 0.88).all()


def test_missing_labels_are_reported_and_count_against_the_judge():
    rng = np.random.default_rng(12)
    truth = rng.integers(0, 2, 100)
    humans = pd.DataFrame({f"h{j}": np.where(rng.random(100) < 0.1, 1 - truth, truth)
                           for j in range(3)})
    judge = truth.astype(object)
    assert q.alt_test(humans, judge, epsilon=0.2)[1]["passed"]
    judge[:60] = None  # the same judge, silent on 60% of the items, must not pass
    table, summary = q.alt_test(humans, judge, epsilon=0.2)
    assert not summary["passed"]
    assert (table["n_judge_missing"] == 60).all() and (table["n_items"] == 100).all()
    scores = pd.DataFrame({"j": np.where(np.arange(100) < 60, np.nan, truth)})
    out = q.leave_one_out_agreement(humans.astype(float), scores, n_boot=0).set_index("who")
    assert out.loc["j", ["n_items", "n_used", "n_missing"]].tolist() == [100, 40, 60]
    assert out.loc["h0", ["n_used", "n_missing"]].tolist() == [100, 0]


# --- juries --------------------------------------------------------------------------------------


def test_jury_vs_best_uses_the_calibration_split_and_scipy_tests():
    rng = np.random.default_rng(8)
    truth = rng.normal(3, 1, 300)
    scores = pd.DataFrame({f"j{k}": truth + rng.normal(0, 0.8, 300) for k in range(4)})
    calibration = np.arange(300) < 150
    out = q.jury_vs_best(scores, pd.Series(truth), calibration).set_index("who")
    cal_r = {c: np.corrcoef(scores[c][:150], truth[:150])[0, 1] for c in scores}
    best = max(cal_r, key=cal_r.get)
    mean_jury = scores.mean(axis=1).to_numpy()[150:]
    err_j, err_b = np.abs(mean_jury - truth[150:]), np.abs(scores[best].to_numpy()[150:] - truth[150:])
    row = out.loc["jury: mean"]
    assert row["b"] == best
    assert row["p_value"] == pytest.approx(sps.ttest_rel(err_j, err_b).pvalue)
    assert row["p_value_wilcoxon"] == pytest.approx(sps.wilcoxon(err_j, err_b).pvalue)
    # independent errors: the mean of four judges beats the best single one
    assert row["mean_diff"] < 0 and row["p_value"] < 0.01
    assert out.loc["j0", "weight"] == pytest.approx(max(cal_r["j0"], 0))


# --- Bradley-Terry --------------------------------------------------------------------------------


def _pairs(n=4000, seed=9):
    rng = np.random.default_rng(seed)
    systems = ["m0", "m1", "m2", "m3"]
    strength = {"m0": 0.0, "m1": 0.8, "m2": -0.5, "m3": 0.3}
    first = rng.choice(systems, n)
    second = np.array([rng.choice([s for s in systems if s != f]) for f in first])
    length = rng.normal(0, 1, n)
    judge_wrote = rng.choice([0.0, 1.0, -1.0], n, p=[0.8, 0.1, 0.1])
    eta = (0.4 + pd.Series(first).map(strength) - pd.Series(second).map(strength)
           + 0.3 * length + 0.6 * judge_wrote)
    win = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return pd.DataFrame({"first": first, "second": second, "first_wins": win,
                         "length_diff": length, "self_preference": judge_wrote})


def test_bradley_terry_matches_statsmodels_logit_and_recovers_the_truth():
    data = _pairs()
    out = q.bradley_terry(data, covariates=["length_diff", "self_preference"], reference="m0")
    x, _ = q.bt_design(data, covariates=["length_diff", "self_preference"], reference="m0")
    logit = sm.Logit(data["first_wins"], x).fit(disp=0)
    fitted = out.dropna(subset=["se"])
    got = fitted.set_index(fitted["term"].where(fitted["a"].isna(), fitted["a"]))
    for name in x.columns:
        assert got.loc[name, "estimate"] == pytest.approx(logit.params[name], rel=1e-6)
        assert got.loc[name, "se"] == pytest.approx(logit.bse[name], rel=1e-4)
    truth = {"m1": 0.8, "m2": -0.5, "m3": 0.3, "position": 0.4, "length_diff": 0.3,
             "self_preference": 0.6}
    for name, value in truth.items():
        assert got.loc[name, "ci_low"] < value < got.loc[name, "ci_high"], name
    assert out.loc[0, "a"] == "m0" and out.loc[0, "estimate"] == 0


def test_bradley_terry_cluster_robust_by_pair_matches_statsmodels_logit():
    data = _pairs().assign(pair=np.arange(4000) // 2)  # rows 2k, 2k+1: one pair, two orders
    out = q.bradley_terry(data, covariates=["length_diff"], reference="m0", groups=["pair"])
    plain = q.bradley_terry(data, covariates=["length_diff"], reference="m0")
    x, _ = q.bt_design(data, covariates=["length_diff"], reference="m0")
    logit = sm.Logit(data["first_wins"], x).fit(disp=0, cov_type="cluster",
                                                cov_kwds={"groups": data["pair"].to_numpy()})
    fitted = out.dropna(subset=["se"])
    got = fitted.set_index(fitted["term"].where(fitted["a"].isna(), fitted["a"]))
    for name in x.columns:
        assert got.loc[name, "estimate"] == pytest.approx(logit.params[name], rel=1e-6)
        assert got.loc[name, "se"] == pytest.approx(logit.bse[name], rel=1e-4)
    assert out["estimate"].to_numpy() == pytest.approx(plain["estimate"].to_numpy())
    assert not np.allclose(out["se"].dropna(), plain["se"].dropna())
    one = q.bradley_terry(data.assign(pair=0), covariates=["length_diff"], reference="m0",
                          groups=["pair"])  # one cluster: no cluster-robust SE
    assert one["se"].isna().all() and one["estimate"].to_numpy() == pytest.approx(
        plain["estimate"].to_numpy())


def test_length_controlled_win_rate_matches_a_glm_fit():
    rng = np.random.default_rng(10)
    diff = rng.normal(50, 100, 800)
    wins = (rng.random(800) < 1 / (1 + np.exp(-(0.3 + 1.0 * np.tanh(diff / np.std(diff)))))
            ).astype(float)
    out = q.length_controlled_win_rate(wins, diff)
    fit = sm.GLM(wins, sm.add_constant(np.tanh(diff / np.std(diff))),
                 family=sm.families.Binomial()).fit()
    assert out["estimate"] == pytest.approx(1 / (1 + np.exp(-fit.params[0])))
    assert out["length_coef"] == pytest.approx(fit.params[1])
    assert out["win_rate"] == pytest.approx(wins.mean())
    assert out["ci_low"] < out["estimate"] < out["ci_high"]
    pair = np.arange(800) // 2
    robust = q.length_controlled_win_rate(wins, diff, groups=pair)
    ref = sm.GLM(wins, sm.add_constant(np.tanh(diff / np.std(diff))),
                 family=sm.families.Binomial()).fit(cov_type="cluster", cov_kwds={"groups": pair})
    assert robust["estimate"] == pytest.approx(out["estimate"])
    low = ref.conf_int()[0][0]
    assert robust["ci_low"] == pytest.approx(1 / (1 + np.exp(-low)))


# --- selective judging ---------------------------------------------------------------------------


@pytest.mark.parametrize("k,n", [(0, 20), (3, 50), (12, 100)])
def test_clopper_pearson_upper_is_the_beta_quantile(k, n):
    # the exact one-sided bound is the (1 - delta) quantile of Beta(k + 1, n - k)
    # (Clopper & Pearson 1934); with k = 0 it is 1 - delta ** (1 / n)
    assert q.clopper_pearson_upper(k, n, 0.1) == pytest.approx(sps.beta.ppf(0.9, k + 1, n - k))
    if k == 0:
        assert q.clopper_pearson_upper(k, n, 0.1) == pytest.approx(1 - 0.1 ** (1 / n))
    # the binomial test rejects "risk > alpha" exactly when the upper bound is <= alpha
    for alpha in (0.05, 0.1, 0.2):
        assert (sps.binom.cdf(k, n, alpha) <= 0.1) == (q.clopper_pearson_upper(k, n, 0.1) <= alpha)


def test_selective_guarantee_by_simulation():
    """Achieved risk <= alpha in at least 1 - delta of 400 repetitions (Jung et al. 2024)."""
    alpha, delta = 0.1, 0.1
    levels = np.linspace(0, 1, 21)
    p_error = 0.35 * (1 - levels)  # the judge errs less when more confident
    risk_at = {t: p_error[levels >= t].mean() for t in levels}  # uniform confidence levels
    rng = np.random.default_rng(11)
    ok, coverage = 0, []
    for _ in range(400):
        conf = rng.choice(levels, 400)
        correct = rng.random(400) >= 0.35 * (1 - conf)
        thr, _ = q.calibrate_threshold(conf, correct, alpha=alpha, delta=delta)
        risk = 0.0 if np.isinf(thr) else risk_at[min(levels, key=lambda v: abs(v - thr))]
        ok += risk <= alpha
        coverage.append(0.0 if np.isinf(thr) else float(np.mean(levels >= thr)))
    assert ok / 400 >= 1 - delta
    assert np.mean(coverage) > 0.2  # and it does not get there by abstaining on everything


def test_selective_report_held_out():
    rng = np.random.default_rng(12)
    conf = rng.random(2000)
    correct = rng.random(2000) >= 0.4 * (1 - conf)
    cal = np.arange(2000) < 1000
    out = q.selective_report(conf, correct, cal, alpha=0.1, delta=0.1).set_index("policy")
    assert out.loc["all items", "coverage"] == 1.0
    assert 0 < out.loc["selective", "coverage"] < 1
    assert out.loc["selective", "agreement"] > out.loc["all items", "agreement"]
    assert out.loc["selective", "agreement"] >= 0.88
