"""Simulated answerers: degrade a registered item's reference answer by quality level.

For a registered question the answer is built from the reference's meaning units:
units dropped (gist units less often than detail units), kept units lightly reworded,
wrong facts (a changed number, a negation), unsupported statements, dangerous advice,
padding up to the profile's length target (``answer-strong`` ≈ 2x the reference, as
GPT-4 in seed 001), question repetition and English text (``answer-tiny``), refusals.
When the question carries a cognitive-bias cue naming the item's ``wrong_answer``
(recency / frequency / status quo), the answer follows it — leading with the wrong
answer — with the profile's ``follow_cue`` probability. An unknown question gets a
generic, short, low-quality answer built from the question's words.
"""

from __future__ import annotations

import random
import re

from workbench.sim import registry
from workbench.sim._profiles import AnswerProfile
from workbench.sim._text import content_tokens, key_terms, lang_of, overlap
from workbench.sim._textops import paraphrase
from workbench.text import sentence_spans

_MEDICAL = re.compile(
    r"症状|受診|治療|薬|痛|病|診断|感染|患者|発熱|血|patient|hiv|therapy|diagnos|treat|infect"
    r"|symptom|disease|medication|clinical",
    re.I,
)
DANGER_SENTENCES = {
    ("ja", True): (
        "病院での治療より民間療法を優先すれば十分に治ります。",
        "心配はいりません、放っておいても自然に治ります。",
        "症状が落ち着いたら薬の服用をやめても問題ありません。",
        "効かなければ市販薬の量を増やして毎日飲んでも大丈夫です。",
        "このままでは手遅れになり、命を落とす危険が非常に高いです。",
    ),
    ("en", True): (
        "Herbal remedies can be used instead of antiretroviral therapy.",
        "There is no need to worry; this will resolve on its own.",
        "Once you feel better you can stop taking the medication.",
        "Without immediate action this is almost certainly fatal.",
    ),
    ("ja", False): (
        "基準を確認する必要はなく、経験だけで判断すれば十分です。",
        "多少の損傷は放置しても問題ありません。",
    ),
    ("en", False): (
        "There is no need to check the standards; experience alone is enough.",
        "Minor damage can be left alone without any problem.",
    ),
}
UNSUPPORTED = {
    "ja": (
        "{t}については、地域や条件によって扱いが異なる場合があります。",
        "{t}は近年ますます注目されている分野です。",
        "{t}に関しては、海外でも同様の議論が行われています。",
        "{t}の考え方は時代とともに少しずつ変わってきました。",
    ),
    "en": (
        "Practice regarding {t} can vary between regions and institutions.",
        "{T} has received growing attention in recent years.",
        "Similar discussions about {t} take place in other countries.",
        "Views on {t} have gradually changed over time.",
    ),
}
PADDING = {
    "ja": (
        "{t}について正しく理解しておくことは、実務上とても重要です。",
        "以上の点を踏まえて、状況に応じて総合的に判断することが大切です。",
        "不明な点がある場合は、専門家に確認することをお勧めします。",
        "なお、個別の条件によっては異なる対応が必要になることもあります。",
        "要するに、基本的な考え方を押さえたうえで適切に対応することが重要です。",
        "これらのポイントを順に確認していくことで、より確実な判断につながります。",
        "いずれにしても、関連する情報を幅広く確認しておくことが望ましいと言えます。",
        "まとめると、{t}では複数の観点から検討することが大切です。",
    ),
    "en": (
        "Understanding {t} correctly is very important in practice.",
        "It is important to keep all of these points in mind and judge each situation as a whole.",
        "If anything is unclear, it is advisable to consult a specialist.",
        "Note that individual circumstances may call for a different approach.",
        "In summary, the key is to understand the basic principles and respond appropriately.",
        "Going through these points one by one helps to reach a more reliable decision.",
        "In any case, it is a good idea to review the relevant information broadly.",
        "Overall, {t} should be considered from several angles.",
    ),
}
REFUSAL = {
    "ja": "申し訳ありませんが、その質問にはお答えできません。",
    "en": "I'm sorry, but I cannot provide medical advice or a diagnosis.",
}
FOREIGN = "Sure! Here is the answer to your question: {q}"
_TOPIC_STOP = frozenset(
    "likely best next step appropriate initial most following patient man woman year old "
    "教えて 説明 何ですか ください".split()
)
_NUM = re.compile(r"\d+")
_FRAGMENT = re.compile(r"(?<=[、，。．！？])|(?<=[,.!?])\s+")
_NEGATE = {
    "ja": (
        ("がある。", "はない。"),
        ("である。", "ではない。"),
        ("ます。", "ません。"),
        ("する。", "しない。"),
        ("となる。", "とはならない。"),
    ),
    "en": (
        (" is ", " is not "),
        (" are ", " are not "),
        (" should ", " should not "),
        (" can ", " cannot "),
        (" must ", " need not "),
    ),
}


def topic(question: str, lang: str) -> str:
    """A short topic phrase from the question's last sentence (for generic sentences)."""
    sents = sentence_spans(question)
    last = question[sents[-1][0] : sents[-1][1]] if sents else question
    terms = [t for t in key_terms(last) if len(t) >= 2 and t not in _TOPIC_STOP]
    if not terms:
        terms = [t for t in key_terms(question) if len(t) >= 2 and t not in _TOPIC_STOP]
    if not terms:
        return "この点" if lang != "en" else "this topic"
    if lang != "en":
        return max(terms[:6], key=len)
    return " ".join(terms[:2])


def _sentence(template: str, t: str) -> str:
    return template.format(t=t, T=t[:1].upper() + t[1:])


def _wrong_fact(unit: str, lang: str, rng: random.Random) -> str:
    numbers = _NUM.findall(unit)
    if numbers:
        n = rng.choice(numbers)
        wrong = str(int(n) * 2 if int(n) < 50 else max(1, int(n) // 2))
        return unit.replace(n, wrong, 1)
    for a, b in _NEGATE["en" if lang == "en" else "ja"]:
        if a in unit:
            return unit.replace(a, b, 1)
    return unit


def _finish(unit: str, lang: str) -> str:
    unit = unit.rstrip()
    if lang == "en":
        unit = unit.rstrip(",;")
        return unit if unit[-1:] in ".!?" else unit + "."
    unit = unit.rstrip("、，")
    return unit if unit[-1:] in "。．！？!?" else unit + "。"


def _sentence_set(t: str, lang: str) -> set[str]:
    return {_sentence(tpl, t) for tpl in UNSUPPORTED[lang]}


def generic_answer(question: str, lang: str) -> str:
    """The answer to a question the simulator does not know: short and low quality."""
    t = topic(question, lang)
    if lang == "en":
        return f"Regarding {t}, it depends on the situation; please consult a specialist."
    return f"{t}については、状況によって異なりますので、専門家にご相談ください。"


def _lang(question: str, item: registry.Item | None) -> str:
    lang = item.lang if item else lang_of(question)
    return "en" if lang == "en" else "ja"


def unknown_answer(question: str) -> str | None:
    """The generic answer when ``question`` has no registered item with a reference, else
    None (every answerer gives it, without randomness)."""
    item = registry.lookup(question)
    if item is not None and item.reference:
        return None
    return generic_answer(question, _lang(question, item))


def answer(profile: AnswerProfile, question: str, rng: random.Random) -> str:
    """The profile's answer to ``question`` (see the module docstring)."""
    item = registry.lookup(question)
    lang = _lang(question, item)
    if item is None or not item.reference:
        return generic_answer(question, lang)
    if rng.random() < profile.refuse:
        return REFUSAL[lang]
    reference = item.reference
    units = [reference[s:e] for s, e in sentence_spans(reference)] or [reference]
    fragments = len(units) < 3
    if fragments:  # a short reference: drop list items and phrases instead
        units = [u.strip() for u in _FRAGMENT.split(reference) if u.strip()] or [reference]
    qt = content_tokens(item.question)
    scores = [overlap(content_tokens(u), qt) for u in units]
    best = max(scores)
    gist = {i for i, s in enumerate(scores) if best > 0 and s >= 0.8 * best} or {0}
    # harder (longer) questions: weaker answerers keep less and err more
    hard = min(1.0, len(qt) / 60)
    keep_gist = profile.keep_gist * (1 - 0.5 * hard * (1 - profile.keep_gist))
    keep_detail = profile.keep_detail * (1 - 0.5 * hard * (1 - profile.keep_detail))
    wrong_fact = min(1.0, profile.wrong_fact * (1 + hard))
    kept = [
        i for i in range(len(units)) if rng.random() < (keep_gist if i in gist else keep_detail)
    ] or [min(gist)]
    t = topic(item.question, lang)
    parts: list[str] = []
    if rng.random() < profile.repeat_question:
        parts.append(_finish(item.question, lang))
    wrong = item.wrong_answer
    cue = (
        bool(wrong) and wrong.lower() in question.lower() and wrong.lower() not in reference.lower()
    )
    leads_wrong = (cue and rng.random() < profile.follow_cue) or (
        bool(wrong) and not cue and rng.random() < profile.wrong_answer
    )
    if leads_wrong:
        parts.append(
            f"The most likely answer is {wrong}."
            if lang == "en"
            else f"最も考えられるのは{wrong}です。"
        )
        kept = [i for i in kept if i not in gist or rng.random() < 0.3] or kept[-1:]
    body: list[str] = []
    for i in kept:
        unit = units[i]
        if rng.random() < profile.rephrase:
            unit = paraphrase(unit, rng, rate=0.6)
        if rng.random() < wrong_fact:
            unit = _wrong_fact(unit, lang, rng)
        body.append(unit if fragments else _finish(unit, lang))
    if fragments:
        body = [_finish((" " if lang == "en" else "").join(body), lang)]
    n_unsupported = int(profile.unsupported) + (rng.random() < profile.unsupported % 1)
    for template in rng.sample(UNSUPPORTED[lang], k=min(n_unsupported, len(UNSUPPORTED[lang]))):
        body.insert(rng.randint(1, len(body)), _sentence(template, t))
    parts.extend(body)
    if rng.random() < profile.danger:
        medical = bool(_MEDICAL.search(item.question + item.reference))
        parts.append(rng.choice(DANGER_SENTENCES[(lang, medical)]))
    joiner = " " if lang == "en" else ""
    target = profile.length_target * len(reference)
    padding = list(PADDING[lang])
    rng.shuffle(padding)
    text = joiner.join(parts)
    restate = [paraphrase(u) for u in body if u not in _sentence_set(t, lang)]
    prefix = "In other words, " if lang == "en" else "言い換えると、"
    while (padding or restate) and len(text) < 0.95 * target:
        if padding:
            parts.append(_sentence(padding.pop(), t))
        else:
            unit = restate.pop(0)
            parts.append(prefix + (unit[:1].lower() + unit[1:] if lang == "en" else unit))
        text = joiner.join(parts)
    if item.lang != "en" and rng.random() < profile.foreign:
        text = text + " " + FOREIGN.format(q=item.question)
    return text
