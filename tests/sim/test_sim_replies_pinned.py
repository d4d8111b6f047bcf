"""Every simulated reply stays byte-identical: committed study numbers and users' cache
keys depend on them. Each group of calls below hashes its replies (text, log-probabilities,
token counts, extra) to a digest pinned from the simulator's code as it was before its
speed-ups; a change of any reply in a group changes its digest."""

from __future__ import annotations

import hashlib

import pytest
from conftest import only_sim_items

from workbench.sim import profiles, respond

ITEMS = [
    {"item_id": "p-en-1", "lang": "en", "wrong_answer": "Pneumocystis jirovecii",
     "question": "A 40-year-old man with HIV has fever, cough and a right lower lobe "
                 "infiltrate. His CD4 count is 540. What is the most likely pathogen?",
     "reference": "The most likely pathogen is Streptococcus pneumoniae. Bacterial pneumonia "
                  "occurs in people with HIV at any CD4 count. Empiric antibiotics should cover "
                  "typical and atypical organisms. Pneumococcal vaccination is recommended."},
    {"item_id": "p-en-2", "lang": "en", "wrong_answer": "only when symptoms appear",
     "question": "How often should antiretroviral therapy be taken?",
     "reference": "Antiretroviral therapy is taken every day, usually once daily; missing "
                  "doses allows resistance to develop."},
    {"item_id": "p-ja-1", "lang": "ja", "wrong_answer": "吊橋",
     "question": "橋梁の主な形式にはどのようなものがありますか。",
     "reference": "主な形式には桁橋、トラス橋、アーチ橋、吊橋、斜張橋がある。"
                  "支間長や地形によって適した形式が異なる。点検では部材の損傷を確認する。"},
    {"item_id": "p-ja-2", "lang": "ja", "wrong_answer": "",
     "question": "減価償却とは何ですか？",
     "reference": "減価償却は、固定資産の取得原価を耐用年数にわたって費用配分する手続である。"},
]
OTHER = ["什么是艾滋病？请说明传播途径。", "What is 2+2?", "Tell me about bridges.", ""]
FORMATS = [
    "",
    "<output_format>\nScore only: integer 1-5\n</output_format>",
    "<output_format>\nScore only: number 0-10\n</output_format>",
    '<output_format>\nReturn JSON only: {"score": "integer 1-10", "reason": "string", '
    '"ok": "boolean", "tags": "list", "pick": "one of A | B | C", "x": "number 0-1"}\n'
    "</output_format>",
    "<output_format>\nVerdict: [[A]], [[B]] or [[C]] for a tie\n</output_format>",
    "<output_format>\nText only: summary\n</output_format>",
    "<output_format>\nText only: paraphrase\n</output_format>",
    "<output_format>\nText only: entities\n</output_format>",
    "Return JSON only: {}",
]
RULES = "<judging_rules>\n- length: ignore the length\n- position: either order\n</judging_rules>\n"
PARAMS = [{}, {"temperature": 1.0, "sample": 2}, {"temperature": 0.3, "sample": 1,
          "logprobs": True, "top_logprobs": 3, "max_tokens": 12},
          {"logprobs": True, "top_logprobs": None, "max_tokens": 0}]


def _judging(profile_i: int) -> list[tuple[str, list[dict], dict]]:
    out = []
    questions = [i["question"] for i in ITEMS] + OTHER
    responses = [i["reference"] for i in ITEMS] + ["Probably a virus.", "橋は大事です。"]
    k = profile_i
    for q in questions:
        for fmt in FORMATS:
            k += 1
            resp = responses[k % len(responses)]
            half = resp[: len(resp) // 2]
            body = (f"<question>\n{q}\n</question>\n<reference>\n{resp}\n</reference>\n"
                    f"<response>\n{half}\n</response>\n<response_a>\n{resp}\n</response_a>\n"
                    f"<response_b>\n{half}\n</response_b>\n<author>\nclaude\n</author>\n")
            messages = [{"role": "system", "content": "You are a careful judge."},
                        {"role": "user", "content": (RULES if k % 3 == 0 else "") + body + fmt}]
            out.append((profiles()[k % len(profiles())], messages, PARAMS[k % len(PARAMS)]))
    return out


def _answering() -> list[tuple[str, list[dict], dict]]:
    out = []
    for n, name in enumerate(profiles()):
        for q in [i["question"] for i in ITEMS] + OTHER:
            for params in PARAMS:
                out.append((name, [{"role": "user", "content": q}], params))
            out.append((name, [{"role": "user", "content": f"Experts say {ITEMS[n % 4]['wrong_answer']}."
                                                             f" <question>\n{q}\n</question>"}],
                        {"temperature": 0.7, "sample": n}))
    return out


def _odd() -> list[tuple[str, list[dict], dict]]:
    messages = [
        [{"role": "user", "content": ""}],
        [{"role": "user", "content": None}],
        [{"role": "user", "content": [{"type": "text", "text": "What is HIV?"}, {"type": "x"}]}],
        [{"role": "system", "content": "s"}, {"role": "assistant", "content": "<question>\nq\n"
                                                                             "</question>"},
         {"role": "user", "content": "橋梁の種類を教えてください。"}],
        [{"role": "user", "content": "  <question>  \r\nWhat?\r\n  </question>  \r\n"
                                     "<response>inline</response>\nScore only: integer 0-3"}],
        [{"role": "user", "content": "<question>\nq\n</question>\n" + FORMATS[1] + "\n</question>"}],
        [{"role": "user", "content": "Ｆｕｌｌｗｉｄｔｈ　ｔｅｘｔ？ Dr. Ito, e.g. here. 1. x"}],
        [{"role": "user", "content": ("HIV is a virus. " * 800) + FORMATS[5]}],
        [{"role": "user", "content": "<question>\n" + "長い文章です。" * 900 + "\n</question>\n"
                                     + FORMATS[3]}],
    ]
    system = {"role": "system", "content": "You are a strict grader. Return JSON only."}
    messages += [[system, {"role": "user", "content": f"<question>\nscale question {i}: what is "
                           f"{i} + {i}?\n</question>\n<response>\n{2 * i}\n</response>"}]
                 for i in range(40)]
    return [(name, m, p) for m in messages for name in ("judge-a", "judge-f", "answer-mid")
            for p in PARAMS]


def _digest(calls: list[tuple[str, list[dict], dict]]) -> str:
    h = hashlib.sha256()
    for profile, messages, params in calls:
        r = respond(profile, messages, **params)
        h.update(repr((r.text, r.logprobs, r.prompt_tokens, r.completion_tokens,
                       sorted(r.extra.items()))).encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]


PINNED = {
    "judging": "0e0d8a6b2741fa51",
    "answering": "47b04c0aa444ae01",
    "odd": "965547dbed74cb5a",
}


@pytest.fixture
def items():
    with only_sim_items(ITEMS):
        yield


@pytest.mark.parametrize("group", sorted(PINNED))
def test_replies_match_their_pinned_digest(items, group):
    calls = {"judging": lambda: [c for i in range(3) for c in _judging(i)],
             "answering": _answering, "odd": _odd}[group]()
    assert len(calls) > 100
    assert _digest(calls) == PINNED[group]
    assert _digest(calls) == PINNED[group]  # again, from warm caches
