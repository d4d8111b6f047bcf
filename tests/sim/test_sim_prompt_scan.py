"""The prompt reader's fast scan for data blocks (``_prompt._line_blocks``) finds exactly
the matches of the plain block regex run over every character."""

from __future__ import annotations

import random
import re

from workbench.sim import _prompt
from workbench.text import DATA_TAGS

TAGS = ["question", "response", "response_a", "text", "foo"]
_ALL = "|".join(sorted(DATA_TAGS, key=len, reverse=True))
PLAIN = re.compile(
    rf"^[ \t]*<(?P<tag>{_ALL})>[ \t]*\r?\n(?P<body>.*?)^[ \t]*</(?P=tag)>[ \t]*$", re.M | re.S
)


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
                        for m in PLAIN.finditer(text)], text
        found += len(fast)
    assert found > 300
