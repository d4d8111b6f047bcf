"""The prompt reader's fast scan for data blocks (``_prompt._line_blocks``) finds exactly
the matches of the block regex run over every character (``_BLOCK_LINES.finditer``)."""

from __future__ import annotations

import random

from workbench.sim import _prompt

TAGS = ["question", "response", "response_a", "text", "foo"]


def _line(rng: random.Random, tags: list[str]) -> str:
    ws, tag, r = rng.choice(["", " ", "\t", "  ", "x "]), rng.choice(tags), rng.random()
    if r < 0.3:
        return ws + f"<{tag}>" + rng.choice(["", " ", "x", f"</{tag}>", "<question>"])
    if r < 0.6:
        return ws + f"</{tag}>" + rng.choice(["", " ", "\t", "x"])
    return rng.choice(["body", "", "<", "a <question> b", "漢字", " </question> x"])


def test_line_blocks_match_the_regex_scan():
    rng = random.Random(5)
    found = 0
    for _ in range(20000):
        tags = rng.sample(TAGS, 2)
        text = "".join(_line(rng, tags) + rng.choice(["\n", "\n", "\r\n", ""])
                       for _ in range(rng.randint(0, 10)))
        fast = [(m.span(), m.group("tag", "body")) for m in _prompt._line_blocks(text)]
        assert fast == [(m.span(), m.group("tag", "body"))
                        for m in _prompt._BLOCK_LINES.finditer(text)], text
        found += len(fast)
    assert found > 300
