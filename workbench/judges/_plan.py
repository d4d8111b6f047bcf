"""Planning judge calls: items + spec -> prompts -> ``workbench.llm.Request`` objects.

The protocols (``_protocols``) call these planners, so
:func:`~workbench.judges.run_judging` and :func:`~workbench.judges.estimate` build the
same requests.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from workbench.judges._columns import empty_row
from workbench.judges._format import OutputSpec, output_spec
from workbench.judges._items import (
    checklist_items,
    holistic_criteria,
    keywords_of,
    record_lang,
    require,
    where,
)
from workbench.judges._parse import check_units
from workbench.judges._spec import JudgeSpec
from workbench.judges._structured import reply_schema, request_parts, structured_form
from workbench.llm import Request
from workbench.prompts import (
    Template,
    dimension_set,
    literal_label,
    load_dimensions,
    load_template,
    render,
    template_ids,
)
from workbench.text import is_missing

DEFAULT_AXIS = {"ja": "医学・情報観点の正確さ", "en": "medical and informational accuracy"}
DEFAULT_DOMAIN = {"ja": "この質問の分野", "en": "the subject of the question"}
#: Completion tokens assumed per call kind when estimating (a rough guess, documented).
COMPLETION_TOKENS = {"score": 100, "multi": 150, "checklist": 80, "geval_lp": 1,
                     "geval_sample": 2, "verdict": 250}


def estimate_tokens(text: str) -> int:
    """Rough token count: ASCII characters / 4 plus other characters / 1.5 (Japanese and
    Chinese take about one token per 1-1.5 characters in GPT-4-class tokenizers).

    Examples
    --------
    >>> estimate_tokens("abcd" * 10), estimate_tokens("橋梁設計")
    (10, 3)
    """
    n_ascii = sum(1 for c in text if ord(c) < 128)
    return math.ceil(n_ascii / 4 + (len(text) - n_ascii) / 1.5)


@dataclass
class Call:
    """One planned request and the result row(s) it will fill.

    ``kind`` says how the reply is read: ``score`` (one JSON score), ``multi`` (several
    dimensions in one JSON reply), ``checklist``, ``geval_lp`` (log-probabilities),
    ``geval_sample`` (one of n samples), ``verdict`` (pairwise), ``units`` (decomposition),
    ``detect`` (excess/missing), ``summary`` (summariser). ``depends_on`` holds the
    replies of earlier rounds the request was built from (a summary, a decomposition, a
    G-Eval reply without log-probabilities): an estimate counts the call as inexact when
    one of them is only a guess. ``guess`` is ``(text, completion tokens)`` of the reply
    an estimate stands in while the call is not cached (later rounds are planned from
    its text); default ``""`` and :data:`COMPLETION_TOKENS` of the kind.
    """

    request: Request
    row: dict
    kind: str
    out: OutputSpec | None = None
    info: dict = field(default_factory=dict)
    depends_on: tuple = ()
    guess: tuple[str, int] | None = None

    def __post_init__(self) -> None:
        if self.guess is None:
            self.guess = ("", COMPLETION_TOKENS.get(self.kind, 100))


def make_request(model: str, messages: list[dict], spec: JudgeSpec, *, temperature: float,
                 sample: int, out: OutputSpec | None = None, logprobs: bool = False) -> Request:
    """A ``workbench.llm.Request`` with the spec's common settings; the reply's schema
    in the form the model's route takes (:mod:`workbench.judges._structured`)."""
    json_reply = out is not None and out.form == "json"
    form = structured_form(spec.structured, model)
    response_format, extra_body = request_parts(form, reply_schema(out), spec.template_id)
    if response_format is None and extra_body is None and spec.json_mode and json_reply:
        response_format = {"type": "json_object"}
    params = dict(spec.params)
    if extra_body:
        params["extra_body"] = {**(params.get("extra_body") or {}), **extra_body}
    return Request(
        model=model,
        messages=messages,
        temperature=float(temperature),
        sample=int(sample),
        max_tokens=spec.max_tokens,
        response_format=response_format,
        logprobs=logprobs,
        top_logprobs=spec.top_logprobs if logprobs else None,
        params=params,
    )


def system_prompt_for(spec: JudgeSpec, lang: str) -> tuple[str | None, str | None]:
    """``(text, label)`` of the system prompt the spec asks for (label goes in the rows)."""
    template_id = None
    if spec.mitigation:
        template_id = "judge_system_mitigation"
    elif spec.system_prompt is not None:
        if spec.system_prompt in template_ids():
            template_id = spec.system_prompt
        else:
            return spec.system_prompt, literal_label(spec.system_prompt)
    elif spec.protocol == "dimensions" and spec.per_call:
        template_id = "judge_system"
    if template_id is None:
        return None, None
    tpl = load_template(template_id, lang=lang)
    if not tpl.system:
        raise ValueError(f"JudgeSpec.system_prompt: template {template_id!r} has no '## system' section")
    return render(tpl, lang=lang)[0]["content"], tpl.label


def bands(low: float, high: float) -> dict[str, str]:
    """Four score bands of seed 000 (1-3, 4-6, 7-8, 9-10 on 1-10), scaled to other ranges."""
    low, high = int(low), int(high)
    width = high - low + 1
    if width < 4:
        raise ValueError(f"JudgeSpec.scale: the holistic bands need at least 4 score points, got {low}-{high}")
    cuts = [low + round(f * width) - 1 for f in (0.3, 0.6, 0.8)]
    starts = [low, cuts[0] + 1, cuts[1] + 1, cuts[2] + 1]
    ends = [cuts[0], cuts[1], cuts[2], high]
    return {f"band{i + 1}": (f"{a}-{b}" if a < b else f"{a}") for i, (a, b) in enumerate(zip(starts, ends, strict=True))}


def base_row(rec: dict, spec: JudgeSpec, *, judge_model: str, tpl: Template, lang: str,
             system_label: str | None) -> dict:
    """The row fields that come from the item and the spec."""
    row = empty_row()
    perturbation = rec.get("perturbation")
    row.update(
        study=spec.study,
        item_id=str(rec["item_id"]),
        answer_model=None if is_missing(rec.get("answer_model"), blank=True) else str(rec["answer_model"]),
        answer_sample=0 if is_missing(rec.get("answer_sample"), blank=True) else int(rec["answer_sample"]),
        judge_model=judge_model,
        protocol=spec.protocol,
        template=tpl.id,
        template_version=tpl.version,
        perturbation="none" if is_missing(perturbation, blank=True) else str(perturbation),
        perturbation_params=rec.get("perturbation_params") or "{}",
        source_item=str(rec["item_id"]) if is_missing(rec.get("source_item"), blank=True) else str(rec["source_item"]),
        lang=lang,
        use_reference=spec.reference_shown,
        system_prompt=system_label,
        mitigation=spec.mitigation,
    )
    return row


def _common_values(rec: dict, spec: JudgeSpec, tpl: Template) -> dict[str, Any]:
    names = tpl.placeholders()
    values: dict[str, Any] = {"question": rec.get("question"), "response": rec.get("response")}
    if spec.reference_shown:
        values["reference"] = rec.get("reference")
    author = rec.get("author")
    if not is_missing(author, blank=True):
        if "author" not in names:
            raise ValueError(
                f"item {rec['item_id']!r} names an author but template {tpl.id!r} has no "
                "{{author}} block; use a template that shows it"
            )
        values["author"] = author
    if "keywords" in names:
        values["keywords"] = keywords_of(rec)
    return values


def _scale_of(spec: JudgeSpec, tpl: Template, default: Any = None) -> tuple[float, float]:
    if spec.scale is not None:
        return spec.scale
    if default is not None:
        return tuple(default)
    if tpl.scale is not None:
        return tpl.scale
    raise ValueError(f"JudgeSpec.scale: template {tpl.id!r} has no default scale; give scale=(low, high)")


def _dimension_prompts(spec, tpl, lang, values) -> list[tuple[dict, list[dict] | dict]]:
    """One-call-per-dimension prompt values (seed 003)."""
    catalogue = load_dimensions()
    dims = spec.dimensions or dimension_set("report6")
    out = []
    for dim in dims:
        if dim not in catalogue:
            raise ValueError(f"JudgeSpec.dimensions: {dim!r} is not in the dimension catalogue "
                             f"({', '.join(catalogue)})")
        entry = catalogue[dim]
        low, high = _scale_of(spec, tpl, entry.get("scale"))
        anchors = entry["anchors"].get(lang) or entry["anchors"]["en"]
        lines = "\n".join(f"- {k}: {v}" for k, v in sorted(anchors.items(), key=lambda kv: float(kv[0])))
        out.append(({"dimension": dim, "scale": (low, high)}, dict(
            values, dimension=dim, dimension_label=entry["label"].get(lang, entry["label"]["en"]),
            dimension_description=entry["description"].get(lang, entry["description"]["en"]),
            anchors=lines, low=low, high=high)))
    return out


def plan_single(records: list[dict], spec: JudgeSpec, *, rubric=None) -> list[Call]:
    """Calls of the single-answer protocols: holistic, holistic_simple, checklist,
    dimensions and geval (one round; geval ``auto`` may add a samples round later)."""
    require(records, ["item_id", "question", "response"], what=f"protocol {spec.protocol!r}")
    if spec.reference_shown:
        require(records, ["reference"], what=f"protocol {spec.protocol!r} with use_reference=True")
    criteria = holistic_criteria(records, rubric) if spec.protocol == "holistic" else {}
    checks = checklist_items(records, rubric) if spec.protocol == "checklist" else {}
    calls: list[Call] = []
    for i, rec in enumerate(records):
        lang = record_lang(rec, spec.lang)
        tpl = load_template(spec.template_id, lang=lang)
        system, system_label = system_prompt_for(spec, lang)
        values = _common_values(rec, spec, tpl)
        variants: list[tuple[dict, dict]] = []  # (info, render values)
        if spec.protocol in ("holistic", "holistic_simple"):
            low, high = _scale_of(spec, tpl)
            axis = spec.axis or (None if is_missing(rec.get("axis"), blank=True) else str(rec["axis"])) or DEFAULT_AXIS.get(lang, DEFAULT_AXIS["en"])
            extra = dict(axis=" ".join(axis.split()), low=low, high=high, **bands(low, high))
            if spec.protocol == "holistic":
                extra.update(criteria=criteria[i], good_example=rec.get("good_example"),
                             bad_example=rec.get("bad_example"))
            variants.append(({"dimension": "overall", "scale": (low, high)}, dict(values, **extra)))
        elif spec.protocol == "checklist":
            for item in checks[i]:
                variants.append(({"dimension": item["criterion_id"], "criterion": item},
                                 dict(values, rubric_item=item["text"])))
        elif spec.protocol == "dimensions" and spec.per_call:
            variants.extend(_dimension_prompts(spec, tpl, lang, values))
        elif spec.protocol in ("dimensions", "geval"):
            low, high = _scale_of(spec, tpl)
            variants.append(({"dimension": "overall", "scale": (low, high)}, dict(values, low=low, high=high)))
        else:  # pragma: no cover - guarded by the caller
            raise ValueError(f"plan_single cannot plan protocol {spec.protocol!r}")
        row0 = base_row(rec, spec, judge_model=spec.judge_model, tpl=tpl, lang=lang, system_label=system_label)
        prompts = []
        for info, vals in variants:
            messages = render(tpl, lang=lang, system=system, **vals)
            out = output_spec(messages)
            prompts.append((info, messages, out))
        for temp in spec.temperatures:
            for trial in range(spec.trials):
                for info, messages, out in prompts:
                    for call in _calls_for_prompt(spec, row0, info, messages, out, temp, trial):
                        call.info["rec"] = i
                        calls.append(call)
    return calls


def _calls_for_prompt(spec, row0, info, messages, out, temp, trial) -> list[Call]:
    row = dict(row0, temperature=float(temp), trial=trial, dimension=info["dimension"])
    if "scale" in info:
        row["scale_low"], row["scale_high"] = info["scale"]
    if spec.protocol == "geval":
        if out.form != "score_only":
            raise ValueError(f"JudgeSpec.template: geval needs a 'Score only' template, {row['template']!r} is not one")
        row.update(scale_low=out.scale[0], scale_high=out.scale[1])
        if spec.geval_mode == "samples":
            n = spec.geval_samples
            return [Call(make_request(spec.judge_model, messages, spec, temperature=temp,
                                      sample=trial * n + j, out=out), row, "geval_sample", out,
                         {"n": n}) for j in range(n)]
        return [Call(make_request(spec.judge_model, messages, spec, temperature=temp, sample=trial,
                                  out=out, logprobs=True), row, "geval_lp", out, {"messages": messages})]
    if out.form != "json":
        raise ValueError(f"JudgeSpec.template: protocol {spec.protocol!r} needs a JSON-reply template")
    request = make_request(spec.judge_model, messages, spec, temperature=temp, sample=trial, out=out)
    if spec.protocol == "checklist":
        crit = info["criterion"]
        row.update(criterion_id=crit["criterion_id"], weight=crit["weight"])
        return [Call(request, row, "checklist", out)]
    if spec.protocol == "dimensions" and not spec.per_call:
        dims = spec.dimensions or out.numeric
        unknown = [d for d in dims if d not in out.numeric]
        if unknown:
            raise ValueError(f"JudgeSpec.dimensions: {unknown} are not score fields of template "
                             f"{row['template']!r} ({', '.join(out.numeric)})")
        row.update(scale_low=out.scale[0], scale_high=out.scale[1])
        return [Call(request, row, "multi", out, {"dimensions": tuple(dims)})]
    return [Call(request, row, "score", out)]


def geval_sample_calls(call: Call, spec: JudgeSpec, reply: Any) -> list[Call]:
    """The samples-mode calls replacing a ``geval_lp`` call whose ``reply`` had no logprobs."""
    n = spec.geval_samples
    req = call.request
    return [Call(make_request(req.model, call.info["messages"], spec, temperature=req.temperature,
                              sample=req.sample * n + j, out=call.out), call.row, "geval_sample",
                 call.out, {"n": n, "rec": call.info.get("rec")}, (reply,)) for j in range(n)]


def pairwise_texts(rec: dict, where: str) -> tuple[str, str]:
    a = rec.get("response_a", rec.get("response"))
    b = rec.get("response_b", rec.get("response_other"))
    if is_missing(a, blank=True) or is_missing(b, blank=True):
        raise ValueError(f"{where}: pairwise needs response_a and response_b (or response and response_other)")
    return str(a), str(b)


def plan_pairwise(records: list[dict], spec: JudgeSpec) -> list[Call]:
    """MT-Bench pairwise calls, both orders: order 0 shows response_a first, order 1 second."""
    require(records, ["item_id", "question"], what="protocol 'pairwise'")
    if spec.reference_shown:
        require(records, ["reference"], what="protocol 'pairwise' with use_reference=True")
    calls: list[Call] = []
    for i, rec in enumerate(records):
        a, b = pairwise_texts(rec, where(i, rec))
        lang = record_lang(rec, spec.lang)
        tpl = load_template(spec.template_id, lang=lang)
        if not is_missing(rec.get("author"), blank=True) and "author" not in tpl.placeholders():
            raise ValueError(f"{where(i, rec)}: names an author but template {tpl.id!r} has "
                             "no {{author}} block; use a template that shows it")
        system, system_label = system_prompt_for(spec, lang)
        row0 = base_row(rec, spec, judge_model=spec.judge_model, tpl=tpl, lang=lang, system_label=system_label)
        paired = "response_a" not in rec  # response + response_other
        model_a = rec.get("model_a", rec.get("answer_model") if paired else None)
        model_b = rec.get("model_b", rec.get("model_other"))
        model_a = None if is_missing(model_a, blank=True) else str(model_a)
        model_b = None if is_missing(model_b, blank=True) else str(model_b)
        if (paired or row0["answer_model"] is None) and (model_a or model_b):
            row0["answer_model"] = f"{model_a} vs {model_b}"
        row0.update(model_a=model_a, model_b=model_b, dimension="overall")
        ref = rec.get("reference") if spec.reference_shown else None
        prompts = []
        for order, (first, second) in enumerate(((a, b), (b, a))):
            messages = render(tpl, lang=lang, system=system, question=rec["question"], reference=ref,
                              response_a=first, response_b=second)
            out = output_spec(messages)
            if out.form != "verdict":
                raise ValueError(f"JudgeSpec.template: pairwise needs a 'Verdict' template, {tpl.id!r} is not one")
            prompts.append((order, messages, out))
        for temp in spec.temperatures:
            for trial in range(spec.trials):
                for order, messages, out in prompts:
                    row = dict(row0, temperature=float(temp), trial=trial, order=order)
                    calls.append(Call(make_request(spec.judge_model, messages, spec, temperature=temp,
                                                   sample=trial, out=out), row, "verdict", out))
    return calls


def plan_summaries(records: list[dict], spec: JudgeSpec) -> list[Call]:
    """One summary call per record (summarize_then), temperature 0, sample 0; the answer
    itself stands in for its summary in an estimate."""
    require(records, ["item_id", "question", "response"], what="protocol 'summarize_then'")
    calls = []
    for i, rec in enumerate(records):
        lang = record_lang(rec, spec.lang)
        tpl = load_template(spec.summarize_template, lang=lang)
        messages = render(tpl, lang=lang, question=rec.get("question"), text=rec["response"])
        out = output_spec(messages)
        response = str(rec["response"])
        calls.append(Call(make_request(spec.summarizer_model, messages, spec, temperature=0.0, sample=0),
                          {"template": tpl.label}, "summary", out, {"rec": i},
                          guess=(response, min(300, estimate_tokens(response) // 2 + 10))))
    return calls


def domain_of(rec: dict, spec: JudgeSpec, lang: str) -> str:
    value = spec.domain or (None if is_missing(rec.get("domain"), blank=True) else str(rec["domain"]))
    return value or DEFAULT_DOMAIN.get(lang, DEFAULT_DOMAIN["en"])


def item_units(rec: dict, where: str) -> list[dict] | None:
    """Units given with the item (``units`` column: list or JSON), validated, or None."""
    raw = rec.get("units")
    if is_missing(raw, blank=True):
        return None
    value = json.loads(raw) if isinstance(raw, str) else raw
    try:
        return check_units(value)
    except Exception as exc:
        raise ValueError(f"{where}: field 'units': {exc}") from None


def plan_units(records: list[dict], spec: JudgeSpec) -> dict[tuple[int, float, int], Call]:
    """Decomposition calls (decompose round 1) for records without given units, keyed by
    (record index, temperature, trial); the whole reference stands in as one gist unit in
    an estimate."""
    require(records, ["item_id", "question", "response", "reference"], what="protocol 'decompose'")
    model = spec.decomposer_model or spec.judge_model
    calls: dict[tuple[int, float, int], Call] = {}
    for i, rec in enumerate(records):
        if item_units(rec, where(i, rec)) is not None:
            continue
        lang = record_lang(rec, spec.lang)
        tpl = load_template(spec.decompose_template, lang=lang)
        messages = render(tpl, lang=lang, question=rec["question"], text=rec["reference"],
                          domain=domain_of(rec, spec, lang))
        out = output_spec(messages)
        reference = str(rec["reference"])
        guess = (json.dumps({"units": [{"id": "u1", "role": "gist", "text": reference}]}),
                 int(1.5 * estimate_tokens(reference)) + 20)
        for temp in spec.temperatures:
            for trial in range(spec.trials):
                calls[(i, float(temp), trial)] = Call(
                    make_request(model, messages, spec, temperature=temp, sample=trial, out=out),
                    {"template": tpl.label}, "units", out, {"rec": i}, guess=guess)
    return calls


def detect_call(rec: dict, spec: JudgeSpec, units: list[dict], *, temp: float, trial: int,
                index: int, depends_on: tuple = ()) -> Call:
    """The excess/missing detection call (decompose round 2) of record ``index``;
    ``depends_on``: the decomposition reply the units come from (none for given units)."""
    lang = record_lang(rec, spec.lang)
    tpl = load_template(spec.template_id, lang=lang)
    system, system_label = system_prompt_for(spec, lang)
    messages = render(tpl, lang=lang, system=system, question=rec["question"], reference=rec["reference"],
                      units=units, response=rec["response"], domain=domain_of(rec, spec, lang))
    out = output_spec(messages)
    if out.form != "json" or set(out.schema) != {"excess", "missing"}:
        raise ValueError(f"JudgeSpec.template: decompose needs an excess/missing template, {tpl.id!r} is not one")
    row = base_row(rec, spec, judge_model=spec.judge_model, tpl=tpl, lang=lang, system_label=system_label)
    row.update(temperature=float(temp), trial=trial)
    return Call(make_request(spec.judge_model, messages, spec, temperature=temp, sample=trial, out=out),
                row, "detect", out, {"units": units, "rec": index}, depends_on,
                ("", estimate_tokens(str(rec["response"])) // 2 + 20))
