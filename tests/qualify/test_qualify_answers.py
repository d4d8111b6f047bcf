"""The printed answers of a qualification (issue 31): each names the dimension, the method and
the level it is about, says so when the table cannot support it, and is true: every number
is recomputed here with scipy / statsmodels on a table with two dimensions, two
annotators and three systems."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from workbench import qualify as q
from workbench.datasets import validate_pairwise, validate_pointwise
from workbench.report import qualification_report

SYSTEMS = ["s1", "s2", "s3"]


def _pointwise(n_items=40, seed=0, annotators=("a1", "a2")):
    """Two dimensions, two annotators, three systems; m1 scores both dimensions, m2 only
    coherence."""
    rng = np.random.default_rng(seed)
    rows = []
    for item in range(1, n_items + 1):
        for k, system in enumerate(SYSTEMS):
            for dim in ("coherence", "fluency"):
                quality = k + rng.normal(0, 1)
                for ann in annotators:
                    rows.append({"item_id": item, "system": system, "dimension": dim,
                                 "annotator": ann,
                                 "score": float(np.clip(round(quality + rng.normal(0, .8)) + 2,
                                                        1, 5))})
                rows.append({"item_id": item, "system": system, "dimension": dim,
                             "judge": "m1", "score": quality + rng.normal(0, 1)})
                if dim == "coherence":
                    rows.append({"item_id": item, "system": system, "dimension": dim,
                                 "judge": "m2", "score": rng.normal(0, 1)})
    return validate_pointwise(pd.DataFrame(rows))


def _units(table, dim, judge):
    part = table[table["dimension"] == dim]
    human = part[part["annotator"] != ""].pivot_table(index=["item_id", "system"],
                                                      columns="annotator", values="score")
    score = part[part["judge"] == judge].set_index(["item_id", "system"])["score"]
    return human.join(score.rename("judge"), how="inner")


def _line(answers, start, *must):
    found = [a for a in answers if a.startswith(start) and all(m in a for m in must)]
    assert len(found) == 1, (start, must, answers)
    return found[0]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    table = _pointwise()
    out = qualification_report(table, tmp_path_factory.mktemp("r"), method="kendall",
                               n_boot=0, n_rep=20)
    return table, out


def test_correlation_answers_are_per_dimension_method_and_level(report):
    table, out = report
    for dim, judge in (("coherence", "m1"), ("fluency", "m1"), ("coherence", "m2")):
        u = _units(table, dim, judge)
        tau = sps.kendalltau(u["judge"], u[["a1", "a2"]].mean(axis=1)).statistic
        line = _line(out["answers"], "Correlation with people:", f"{judge} on '{dim}' (kendall)")
        assert f"item x system level {tau:.3f}" in line and f"(n = {len(u)})" in line
        means = u.assign(h=u[["a1", "a2"]].mean(axis=1)).groupby(level="system")[["judge", "h"]
                                                                              ].mean()
        system = sps.kendalltau(means["judge"], means["h"], method="exact")
        assert f"system level {system.statistic:.3f} over 3 systems" in line
        assert f"p = {system.pvalue:.3f}" in line and "no interval" in line
    assert not any("m2 on 'fluency'" in a for a in out["answers"])


def test_the_human_ceiling_is_per_dimension_with_the_reports_method(report):
    table, out = report
    for dim in ("coherence", "fluency"):
        u = _units(table, dim, "m1")
        people = sps.kendalltau(u["a1"], u["a2"]).statistic
        m1 = np.mean([sps.kendalltau(u["judge"], u[a]).statistic for a in ("a1", "a2")])
        line = _line(out["answers"], f"Human ceiling on '{dim}'", "(kendall, item x system level")
        assert f"people {people:.3f}" in line and f"m1 {m1:.3f}" in line
        assert ("m2" in line) == (dim == "coherence")  # m2 scores coherence only


def test_where_it_fails_names_dimension_method_and_level(tmp_path):
    table = _pointwise(seed=1)
    out = qualification_report(table, tmp_path, method="all", n_boot=0, n_rep=20)
    line = _line(out["answers"], "Where does it fail?")
    for dim in ("coherence", "fluency"):
        u = _units(table, dim, "m1")
        h = u[["a1", "a2"]].mean(axis=1)
        for method, fn in (("pearson", sps.pearsonr), ("kendall", sps.kendalltau)):
            part = line.split(f"m1 on '{dim}' ({method}, units of one system): ")[1].split(";")[0]
            for system in SYSTEMS:
                rows = u.index.get_level_values("system") == system
                value = fn(u.loc[rows, "judge"], h[rows]).statistic
                assert f"system {system} {value:.3f}" in part


def test_the_alt_test_with_two_annotators_gives_no_verdict(report):
    _, out = report
    line = out["answers"][0]
    assert "at least 3 annotators" in line and "omega" not in line
    assert "passes" not in line and "alt_test" not in out


def test_the_label_saving_answer_states_its_target(report, tmp_path):
    table = report[0]
    out = qualification_report(table, tmp_path / "n", n_boot=0, n_rep=20, target_labels=30)
    line = _line(out["answers"], "How many human labels")
    for dim in ("coherence", "fluency"):
        u = _units(table, dim, "m1")
        width = 2 * 1.959963984540054 * u[["a1", "a2"]].mean(axis=1).std(ddof=1) / np.sqrt(30)
        assert (f"m1 on '{dim}': target the width of 30 human labels alone (95% interval "
                f"width {width:.3f})") in line
    assert "999" not in line
    # no target stated: the default is said, never the width of all labels
    default = _line(report[1]["answers"], "How many human labels")
    assert "target the width of 60 human labels alone (default: half the table's" in default
    stated = qualification_report(table, tmp_path, n_boot=0, n_rep=20, target_width=0.5)
    assert "target a stated width of 0.5 (95% interval width 0.500)" in stated["answers"][-1]


def test_system_level_with_three_systems_has_an_exact_p_value_and_no_interval():
    # the judge inverts every system's items (pooled tau < 0) but orders the systems right
    rows = []
    for k, system in enumerate(SYSTEMS):
        for item in range(1, 11):
            rows.append({"item_id": item, "system": system, "judge": "j",
                         "score": 10 * k - item / 10, "label": 10 * k + item})
    res = q.judge_correlations(validate_pointwise(pd.DataFrame(rows)), method="kendall")
    system = res[res["level"] == "system"].iloc[0]
    assert system["estimate"] == pytest.approx(1.0) and system["n"] == 3
    assert np.isnan(system["ci_low"]) and np.isnan(system["ci_high"])
    exact = sps.kendalltau([0, 1, 2], [0, 1, 2], method="exact").pvalue
    assert system["p_value"] == pytest.approx(exact) == pytest.approx(1 / 3)
    assert "6 orderings" in system["test"]


def _pairwise(n=60, seed=2):
    rng = np.random.default_rng(seed)
    rows = []
    for item in range(n):
        label = rng.choice(["A", "B"])
        first = label if rng.random() < .75 else rng.choice(["A", "B", "tie"])
        # the judge often picks whatever is shown first in order 1
        second = "B" if rng.random() < .4 else first
        rows += [{"item_id": item, "order": 0, "judge": "j", "verdict": first, "label": label},
                 {"item_id": item, "order": 1, "judge": "j", "verdict": second, "label": label}]
    return validate_pairwise(pd.DataFrame(rows), second_order="original")


def test_position_flip_rate_and_first_position_preference(tmp_path):
    table = _pairwise()
    wide = table.pivot_table(index="item_id", columns="order", values="verdict", aggfunc="first")
    flips = int((wide[0] != wide[1]).sum())
    low, high = proportion_confint(flips, len(wide), method="wilson")
    first = int((wide[0] == "A").sum() + (wide[1] == "B").sum())
    decisive = int(wide[0].isin(["A", "B"]).sum() + wide[1].isin(["A", "B"]).sum())
    out = qualification_report(table, tmp_path, n_boot=0, n_rep=20)
    line = _line(out["answers"], "Position: j")
    assert f"{flips / len(wide):.3f} [{low:.3f}, {high:.3f}] of {len(wide)} items" in line
    low, high = proportion_confint(first / 2, decisive / 2, method="wilson")
    assert f"first in {first / decisive:.3f} [{low:.3f}, {high:.3f}] of {decisive}" in line
    # a judge that always picks the first shown: an interval, not [1, 1]
    always = table.assign(verdict=np.where(table["order"] == 0, "A", "B"))
    pos = q.pairwise_position(always).set_index("measure").loc["first_position"]
    assert pos["estimate"] == 1.0 and pos["ci_low"] < 0.99 and pos["ci_high"] == pytest.approx(1)
    one_order = qualification_report(table[table["order"] == 0], tmp_path / "one", n_boot=0,
                                     n_rep=20)
    assert any(a.startswith("Position: not answered: position bias needs both")
               for a in one_order["answers"])


def test_a_tex_name_is_drawn_as_text(tmp_path):
    table = _pairwise(n=40)
    table = table.assign(judge="$\\undefinedmacro{x}$", group=["$\\frac{$"] * len(table))
    out = qualification_report(validate_pairwise(table.drop(columns=["source_file",
                                                                   "source_line"],
                                                          errors="ignore"),
                                                 second_order="original"),
                               tmp_path, n_boot=0, n_rep=20)
    assert (tmp_path / "index.html").exists() and any((tmp_path / "figures").glob("*.png"))
    assert any("$\\undefinedmacro{x}$" in a for a in out["answers"])


def test_the_system_ranking_answer_is_kendall_over_win_rates(tmp_path):
    rng = np.random.default_rng(5)
    systems = ["w", "x", "y", "z"]
    rows = []
    for item in range(48):
        a, b = rng.choice(systems, 2, replace=False)
        label = "A" if systems.index(a) > systems.index(b) else "B"
        first = label if rng.random() < .7 else rng.choice(["A", "B"])
        second = first if rng.random() < .8 else rng.choice(["A", "B", "tie"])
        rows += [{"item_id": item, "order": o, "judge": "j", "verdict": v, "label": label,
                  "system_a": a, "system_b": b} for o, v in ((0, first), (1, second))]
    table = validate_pairwise(pd.DataFrame(rows), second_order="original")
    out = qualification_report(table, tmp_path, n_boot=50, n_rep=20)
    points = {"A": 1.0, "B": 0.0, "tie": 0.5}
    own, hum = {s: [] for s in systems}, {s: [] for s in systems}
    for _, g in table.groupby("item_id"):
        a, b = g["system_a"].iloc[0], g["system_b"].iloc[0]
        p, h = g["verdict"].map(points).mean(), points[g["label"].iloc[0]]
        own[a].append(p), own[b].append(1 - p), hum[a].append(h), hum[b].append(1 - h)
    x, y = [np.mean(own[s]) for s in systems], [np.mean(hum[s]) for s in systems]
    tau = sps.kendalltau(x, y).statistic
    line = _line(out["answers"], "System ranking: j (kendall, system level over 4 systems'")
    assert f"tau = {tau:.3f}" in line and "exact permutation (all 24 orderings)" in line
    winner = systems[int(np.argmax(x))]
    assert (f"same winner as people ({winner})" in line) == (winner == systems[int(np.argmax(y))])


def test_qualify_reads_free_text_verdicts_by_pattern(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from workbench.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "replies.csv").write_text(
        "item_id,judge,reply,label\n1,j,[[A]],A\n2,j,I prefer [[B]],B\n3,j,no idea,A\n")
    result = CliRunner().invoke(app, ["qualify", "replies.csv", "-c", "verdict: reply",
                                      "--pattern", r"\[\[(A|B|C)\]\]", "--verdicts",
                                      "{A: A, B: B, C: tie}", "--n-boot", "0", "--n-rep", "5"])
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(tmp_path / "replies_qualification" / "summary.csv")
    assert summary.set_index("what").loc["unparsed verdicts", "value"] == "1"


def test_a_system_ranking_the_verdicts_cannot_support_is_not_answered(tmp_path):
    pairs = [("w", "x"), ("w", "y"), ("x", "y")] * 12
    rows = [{"item_id": i, "order": 0, "judge": "j", "label": "A", "system_a": a,
             "system_b": b, "verdict": "A" if (a, b) == ("w", "x") else None}
            for i, (a, b) in enumerate(pairs)]
    out = qualification_report(validate_pairwise(pd.DataFrame(rows)), tmp_path, n_boot=20,
                               n_rep=10)
    _line(out["answers"], "System ranking: not answered: judge 'j': fewer than 3 systems")


def test_the_alt_test_with_three_annotators_per_dimension_and_judge(tmp_path):
    table = _pointwise(annotators=("a1", "a2", "a3"))
    out = qualification_report(table, tmp_path, judge=["m1", "m2"], n_boot=0, n_rep=10)
    alt = out["alt_test"]
    assert sorted(zip(alt["judge"], alt["dimension"], strict=True)) == [
        ("m1", "coherence"), ("m1", "fluency"), ("m2", "coherence")]
    for r in alt.itertuples():
        assert (f"{r.judge} on '{r.dimension}': {'passes' if r.passed else 'does not pass'} "
                f"(winning rate omega = {r.omega:.2f} over 3 annotators") in out["answers"][0]


def test_one_system_says_there_is_no_system_level(tmp_path):
    table = _pointwise()
    one = validate_pointwise(table[table["system"] == "s1"].drop(
        columns=["source_file", "source_line"], errors="ignore").reset_index(drop=True))
    out = qualification_report(one, tmp_path, n_boot=0, n_rep=10)
    line = _line(out["answers"], "Correlation with people:", "m1 on 'coherence' (kendall)")
    assert "item level" in line and "no system level: 1 system(s), it needs at least 3" in line


def test_a_metric_without_a_dimension_meets_every_human_dimension():
    table = _pointwise()
    people = table[table["annotator"] != ""]
    m1 = table[(table["judge"] == "m1") & (table["dimension"] == "coherence")]
    metric = m1.assign(judge="bleu", dimension="")  # one row per unit, no dimension
    both = validate_pointwise(pd.concat([people, metric], ignore_index=True).drop(
        columns=["source_file", "source_line"], errors="ignore"))
    res = q.judge_correlations(both, method="kendall", level="pooled").set_index("dimension")
    assert sorted(res.index) == ["coherence", "fluency"]
    for dim in ("coherence", "fluency"):
        h = people[people["dimension"] == dim].groupby(["item_id", "system"])["score"].mean()
        s = metric.set_index(["item_id", "system"])["score"].reindex(h.index)
        assert res.loc[dim, "estimate"] == pytest.approx(sps.kendalltau(s, h).statistic)
        assert res.loc[dim, "n"] == len(h)
