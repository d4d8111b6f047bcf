"""The sim registry's indexed lookup (``registry._find``) returns exactly what the plain
scan over every registered item (``registry._scan``) returns: the committed study numbers
depend on every sim reply staying byte-identical."""

from __future__ import annotations

import random

import pytest
from conftest import only_sim_items

from workbench.sim import clear_registry, register_items
from workbench.sim import registry as sim_registry


@pytest.fixture
def bundled():
    with only_sim_items():
        yield [item for _, item in sim_registry._by_length]


def _variants(items, rng):
    """Exact, decorated, spliced, truncated and unknown questions; references too."""
    out: list[tuple[str | None, str | None]] = [(None, None), ("", ""), ("   ", None)]
    for item in items:
        q, ref, words = item.question, item.reference, item.question.split()
        out += [
            (q, None), (q.upper(), None), ("  " + q + "  ", None),
            ("Background first. " + q + " Answer briefly.", None),
            (q[: len(q) // 2], None), (q[len(q) // 3 :], None), (q[:8], None), (q[:7], None),
            (None, ref), (None, "  " + ref + "\n"), ("unknown question", ref),
            (q[: len(q) // 2], ref), ("x" + q[1:], None), (q.replace(" ", "  "), None),
        ]
        if len(words) > 4:
            mid = len(words) // 2
            out.append((" ".join([*words[:mid], "Most people say otherwise.", *words[mid:]]), None))
            out.append((" ".join(words[:mid] + words[mid + 1 :]), None))
            out.append((" ".join(rng.sample(words, len(words))), None))
        other = rng.choice(items)
        out.append((q[: len(q) // 2] + other.question[len(other.question) // 2 :], None))
        out.append((q + " " + other.question, None))
        out.append((other.question + " " + q, None))
    for i in range(200):
        out.append((f"scale question {i}: what is {i} + {i}?", None))
        out.append((f"<question>\nscale question {i}: what is {i} + {i}?\n</question>", str(2 * i)))
    # random bags of the registry's own words (partial and full token overlaps)
    pool = [w for item in items for w in item.question.split()]
    for _ in range(500):
        out.append((" ".join(rng.choices(pool, k=rng.randint(1, 40))), None))
    # random character windows (CJK bigram overlaps, substrings across items)
    text = "".join(item.question for item in items)
    for _ in range(500):
        start = rng.randrange(len(text))
        out.append((text[start : start + rng.randint(1, 120)], None))
    return out


def test_index_matches_scan_on_bundled_items(bundled):
    assert len(bundled) > 50
    cases = _variants(bundled, random.Random(34))
    found = 0
    for question, reference in cases:
        expected = sim_registry._scan(question, reference)
        assert sim_registry._find(question, reference) is expected, (question, reference)
        found += expected is not None
    assert 0 < found < len(cases)  # both hits and misses were compared


def test_index_matches_scan_on_ties_and_nested_questions():
    """Questions sharing a prefix, nested in each other, equal lengths, equal references."""
    state = sim_registry.snapshot()
    try:
        clear_registry()
        register_items([
            {"question": "What is the capital city of France?", "reference": "Paris."},
            {"question": "What is the capital city of Spain?", "reference": "Madrid."},
            {"question": "capital city of France", "reference": "Paris."},
            {"question": "What is the capital", "reference": "A city."},
            {"question": "short", "reference": "Tiny."},
            {"question": "alpha beta gamma delta epsilon", "reference": "Greek."},
            {"question": "alpha beta gamma delta zeta", "reference": "Greek 2."},
            {"question": "日本の首都はどこですか？", "reference": "東京です。"},
        ])
        cases = [
            ("Tell me: what is the capital city of France? And of Spain?", None),
            ("Tell me: what is the capital city of Spain? And of France?", None),
            ("what is the capital", None), ("the capital city of France", None),
            ("short", None), ("a short question", None),
            ("alpha beta gamma delta", None), ("alpha beta gamma delta epsilon zeta", None),
            ("zeta delta gamma beta alpha", None), ("epsilon beta alpha gamma delta!", None),
            ("前置き。日本の首都はどこですか？", None), ("日本の首都は", None),
            (None, "Paris."), (None, "Greek 2."), (None, "nothing"),
        ]
        for question, reference in cases:
            assert sim_registry._find(question, reference) is sim_registry._scan(question, reference)
        # the index follows changes of the registry
        register_items([{"question": "What is the capital city of Italy?", "reference": "Rome."}])
        q = "Say what is the capital city of Italy? please"
        assert sim_registry._find(q, None) is sim_registry._scan(q, None)
        assert sim_registry._find(q, None).reference == "Rome."
    finally:
        sim_registry.restore(state)


@pytest.mark.parametrize("shortest", [8, 9, 12, 20])
def test_index_matches_scan_at_every_offset_and_stride(shortest):
    """Registries whose shortest question sets the window stride (1, 2, 5, 8 at most): a
    registered question embedded at every offset of a text is still found first."""
    rng = random.Random(shortest)
    words = ["ab", "cd", "aaaa", "橋梁", "x1", "of", "the", "bridge", "load", "aaaaaaaa"]
    questions = {"a" * 30, ("ab" * 12)[:shortest]}
    while len(questions) < 40:
        q = " ".join(rng.choices(words, k=rng.randint(1, 9)))
        if len(q) >= shortest:
            questions.add(q)
    state = sim_registry.snapshot()
    try:
        clear_registry()
        register_items([{"question": q, "reference": f"r{i}"} for i, q in enumerate(questions)])
        assert sim_registry._current_index().stride == min(shortest - 7, 8)
        compared = 0
        for q in sorted(questions):
            for offset in range(14):
                text = " ".join(rng.choices(words, k=6))[:offset] + q + rng.choice(["", " x", "?"])
                for variant in (text, text[1:], text[:-1]):
                    expected = sim_registry._scan(variant, None)
                    assert sim_registry._find(variant, None) is expected, variant
                    compared += expected is not None
        assert compared > 1000
    finally:
        sim_registry.restore(state)
