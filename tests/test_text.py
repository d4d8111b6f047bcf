"""Tests of workbench.text: the shared text rules."""

from __future__ import annotations

import decimal
import random
import re
import sys

import numpy as np
import pandas as pd
import pytest

from workbench.text import (
    DATA_TAGS,
    clause_spans,
    detect_lang,
    is_missing,
    parse_list,
    sentence_spans,
    split_sentences,
)


def test_detect_lang_kana_ideographs_latin():
    assert detect_lang("橋梁の種類") == "ja"
    assert detect_lang("カテーテル") == "ja"
    assert detect_lang("什么是艾滋病") == "zh"
    assert detect_lang("\u3400\uf900") == "zh"  # CJK extension A and compatibility ideographs
    assert detect_lang("What is HIV?") == "en"
    assert detect_lang("") == "en"


def test_detect_lang_head_limits_what_is_read():
    text = "a" * 2000 + "です"
    assert detect_lang(text) == "ja"
    assert detect_lang(text, head=2000) == "en"
    assert detect_lang(text, head=2002) == "ja"


@pytest.mark.parametrize(
    "value", [None, float("nan"), np.nan, np.float32("nan"), pd.NA, pd.NaT, decimal.Decimal("NaN")]
)
def test_is_missing_true(value):
    assert is_missing(value)
    assert is_missing(value, blank=True)


@pytest.mark.parametrize(
    "value", ["x", 0, 1.5, False, [], [np.nan], (), {}, np.array([np.nan]), np.int64(0), pd.Timestamp(0)]
)
def test_is_missing_false(value):
    assert not is_missing(value)
    assert not is_missing(value, blank=True)


def test_is_missing_blank_text_only_with_blank():
    for text in ("", "  ", "\n\t"):
        assert not is_missing(text)
        assert is_missing(text, blank=True)


def test_parse_list_accepts_lists_and_json_lists():
    assert parse_list([1, 2], where="w", field="f") == [1, 2]
    assert parse_list((1,), where="w", field="f") == [1]
    assert parse_list('[{"text": "a"}]', where="w", field="f") == [{"text": "a"}]


@pytest.mark.parametrize("value", ["not json", '{"a": 1}', 3, None])
def test_parse_list_names_the_cell(value):
    with pytest.raises(ValueError, match=r"row 3: field 'rubric' is not a list"):
        parse_list(value, where="row 3", field="rubric")


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("HIV is a virus. It is treatable!  Really?\n\nYes", "en"),
        ("Dr. Ito said \"stop.\" Then he left.", "en"),
        ("桁橋がある。吊橋もある！\n斜張橋は？", "ja"),
        ("", "en"),
        ("no punctuation", "ja"),
    ],
)
def test_joinable_pieces_concatenate_to_the_text(text, lang):
    pieces = split_sentences(text, lang)
    assert "".join(pieces) == text
    assert all(pieces)


def test_joinable_rule_cuts_after_every_period():
    assert split_sentences("Dr. Ito came.", "en") == ["Dr. ", "Ito came."]
    assert split_sentences("A。B。", "ja") == ["A。", "B。"]


def test_reading_rule_trims_and_keeps_abbreviations():
    text = "1) Dr. Ito sees patients, e.g. adults.\n- 治療は有効です；副作用もある。\n..."
    assert split_sentences(text, joinable=False) == [
        "Dr. Ito sees patients, e.g. adults.",
        "- 治療は有効です；",  # only a list marker that opens the text is dropped
        "副作用もある。",
    ]
    for (s, e), sentence in zip(sentence_spans(text), split_sentences(text, joinable=False), strict=True):
        assert text[s:e] == sentence


def test_clause_spans_split_long_sentences_only():
    short = "It works, and fast."
    assert [short[s:e] for s, e in clause_spans(short)] == [short]
    ja = "抗レトロウイルス療法は毎日の服薬が必要であり、飲み忘れると耐性ができるため、医師の指示に従うことが大切です。"
    assert [ja[s:e] for s, e in clause_spans(ja)] == [
        "抗レトロウイルス療法は毎日の服薬が必要であり、",
        "飲み忘れると耐性ができるため、",
        "医師の指示に従うことが大切です。",
    ]


def test_reading_rule_regexes_match_their_plain_forms():
    """The sentence boundary regex (rewritten to start with one character class, for speed)
    finds exactly what its plain form finds, and ``_ALNUM`` is ``str.isalnum``."""
    from workbench import text

    plain = re.compile(r"[。．！？!?；;]+[」』）)\]]*|\n+|\.(?=\s|$)[」』）)\]\"']*")
    alphabet = "。．！？!?；;\n.」』）)]\"' \t\rab1あ漢\u3000\x85\u2028"
    rng = random.Random(0)
    for _ in range(20000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        spans = [m.span() for m in text._BOUNDARY.finditer(s)]
        assert spans == [m.span() for m in plain.finditer(s)], s
    chars = (chr(c) for c in range(sys.maxunicode + 1))
    assert all(c.isalnum() == bool(text._ALNUM.match(c)) for c in chars)


def test_data_tags_sorted_and_unique():
    assert list(DATA_TAGS) == sorted(set(DATA_TAGS))
    assert {"question", "reference", "response", "response_a", "rubric_item"} <= set(DATA_TAGS)


def test_text_imports_no_other_workbench_module():
    import ast
    import inspect

    import workbench.text

    tree = ast.parse(inspect.getsource(workbench.text))
    names = [
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert not [n for n in names if n.startswith("workbench")]
