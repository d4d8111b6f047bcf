"""The one column vocabulary: every column name of the workbench's tables, with its meaning.

A column name means one thing wherever it appears: in the canonical data tables
(DESIGN §6), in the results frame of :func:`workbench.judges.run_judging` (DESIGN §4),
in the frames :mod:`workbench.stats` returns, and in the tables the studies write.
:data:`COLUMNS` declares each name once; the layouts below (:data:`RESULT_CORE`,
:data:`RESULT_EXTRA`, :data:`STATS_ORDER`) order declared names, and
``tests/test_columns.py`` keeps every table inside the vocabulary.

Naming rules: snake_case; ``n_<things>`` counts things; ``<x>_ci_low`` / ``<x>_ci_high``
bound the confidence interval of ``x`` (plain ``ci_low`` / ``ci_high`` bound
``estimate``); ``mean_<x>`` is a mean; ``judge_model`` is always a judge's model string,
and a column that may also hold a person (``human``) is named for what it holds
(``annotator``, ``rater``). This module is the foundation layer: it imports nothing from
the package.

Examples
--------
>>> COLUMNS["answer_sample"]
'repeat index of the judged answer (0 when the items have none)'
>>> undeclared(["item_id", "score", "pval"])
['pval']
"""

from __future__ import annotations

from collections.abc import Iterable

#: Column name -> what it holds (one line). Grouped by where the name first appears.
COLUMNS: dict[str, str] = {
    # --- canonical data tables (DESIGN §6: items, rubric, responses, human_scores, spans)
    "item_id": "item identifier (after perturbation: the perturbed item's id)",
    "lang": "language of the item or of the prompt template used (ja | en | zh)",
    "category": "category of the item in its data set",
    "question": "the question put to the answer models",
    "reference": "the reference (model) answer",
    "keywords": "keywords the reference answer must contain (a list)",
    "perturbation": "perturbation applied to the item ('none' for the original)",
    "source_item": "item_id of the unperturbed item the row's item was made from",
    "criterion_id": "rubric criterion id (checklist result rows: the criterion scored; None elsewhere)",
    "text": "the row's text: rubric — the criterion; spans — the text of the unit",
    "weight": "rubric criterion weight (negative for dangerous-advice items)",
    "kind": "sort of row in its table: rubric — must | bonus | penalty | item; X3 — judge | rater | "
    "ceiling | jury; statistics — "
    "'score' (numeric paired difference) or 'verdict' (categorical flip rate)",
    "answer_model": "model (or person) that wrote the judged answer; pairwise: 'model_a vs model_b'",
    "answer_sample": "repeat index of the judged answer (0 when the items have none)",
    "response": "the answer text that is judged",
    "rater": "person (or simulated rater) who gave a human score",
    "dimension": "what the score is about: 'overall'; a dimension name; a checklist criterion_id "
    "or 'total'; decompose: excess_gist | excess_detail | missing_gist | missing_detail",
    "score": "numeric score; NaN when the call failed or the reply did not parse (never 0 for a failure). "
    "checklist criterion rows: 1.0 met / 0.0 not met; checklist 'total': sum of weights of met items / "
    "sum of positive weights; pairwise: 1.0 A better, 0.0 B better, 0.5 tie; decompose: flagged "
    "units of the class / reference units of that role",
    "unit_id": "id of a gist/detail unit of a reference answer",
    "role": "spans: role of the unit, gist | detail",
    "start": "character offset where the span starts (inclusive)",
    "end": "character offset where the span ends (exclusive)",
    "label": "spans: unit (a reference unit) | excess | missing; judge tables "
    "(workbench.datasets.load_pairwise / load_pointwise): the human (gold) label or score of "
    "the item",
    "text_source": "text the span offsets refer to: 'reference' or the answer ('response')",
    # --- judging results (DESIGN §4 core columns, then the extra ones)
    "study": "study label from JudgeSpec.study ('' when not given)",
    "judge_model": "model string of the judge (litellm form, e.g. 'sim/judge-a', 'gpt-4o'; for a "
    "release, the judge named there); never a person",
    "protocol": "holistic | holistic_simple | checklist | dimensions | geval | summarize_then | pairwise | decompose",
    "template": "id of the judging prompt template",
    "trial": "repeat index of the judge call (sent as Request.sample, so trials are distinct cache entries)",
    "temperature": "judge sampling temperature",
    "verdict": "categorical outcome: pairwise 'A' | 'B' | 'tie' in the items' original numbering; "
    "checklist criterion rows: True / False (criteriaMet); None otherwise or when unparsed",
    "parse_ok": "True when the call succeeded and the reply parsed into an allowed value",
    "explanation": "the judge's explanation / rationale / reason text; decompose: JSON list of the "
    "flagged items of the row's class",
    "cache_key": "workbench.llm cache key of the call (None for aggregate rows)",
    "backend": "'sim' or the real provider that answered; for numbers not from this run's calls: "
    "'published', 'llmbar' (a release) or 'human'",
    "cost_usd": "cost in USD of the call (0 for sim and for aggregate rows). A call that "
    "yields several rows (dimensions in one reply, the four decompose classes) carries its cost on "
    "its first row and 0 on the others; geval samples mode: the sum over the n samples",
    "cost_usd_batch": "estimate: cost in USD of the calls to make if sent as provider batch jobs "
    "(complete_many mode='batch'): litellm's batch prices, else 50% of the online price",
    "latency_s": "latency of the call in seconds (as recorded by the client; 0 for aggregate rows)",
    "perturbation_params": "JSON of the perturbation operators' parameters ('{}' for none)",
    "template_version": "version of the judging template (front matter 'version')",
    "use_reference": "whether the reference answer was shown to the judge (supervised)",
    "system_prompt": "system prompt used: template id@version, 'literal:<sha8>' or None",
    "mitigation": "whether the bias-mitigation system prompt (seed 003) was used",
    "scale_low": "lowest allowed score of the judging scale",
    "scale_high": "highest allowed score of the judging scale",
    "negative_flag": "checklist: True when a negative-weight item is met (on criterion rows and, "
    "for any such item, on the 'total' row); None elsewhere",
    "geval_mode": "geval: 'logprobs' (sum of p(s)*s from token log-probabilities) or 'samples' "
    "(mean over n sampled replies)",
    "geval_n": "geval samples mode: number of sampled replies; logprobs mode: 1",
    "geval_n_parsed": "geval: number of replies / score distributions that parsed",
    "order": "pairwise: 0 = response_a shown first, 1 = response_b shown first",
    "verdict_shown": "pairwise: the raw verdict letter in shown order ('A' | 'B' | 'C')",
    "model_a": "pairwise: model of response_a",
    "model_b": "pairwise: model of response_b",
    "inner_protocol": "summarize_then: the protocol applied to the summary",
    "n_units": "number of units: statistics — units that entered the estimate; decompose rows — "
    "reference units with the row's role",
    "prep_model": "model of the preparatory call (summariser or decomposer; 'items' when the "
    "units came with the items)",
    "prep_key": "cache key of the preparatory call (summary or decomposition)",
    "prep_text": "output of the preparatory call: the summary, or the units as JSON",
    "prep_cost_usd": "cost of the preparatory call, on the first row that used it (0 on the others), "
    "so cost_usd + prep_cost_usd summed over a frame is what the run spent",
    "cached": "True when the reply came from the cache",
    "raw_reply": "the judge's reply text, kept verbatim (also when it did not parse; a surrogate "
    "code point, which UTF-8 cannot hold, becomes U+FFFD)",
    "n_candidates": "candidates the parser chose among in the reply: JSON replies — JSON objects side "
    "by side (the whole reply as one object counts 1; the first object, or the fenced one, wins); "
    "pairwise — bracketed verdicts (the last wins). Above 1 flags e.g. an injected object the judge "
    "echoed; None for failed calls, bare scores and aggregate rows",
    "error": "why the row has no result: '<error_type>: <message>' of a failed call, the parse "
    "error, or the error of a step that was skipped",
    # --- statistics (workbench.stats): what is estimated
    "measure": "name of the quantity estimated in the row (e.g. 'consistency_index', 'ICC2k')",
    "method": "correlation method: 'pearson', 'spearman' or 'kendall' (tau-b)",
    "level": "correlation level: 'pooled', 'per_group' or 'per_group_mean'",
    "unit": "columns (joined by '+') that define one unit or group of scores",
    "within": "columns (joined by '+') that vary inside a unit; 'unchecked' if not declared",
    "replicate": "columns (joined by '+') over which a system's mean score is replicated",
    "a": "first level of a paired comparison (the reference when one is given)",
    "b": "second level of a paired comparison",
    "condition": "perturbed condition compared with the baseline",
    "baseline": "baseline condition",
    "class": "span class (e.g. 'excess_gist'; unit matching: 'gist' | 'detail')",
    "average": "span averaging unit: 'item' or 'unit'",
    "weights": "kappa weighting: 'none', 'linear' or 'quadratic'",
    "value_level": "Krippendorff metric: 'nominal', 'ordinal', 'interval' or 'ratio'",
    "design": "power simulation design: 'paired' or 'independent'",
    "test": "test used for p_value: 'paired_t', 'wilcoxon', 't', 'welch', 'F', 'z', ...",
    # sizes
    "n": "number of observations used (rows, pairs or items; see each function)",
    "n_missing": "observations dropped because a needed value was missing (NaN/None)",
    "n_skipped": "units, groups or items skipped (the statistic is undefined there, or the "
    "operator could not apply)",
    "n_groups": "number of groups that entered the estimate",
    "n_raters": "number of raters (or judges)",
    "n_categories": "number of distinct labels",
    "n_parsed": "replies or rows whose reply parsed (a study's parse_counts table)",
    "parse_share": "share of rows whose reply parsed: n_parsed / (n_parsed + n_unparsed)",
    "n_unparsed": "verdicts or replies that were missing (unparsed), kept as a value of their own",
    "n_incomplete": "items lacking one of the two orders or conditions",
    "n_items": "number of items",
    "n_trials": "number of trials per item and judge",
    "n_judges": "number of judges",
    # estimate and uncertainty
    "estimate": "point estimate of `measure`",
    "se": "standard error of the estimate",
    "ci_low": "lower bound of the confidence interval of `estimate`",
    "ci_high": "upper bound of the confidence interval of `estimate`",
    "ci_level": "confidence level of [ci_low, ci_high]",
    "ci_method": "how the CI was computed ('t', 'fisher_z', 'percentile_bootstrap', ...)",
    "n_boot": "bootstrap resamples (0 when no bootstrap was run)",
    "n_boot_failed": "bootstrap resamples whose statistic was undefined (left out of the CI)",
    # tests
    "test_statistic": "value of the test statistic (t, W, F or z)",
    "df": "degrees of freedom of a t statistic",
    "df_num": "numerator degrees of freedom of an F statistic",
    "df_den": "denominator degrees of freedom of an F statistic",
    "p_value": "two-sided p-value, unadjusted",
    "p_value_wilcoxon": "two-sided Wilcoxon signed-rank p-value, unadjusted",
    "p_adjusted": "p-value adjusted for multiple comparisons (see `padjust`)",
    "padjust": "multiple-comparison adjustment: 'bonf', 'holm', 'fdr_bh' or 'none'",
    "alpha": "significance level",
    "significant": "p_adjusted (or p_value where nothing is adjusted) < alpha",
    # effect sizes and parts
    "cohen_dz": "Cohen's d_z: mean paired difference / sd of the differences",
    "rank_biserial": "matched-pairs rank-biserial correlation (Wilcoxon effect size)",
    "mean_a": "mean of a over the pairs (or groups) used",
    "mean_b": "mean of b over the pairs (or groups) used",
    "mean_baseline": "mean baseline score over the items used",
    "mean_condition": "mean perturbed score over the items used",
    "numerator": "numerator of a ratio estimate",
    "denominator": "denominator of a ratio estimate",
    "p_observed": "observed agreement",
    "p_expected": "agreement expected by chance",
    "d_observed": "observed disagreement (Krippendorff's D_o)",
    "d_expected": "disagreement expected by chance (Krippendorff's D_e)",
    "raw_slope": "slope of score on length, in score units per `per` units of length",
    "raw_slope_ci_low": "lower CI bound of raw_slope",
    "raw_slope_ci_high": "upper CI bound of raw_slope",
    "per": "length units the raw slope refers to",
    # position consistency
    "accuracy_order0": "share of items whose first-order verdict equals the label",
    "accuracy_order1": "share of items whose second-order verdict equals the label",
    "accuracy": "mean of accuracy_order0 and accuracy_order1",
    "agreement": "share of items whose two verdicts (one per order) are equal",
    "kappa_order0": "Cohen's kappa of first-order verdict vs label",
    "kappa_order1": "Cohen's kappa of second-order verdict vs label",
    # span matching
    "recall": "recall (spans: character-level; entities: of the reference's entities)",
    "precision": "precision (spans: character-level; entities: of the answer's entities)",
    "f1": "harmonic mean of precision and recall (spans: of the averaged ones)",
    "n_items_recall": "items where recall is defined (gold has units of the class)",
    "n_items_precision": "items where precision is defined (prediction has units)",
    "n_items_both_empty": "items where neither side has a unit of the class",
    "n_gold_units": "gold units",
    "n_pred_units": "predicted units",
    "n_pairs": "one-to-one pairs of gold and predicted units",
    "gold_chars": "characters covered by gold units",
    "pred_chars": "characters covered by predicted units",
    "overlap_chars": "characters shared by paired units",
    "gold_unit": "gold unit id",
    "pred_unit": "predicted unit id",
    "pair_score": "pairing score (character-level F of the two units)",
    # power
    "effect": "true difference in mean score simulated",
    "effect_size_d": "effect divided by the sd of the analysed difference (design-specific)",
    "power_analytic": "power of the same test from the noncentral t distribution",
    "n_sim": "simulated data sets",
    # variance components
    "component": "variance component name",
    "variance": "estimated variance component (truncated at 0)",
    "variance_raw": "method-of-moments estimate before truncation (may be negative)",
    "share": "variance / total variance",
    # --- study tables: answers, calls and failures
    "ok": "True when the answer call returned a reply",
    "source": "where the row's numbers or labels come from: 'this run', a release, the "
    "simulated raters ('sim_raters'); published tables: the table or section copied",
    "stage": "step of the study whose calls the row counts: answer | score | pairwise",
    "model": "model whose calls the row counts (answer model at stage 'answer', else the judge)",
    "n_calls": "number of LLM calls",
    "n_failed": "calls (or runs, iterations) that failed or did not parse",
    "n_call_failed": "calls that returned no reply",
    "n_scores": "scores expected (one per row that should hold a score)",
    "n_scores_missing": "scores left NaN by failed or unparsed calls",
    "n_scored": "rows that hold a score",
    "metric": "name of the scoring method of the row: a lexical metric ('bleu', 'rougeL', ...) or "
    "'<protocol>/<judge>' / '<judge>' for LLM judges",
    "family": "kind of metric: 'lexical' or 'llm'",
    # S1 (seed 000): methods, conversations, checklist
    "conversation": "one judged conversation: '<item_id>|<answer_model>'",
    "pair": "the two methods correlated, '<method_x> ~ <method_y>'",
    "method_x": "first method (protocol) of a correlation pair",
    "method_y": "second method (protocol) of a correlation pair",
    "reading": "which grouping the consistency index and variance ratio use (seed 000 §4.3)",
    "method_label": "method and judge temperature as a plot label, e.g. 'holistic (T=0)'",
    "mean": "mean score",
    "sd": "standard deviation of the score",
    "rank": "rank of the answer model by mean score (1 = best) within its method and temperature",
    "criterion": "checklist criterion as shown: '<criterion_id> (weight) text'",
    "met_rate": "share of judgments in which the criterion was met",
    "judge_sd": "mean over conversations of the sd of the judges' met rates",
    "split_share": "share of conversations whose judges do not agree on the criterion",
    "n_conversations": "number of conversations",
    "judges_flagging": "judges that met a negative-weight item of the conversation",
    "flag_rate": "share of judgments that met a negative-weight item",
    "flagged": "True when enough judges met a negative-weight item",
    "tripped": "negative-weight items met, with how often",
    "n_judgments": "number of judgments",
    "holistic_mean": "mean holistic score of the conversation",
    "holistic_simple_mean": "mean holistic_simple score of the conversation",
    "checklist_mean": "mean checklist total of the conversation",
    # S2 and X2 (seeds 001, HANNA / PandaLM releases): metrics against people
    "human": "mean human score of the answer (over raters)",
    "pooled": "correlation over all rows (level 'pooled')",
    "n_texts": "number of answer texts",
    "n_unique_words": "number of distinct words over the texts",
    "mean_length_chars": "mean answer length in characters",
    "mean_length_tokens": "mean answer length in tokens",
    "grouping": "column the correlation is computed within (empty when pooled)",
    "scope": "readable name of the correlation's level and group",
    "measure_label": "readable name of the row's measure for plots, e.g. 'alpha (interval)'",
    "majority": "majority preference of the raters ('A' | 'B' | 'tie')",
    "n_votes": "votes for the majority label (0 for a tie imposed by a split)",
    "n_verdicts": "judge verdicts used",
    "score_a": "score of response_a",
    "score_b": "score of response_b",
    "preference": "preferred response from the two scores: 'A' | 'B' | 'tie'",
    "response_a": "pairwise: first response",
    "response_b": "pairwise: second response",
    # S3 (seed 002, HIVMedQA)
    "answer_role": "quality-control role of the answer model: model | lower_bound "
    "(the weak bound) | upper_bound (the rephrased references)",
    "bias_type": "cognitive bias cue of the question (recency, frequency, status_quo; 'all' pooled)",
    "pairing": "how the two conditions' scores are paired",
    "supervision": "'supervised' (reference shown to the judge) or 'unsupervised'",
    "n_iterations": "number of answer iterations (answer samples) averaged",
    "n_reference": "entities in the reference answer",
    "n_answer": "entities in the answer",
    "paper_model": "a model as the published table names it (its row label)",
    "display_name": "the same model as the release importer names it",
    "mean_category3": "mean score on category-3 questions (without the cue)",
    "mean_category4": "mean score on category-4 questions (with the cue)",
    "mean_supervised": "mean supervised score",
    "mean_unsupervised": "mean unsupervised score",
    # S4 (seed 003): report rubric
    "pipeline_version": "version of the report-writing pipeline that produced the report",
    "track": "research track of the report",
    "date": "date of the report (ISO 8601)",
    "prompt": "readable name of the mitigation condition (prompt label)",
    "comparison": "readable name of the compared pair: '<judge_model>: <condition>'",
    "n_a": "observations of a",
    "n_b": "observations of b",
    "hedges_g": "Hedges' g: standardised mean difference with small-sample correction",
    "provisional": "True when a group has fewer observations than the seed requires",
    "target": "power wanted",
    "power": "simulated power at n_items (NaN when no n tried reaches the target)",
    "largest_n_tried": "largest n_items tried",
    "power_at_largest_n": "simulated power at the largest n_items tried",
    # S5 (seed 004): gist/detail spans
    "split": "who split the reference into gist/detail units: 'human' (units given) or 'llm'",
    "answer_id": "one judged answer: '<item_id>|<answer_model>|<answer_sample>'",
    "annotator": "who marked the units: 'human' (the gold annotation), a judge model of this "
    "run, or the published model; judge tables: the person who gave the row's verdict or score",
    "rate": "flagged units of the class / reference units of its role, averaged over answers",
    "found": "True when the flagged text was located in the answer or reference",
    "n_answers": "number of answers",
    "n_answers_failed": "answers whose detection run failed",
    "n_runs": "detection runs (answer x split x judge x trial)",
    "n_runs_failed": "detection runs that failed or did not parse",
    "n_flagged": "flagged texts",
    "n_flagged_unlocated": "flagged texts that could not be located (counted as wrong)",
    "n_pred_unlocated": "predicted units that could not be located",
    "n_classes": "number of the four classes where neither side flags anything",
    "f1_ci_low": "lower bound of the bootstrap CI of f1",
    "f1_ci_high": "upper bound of the bootstrap CI of f1",
    # X1: bias probes
    "operator": "workbench.perturb operator probed (the `perturbation` of the judged rows)",
    "probe_kind": "kind of probe: baseline | answer | question | pairwise",
    "operator_params": "keyword arguments the operator was applied with (repr)",
    "strategy": "LLMBar prompting strategy of the judge ('pairwise' for this run's probe)",
    "subset": "LLMBar subset ('all': pooled)",
    "flip_rate": "share of items whose verdict changes when the two answers swap places",
    "agreement_ci_low": "lower bound of the Wilson CI of agreement",
    "agreement_ci_high": "upper bound of the Wilson CI of agreement",
    "judge_name": "JudgeBench: the judge's prompting scheme or kind (e.g. arena_hard, reward_model)",
    "response_model": "JudgeBench: model that wrote both responses of the pairs",
    "n_correct": "pairs judged correct (JudgeBench: the two games' votes sum to more than 0)",
    "n_inconsistent": "pairs whose verdicts differ between the two presentation orders",
    "pct_correct": "100 × n_correct / n: JudgeBench accuracy in percent, as the paper reports it",
    # S3: the best-model tests under both pairings (pairing_comparison)
    "n_question_iteration": "n of the test with subject question x iteration",
    "estimate_question_iteration": "estimate of the test with subject question x iteration",
    "p_adjusted_question_iteration": "p_adjusted of the test with subject question x iteration",
    "significant_question_iteration": "significant, subject question x iteration",
    "n_question_mean": "n of the test on question means (iterations averaged per question)",
    "estimate_question_mean": "estimate of the test on question means",
    "p_adjusted_question_mean": "p_adjusted of the test on question means",
    "significant_question_mean": "significant, test on question means",
    "differs": "True where the two pairings disagree on significance",
    # X3: judge qualification (workbench.qualify)
    "who": "the judge, rater, jury or summary a row is about (its label in plots)",
    "rater_source": "where the human labels a row compares the judges with come from: "
    "'sim_raters' (the simulated raters of workbench.studies.raters) or a release",
    "n_used": "items a row's estimate rests on (the scorer's label and another rater's present)",
    "n_judge_missing": "alternative annotator test: items without the judge's label, each "
    "counted as a loss for the judge",
    "omega": "alternative annotator test: winning rate, the share of held-out raters the "
    "judge beats (BY-FDR); the judge passes when >= 0.5",
    "passed": "alternative annotator test: True when omega >= 0.5",
    "advantage": "alternative annotator test: mean of rho_f over the raters (average advantage "
    "probability)",
    "rho_f": "alternative annotator test: share of items where the judge aligns with the other "
    "raters at least as well as the held-out rater",
    "rho_h": "alternative annotator test: share of items where the held-out rater aligns at least "
    "as well as the judge",
    "epsilon": "alternative annotator test: cost-benefit allowance of the null hypothesis",
    "fdr": "false discovery rate level of the Benjamini-Yekutieli procedure",
    "width": "width of a confidence interval (ci_high - ci_low; simulations: the mean width)",
    "n_labeled": "number of items with a human label (PPI: the labelled subset)",
    "n_unlabeled": "number of items with only the judge's label (PPI)",
    "truth": "the quantity a simulation's intervals should cover (e.g. the full human mean)",
    "coverage": "PPI simulation: share of intervals that hold the truth; selective judging: "
    "share of held-out items accepted (not abstained on)",
    "n_rep": "number of simulated repetitions",
    "mae": "mean absolute error against the human score",
    "mean_diff": "mean paired difference (a minus b; juries: |jury error| - |best member error|)",
    "term": "model term: 'strength' (a system's Bradley-Terry strength, system in `a`), "
    "'position' (shown first) or a covariate name",
    "win_rate": "share of comparisons the system won against the baseline (ties left out)",
    "length_coef": "length-controlled win rate: coefficient of tanh(length difference / sd)",
    "policy": "selective judging: 'selective' (abstain below the threshold) or 'all items'",
    "threshold": "confidence threshold: items with confidence >= it are accepted (inf: none)",
    "delta": "selective judging: allowed probability that the risk guarantee fails",
    "guarantee_met": "selective judging: agreement on the accepted held-out items >= 1 - alpha",
    "confidence": "the judge's confidence in its verdict (share of the ensemble's verdicts equal "
    "to it)",
    "correct": "True when the judge's verdict equals the human label",
    # judge tables brought by the user (workbench.datasets._long, workbench.qualify._tables)
    "judge": "judge tables: the judge or automatic metric that gave the row's verdict or score",
    "system": "judge tables: the system whose output was scored",
    "system_a": "pairwise judge tables: the system that wrote response A",
    "system_b": "pairwise judge tables: the system that wrote response B",
    "length_a": "pairwise judge tables: length of response A",
    "length_b": "pairwise judge tables: length of response B",
    "group": "judge tables: a group of items (scenario, category ...); 'all' on overall rows",
    "source_file": "judge tables: the file the row was read from",
    "source_line": "judge tables: the row's 1-based line in its file (a CSV's header is line 1) "
    "or 1-based row of a frame",
    "accuracy_both": "share of items whose verdicts in both orders equal the label",
    "n_pilot": "PPI: units with both a judge and a human label, resampled by the simulation",
    "section": "qualification report: the analysis a row is about",
    "reason": "qualification report: why an analysis was not computed for this table",
    "calibration": "True for items of the calibration split, False for held-out items",
    "criterion_text": "S1: the text of a rubric criterion (weakness map rows)",
    # X4: people's labels (workbench.labels) and active labelling
    "label_id": "X4: id of one stored label (rows are never updated; a correction supersedes)",
    "value": "X4: the label a person gave (a score, or the preferred side of a pair)",
    "choice": "X4: a pairwise label as shown on screen (left, right or tie)",
    "shown_order": "X4: the order in which the two answers of a pair were shown",
    "rationale": "X4: the annotator's optional free-text reason",
    "shown_at": "X4: UTC time the item was shown",
    "given_at": "X4: UTC time the label was committed",
    "seconds": "X4: seconds between showing an item and its label",
    "package_version": "X4: workbench version that stored the label",
    "supersedes": "X4: the label_id a correction replaces (empty for a first label)",
    "session": "X4: id of the labelling session (one kernel or process)",
    "guideline": "X4: version (short hash) of the guideline a label was given under",
    "sampling_prob": "X4: probability with which the active sampler drew the item",
    "wald_low": "X4: lower bound of the fixed-n (Wald) interval at the same step",
    "wald_high": "X4: upper bound of the fixed-n (Wald) interval at the same step",
    "n_labels": "X4: number of human labels used so far",
    "lam": "X4: PPI++ power-tuning parameter lambda",
    "item": "X4: the item drawn at this step",
    "prob": "X4: the drawing probability of that item",
    "annotator_a": "X4: first annotator of a pair",
    "annotator_b": "X4: second annotator of a pair",
    "n_studies": "X4 simulation: simulated studies per scenario",
    "budget": "X4 simulation: human labels per simulated study",
    "coverage_anytime": "X4 simulation: share of studies whose interval held at every look",
    "coverage_anytime_se": "X4 simulation: Monte Carlo standard error of coverage_anytime",
    "coverage_se": "X4 simulation: Monte Carlo standard error of coverage",
    "wald_coverage": "X4 simulation: coverage of the fixed-n interval (not valid under peeking)",
    "wald_width": "X4 simulation: mean width of the fixed-n interval",
    "distinct_items": "X4 simulation: mean number of distinct items labelled",
    "width_ratio": "X4 simulation: mean interval width over the uniform design's",
    "width_ratio_se": "X4 simulation: Monte Carlo standard error of width_ratio (paired)",
    "quantity": "X4 simulation: the estimand (mean score, win rate, judge accuracy)",
    "scenario": "X4 simulation: name of the generative scenario",
    "informative": "X4 simulation: whether the judge's uncertainty tracks its error",
    "hard_share": "X4 simulation: share of hard items (large judge error)",
    "annotator_noise": "X4 simulation: annotators' noise level (low or high)",
    "pool": "X4 simulation: the item pool a row belongs to",
    "latent": "X4 simulation: the item's expected human label (the truth)",
    "prediction": "X4: the judge's prediction for the item",
    "uncertainty": "X4: the judge's uncertainty about the item (scaled to [0, 1])",
    "format": "X4: interchange format of a round trip (csv, label-studio)",
    "n_imported": "X4: labels read back in a round trip",
    "identical": "X4: whether the round trip gave back every label unchanged",
}

#: Core columns of a judging results frame, in order (DESIGN §4, fixed).
RESULT_CORE: tuple[str, ...] = (
    "study",
    "item_id",
    "answer_model",
    "answer_sample",
    "judge_model",
    "protocol",
    "template",
    "dimension",
    "trial",
    "temperature",
    "perturbation",
    "score",
    "verdict",
    "parse_ok",
    "explanation",
    "cache_key",
    "backend",
    "cost_usd",
    "latency_s",
)

#: Extra columns of a judging results frame, in order, after the core ones.
RESULT_EXTRA: tuple[str, ...] = (
    "source_item",
    "perturbation_params",
    "lang",
    "template_version",
    "use_reference",
    "system_prompt",
    "mitigation",
    "scale_low",
    "scale_high",
    "criterion_id",
    "weight",
    "negative_flag",
    "geval_mode",
    "geval_n",
    "geval_n_parsed",
    "order",
    "verdict_shown",
    "model_a",
    "model_b",
    "inner_protocol",
    "n_units",
    "prep_model",
    "prep_key",
    "prep_text",
    "prep_cost_usd",
    "cached",
    "raw_reply",
    "n_candidates",
    "error",
)

#: Output columns of ``workbench.stats``, in the order they appear in returned frames.
STATS_ORDER: tuple[str, ...] = (
    "measure", "method", "level", "unit", "within", "replicate", "a", "b", "condition",
    "baseline", "kind", "class", "average", "weights", "value_level", "design", "test",
    "n", "n_missing", "n_skipped", "n_groups", "n_units", "n_raters", "n_categories",
    "n_unparsed", "n_incomplete", "n_items", "n_trials", "n_judges",
    "estimate", "se", "ci_low", "ci_high", "ci_level", "ci_method", "n_boot", "n_boot_failed",
    "test_statistic", "df", "df_num", "df_den", "p_value", "p_value_wilcoxon", "p_adjusted",
    "padjust", "alpha", "significant",
    "cohen_dz", "rank_biserial", "mean_a", "mean_b", "mean_baseline", "mean_condition",
    "numerator", "denominator", "p_observed", "p_expected", "d_observed", "d_expected",
    "raw_slope", "raw_slope_ci_low", "raw_slope_ci_high", "per",
    "accuracy_order0", "accuracy_order1", "accuracy", "accuracy_both", "agreement", "kappa_order0",
    "kappa_order1",
    "recall", "precision", "f1", "n_items_recall", "n_items_precision", "n_items_both_empty",
    "n_gold_units", "n_pred_units", "n_pairs", "gold_chars", "pred_chars", "overlap_chars",
    "gold_unit", "pred_unit", "pair_score",
    "effect", "effect_size_d", "power_analytic", "n_sim",
    "component", "variance", "variance_raw", "share",
)


def docs(names: Iterable[str]) -> dict[str, str]:
    """Name -> meaning for ``names``, in their order; a name not declared is a ``KeyError``.

    Examples
    --------
    >>> docs(["n", "ci_low"])["n"]
    'number of observations used (rows, pairs or items; see each function)'
    """
    return {name: COLUMNS[name] for name in names}


def undeclared(names: Iterable[str]) -> list[str]:
    """The names (e.g. a frame's columns) that are not in :data:`COLUMNS`, in order."""
    return [name for name in names if name not in COLUMNS]
