"""The simulated models: judge and answerer profiles with known, tunable biases.

All effects are on a unit scale (0 = worst, 1 = best) before mapping to the scale the
prompt asks for; e.g. a verbosity slope of 0.15 on a 1–10 scale adds 0.15 x 9 = 1.35
points to an answer twice the reference's length. See ``workbench/sim/README.md``.
Sim numbers show that the pipeline works; they are never evidence about real LLMs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# model families for the self-preference probe: a judge prefers answers whose
# <author> names its own family (any alias below, case-insensitive substring)
FAMILIES: dict[str, tuple[str, ...]] = {
    "claude": ("claude", "anthropic", "answer-concise", "judge-a"),
    "mistral": ("mistral", "mixtral", "answer-verbose", "judge-b"),
    "llama": ("llama", "meta-", "answer-weak", "answer-tiny", "judge-c"),
    "gemini": ("gemini", "palm", "bison", "answer-mid", "judge-d"),
    "gpt": ("gpt", "openai", "chatgpt", "answer-strong", "judge-e"),
    "qwen": ("qwen", "judge-f"),
    "sim-tools": ("summarizer", "paraphraser", "decomposer", "extractor"),
}

_DAMP = {"length": 0.5, "fluency": 0.5, "self_preference": 0.5, "single_dimension": 0.5}


@dataclass(frozen=True)
class JudgeProfile:
    """How a simulated judge scores (every effect on the unit scale).

    Attributes
    ----------
    leniency : additive shift of every score.
    noise_sd : trial noise sd at temperature 1 (scales linearly with temperature).
    noise_floor : trial noise sd at temperature 0 (small, non-zero).
    item_sd : a per-(judge, item) offset, fixed across trials and answers.
    response_sd : a per-(judge, response) offset, fixed across trials.
    verbosity_slope : added per doubling of length above the reference's length.
    position_pref : pairwise: bonus of the first shown answer.
    self_pref : bonus when ``<author>`` names the judge's own family.
    malformed_rate : share of malformed replies (no JSON, "2-3", out of range, ...).
    damping : per ``<judging_rules>`` rule id, the share of the matching bias removed.
    authority, bandwagon : bonus for a fabricated citation / "90% of people prefer".
    sentiment : bonus per unit of net positive sentiment (small).
    demographic : shift when the response mentions a listed demographic group.
    injection : probability of obeying an instruction found inside a data block.
    unsup_lift : unsupervised (no reference) setting: score = 1 - (1 - quality) *
        (1 - unsup_lift), i.e. pulled toward the top: higher, less discriminating.
    halo : weight of overall quality in a single dimension's score.
    tie_margin : pairwise: |difference| below which the verdict is a tie.
    logprob_sd : spread (in score points) of the score-token distribution.
    fence : wrap JSON replies in a Markdown ```json fence (still parseable).
    """

    name: str
    family: str
    leniency: float = 0.0
    noise_sd: float = 0.05
    noise_floor: float = 0.01
    item_sd: float = 0.03
    response_sd: float = 0.02
    verbosity_slope: float = 0.03
    position_pref: float = 0.02
    self_pref: float = 0.02
    malformed_rate: float = 0.0
    damping: dict[str, float] = field(default_factory=lambda: dict(_DAMP))
    authority: float = 0.03
    bandwagon: float = 0.02
    sentiment: float = 0.0
    demographic: float = 0.0
    injection: float = 0.0
    unsup_lift: float = 0.4
    halo: float = 0.5
    tie_margin: float = 0.04
    logprob_sd: float = 0.6
    fence: bool = False


@dataclass(frozen=True)
class AnswerProfile:
    """How a simulated answerer degrades the reference answer.

    Attributes
    ----------
    keep_gist, keep_detail : probability of keeping a gist / detail meaning unit.
    rephrase : probability of rewording a kept unit (content-keeping).
    unsupported : expected number of added unsupported (not wrong) statements.
    length_target : target length relative to the reference (padding fills up to it).
    repeat_question : probability of opening by repeating the question.
    wrong_fact : per kept unit, probability of a wrong fact (changed number, negation).
    danger : probability of adding dangerous advice (folk remedy, false reassurance).
    foreign : ja/zh items: probability of adding an English sentence.
    follow_cue : probability of following a cognitive-bias cue naming the wrong answer.
    wrong_answer : probability of stating the item's wrong answer without any cue.
    refuse : probability of a refusal ("I cannot provide medical advice").
    """

    name: str
    family: str
    keep_gist: float = 0.9
    keep_detail: float = 0.7
    rephrase: float = 0.3
    unsupported: float = 0.5
    length_target: float = 1.0
    repeat_question: float = 0.0
    wrong_fact: float = 0.0
    danger: float = 0.0
    foreign: float = 0.0
    follow_cue: float = 0.3
    wrong_answer: float = 0.0
    refuse: float = 0.0


JUDGES: dict[str, JudgeProfile] = {
    p.name: p
    for p in (
        # the good judge: accurate, low noise, small biases
        JudgeProfile(
            "judge-a", "claude", leniency=0.0, noise_sd=0.04, noise_floor=0.006,
            item_sd=0.02, response_sd=0.015, verbosity_slope=0.02, position_pref=0.01,
            self_pref=0.02, authority=0.01, bandwagon=0.01, unsup_lift=0.35, halo=0.4, logprob_sd=0.5,
        ),
        # lenient, strong verbosity slope that the `length` rule damps strongly
        JudgeProfile(
            "judge-b", "mistral", leniency=0.06, noise_sd=0.06, noise_floor=0.01,
            item_sd=0.03, verbosity_slope=0.22, position_pref=0.03, self_pref=0.02,
            damping={**_DAMP, "length": 0.85}, authority=0.05, bandwagon=0.04,
            sentiment=0.03, unsup_lift=0.5, halo=0.6,
        ),
        # harsh and noisy; fences its JSON in ```json
        JudgeProfile(
            "judge-c", "llama", leniency=-0.12, noise_sd=0.12, noise_floor=0.03,
            item_sd=0.07, response_sd=0.04, verbosity_slope=0.05, position_pref=0.04,
            self_pref=0.03, damping={k: 0.3 for k in _DAMP}, sentiment=-0.02,
            demographic=-0.03, unsup_lift=0.45, halo=0.7,
            logprob_sd=0.9, fence=True,
        ),
        # strong position preference in pairwise comparisons
        JudgeProfile(
            "judge-d", "gemini", leniency=0.03, noise_sd=0.06, noise_floor=0.012,
            verbosity_slope=0.05, position_pref=0.14, tie_margin=0.03,
        ),
        # self-preference: favours answers attributed to its own family ("gpt")
        JudgeProfile(
            "judge-e", "gpt", leniency=0.02, noise_sd=0.05, noise_floor=0.01,
            verbosity_slope=0.06, position_pref=0.02, self_pref=0.14,
            damping={**_DAMP, "self_preference": 0.6}, authority=0.04, bandwagon=0.03,
        ),
        # moderate, but ~5% malformed replies and a small susceptibility to injection
        JudgeProfile(
            "judge-f", "qwen", leniency=0.0, noise_sd=0.08, noise_floor=0.015,
            verbosity_slope=0.08, position_pref=0.04, malformed_rate=0.05,
            injection=0.15, authority=0.04, bandwagon=0.04, sentiment=0.02,
        ),
    )
}

ANSWERERS: dict[str, AnswerProfile] = {
    p.name: p
    for p in (
        # complete, lightly reworded, about twice the reference's length (GPT-4 in seed 001)
        AnswerProfile(
            "answer-strong", "gpt", keep_gist=0.97, keep_detail=0.85, rephrase=0.35,
            unsupported=0.8, length_target=2.0, wrong_fact=0.03, follow_cue=0.05, danger=0.0,
        ),
        AnswerProfile(
            "answer-mid", "gemini", keep_gist=0.9, keep_detail=0.65, rephrase=0.4,
            unsupported=0.8, length_target=1.1, wrong_fact=0.05, danger=0.04,
            follow_cue=0.12, wrong_answer=0.04,
        ),
        AnswerProfile(
            "answer-weak", "llama", keep_gist=0.6, keep_detail=0.35, rephrase=0.5,
            unsupported=1.2, length_target=0.9, repeat_question=0.15, wrong_fact=0.2,
            danger=0.25, foreign=0.1, follow_cue=0.25, wrong_answer=0.15, refuse=0.03,
        ),
        # complete but concise (little padding), a few wrong details
        AnswerProfile(
            "answer-concise", "claude", keep_gist=0.95, keep_detail=0.8, rephrase=0.5,
            unsupported=0.3, length_target=0.9, wrong_fact=0.04, danger=0.02,
            follow_cue=0.08, wrong_answer=0.03,
        ),
        # mid content, very long: padding and repetition, sometimes the question repeated
        AnswerProfile(
            "answer-verbose", "mistral", keep_gist=0.85, keep_detail=0.6, rephrase=0.3,
            unsupported=1.5, length_target=2.6, repeat_question=0.3, wrong_fact=0.08,
            danger=0.08, foreign=0.05, follow_cue=0.15, wrong_answer=0.08,
        ),
        # a tiny model: repeats the question, English text in ja answers, wrong facts
        AnswerProfile(
            "answer-tiny", "llama", keep_gist=0.35, keep_detail=0.15, rephrase=0.5,
            unsupported=1.5, length_target=0.8, repeat_question=0.6, wrong_fact=0.3,
            danger=0.4, foreign=0.4, follow_cue=0.35, wrong_answer=0.25, refuse=0.12,
        ),
    )
}

# tool profiles: text operations (any profile can do them; these are named for them)
TOOLS = ("summarizer", "paraphraser", "decomposer", "extractor")

# what a profile does with a task outside its role
JUDGE_ANSWERS_AS = "answer-mid"  # a judge asked to answer answers like answer-mid


def profile_names() -> list[str]:
    """Every profile name, judges first."""
    return [*JUDGES, *ANSWERERS, *TOOLS]


def author_family(author: str) -> str | None:
    """The family an ``<author>`` text names, if any."""
    low = author.lower()
    for family, aliases in FAMILIES.items():
        if any(alias in low for alias in aliases):
            return family
    return None
