"""``JudgeSpec``: one judging configuration (protocol, judge, template, scale, …)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.prompts import template_ids

#: Judging protocols (DESIGN §4).
PROTOCOLS: tuple[str, ...] = (
    "checklist",
    "decompose",
    "dimensions",
    "geval",
    "holistic",
    "holistic_simple",
    "pairwise",
    "summarize_then",
)
#: Protocols ``summarize_then`` can wrap (single-answer protocols).
SUMMARIZABLE: tuple[str, ...] = ("checklist", "dimensions", "geval", "holistic", "holistic_simple")
GEVAL_MODES: tuple[str, ...] = ("auto", "logprobs", "samples")
#: ``JudgeSpec.structured`` settings (:mod:`workbench.judges._structured`).
STRUCTURED: tuple[str, ...] = ("auto", "json_schema", "json_object", "guided_json", "off")

#: Template used when ``JudgeSpec.template`` is None.
DEFAULT_TEMPLATE: dict[str, str] = {
    "holistic": "holistic",
    "holistic_simple": "holistic_simple",
    "checklist": "checklist",
    "dimensions": "medgpt5",
    "geval": "geval_relevance",
    "pairwise": "pairwise",
    "decompose": "detect_excess_missing",
}
#: Whether the reference answer is shown when ``JudgeSpec.use_reference`` is None.
DEFAULT_USE_REFERENCE: dict[str, bool] = {
    "holistic": False,
    "holistic_simple": False,
    "checklist": False,
    "dimensions": True,
    "geval": True,
    "pairwise": False,
    "decompose": True,
}


def _fail(name: str, message: str) -> None:
    raise ValueError(f"JudgeSpec.{name}: {message}")


@dataclass(frozen=True)
class JudgeSpec:
    """How to judge: protocol, judge model, template, scale, sampling and options.

    Parameters
    ----------
    protocol : str
        One of :data:`PROTOCOLS`.
    judge_model : str
        litellm model string of the judge (``sim/judge-a``, ``gpt-4o`` …). For
        ``summarize_then`` it may be omitted (taken from ``inner``).
    template : str, optional
        Judging template id; default per protocol (:data:`DEFAULT_TEMPLATE`; ``dimensions``
        with ``per_call=True`` uses ``report_dimension``). The language is the items'
        ``lang`` unless ``lang`` is given.
    lang : str, optional
        Force the template language (``ja`` | ``en``).
    scale : (low, high), optional
        Score range; default from the template's front matter (or, one call per
        dimension, from the dimension catalogue).
    temperature : float or tuple of float
        Judge temperature(s); several temperatures expand into rows.
    trials : int
        Repeats per temperature; trial ``k`` is sent as ``Request.sample = k`` so repeats
        are distinct cache entries.
    use_reference : bool, optional
        Show the reference answer (supervised). Default per protocol
        (:data:`DEFAULT_USE_REFERENCE`): MedGPT ``dimensions`` supervised, ``False`` is the
        seed-002 unsupervised variant.
    system_prompt : str, optional
        A template id with a ``## system`` section, or a literal system prompt.
    mitigation : bool
        Prepend the seed-003 bias-mitigation system prompt (``judge_system_mitigation``).
        For ``dimensions`` with ``per_call=True`` the control condition is ``judge_system``.
    dimensions : tuple of str, optional
        Dimension names. One call for all (``per_call=False``): the numeric fields of the
        template (default all); one call each (``per_call=True``): names from the dimension
        catalogue (default the six report dimensions of seed 003).
    per_call : bool
        ``dimensions``: one call per dimension (seed 003) instead of one call for all.
    inner : JudgeSpec, optional
        ``summarize_then``: the protocol applied to the summary.
    summarizer_model, summarize_template : str
        ``summarize_then``: model and template of the summary call (temperature 0).
    decomposer_model : str, optional
        ``decompose``: model that splits the reference into units (default: the judge).
    decompose_template : str
        ``decompose``: template of the unit split (``decompose_units``).
    geval_mode : str
        ``geval``: ``logprobs`` (sum of p(s)·s over the score tokens' probabilities),
        ``samples`` (mean of ``geval_samples`` replies) or ``auto`` (log-probabilities
        when the provider returns them, else samples).
    geval_samples : int
        ``geval``: number of samples per trial in samples mode.
    top_logprobs : int
        ``geval``: number of top log-probabilities requested per token (OpenAI allows 20).
    axis : str, optional
        ``holistic`` / ``holistic_simple``: the evaluation axis (default: the items'
        ``axis`` column, else medical/informational accuracy as in seed 000).
    domain : str, optional
        ``decompose``: the expert domain named in the prompt (default: items' ``domain``
        column, else a generic wording).
    max_tokens : int, optional
        Passed to every judge call.
    json_mode : bool
        Ask providers for JSON output (``response_format={"type": "json_object"}``) on
        JSON-reply templates when ``structured`` asks for nothing.
    structured : str
        Ask for the reply's JSON schema (from the template's output format, the schema
        the parser checks): ``auto`` (default: the route's form, off for ``sim/``
        models), ``json_schema``, ``json_object``, ``guided_json`` or ``off``
        (:mod:`workbench.judges._structured`).
    params : mapping
        Extra provider keyword arguments for every call (e.g. ``api_base``).
    study : str
        Label written to the ``study`` column.
    concurrency : int, optional
        Concurrent calls per model (``complete_many``).
    budget_usd : float, optional
        Spending cap for the whole run (all stages).
    """

    protocol: str
    judge_model: str | None = None
    template: str | None = None
    lang: str | None = None
    scale: tuple[float, float] | None = None
    temperature: float | tuple[float, ...] = 0.0
    trials: int = 1
    use_reference: bool | None = None
    system_prompt: str | None = None
    mitigation: bool = False
    dimensions: tuple[str, ...] | None = None
    per_call: bool = False
    inner: JudgeSpec | None = None
    summarizer_model: str = "sim/summarizer"
    summarize_template: str = "summarize"
    decomposer_model: str | None = None
    decompose_template: str = "decompose_units"
    geval_mode: str = "auto"
    geval_samples: int = 20
    top_logprobs: int = 20
    axis: str | None = None
    domain: str | None = None
    max_tokens: int | None = None
    json_mode: bool = False
    structured: str = "auto"
    params: Mapping[str, Any] = field(default_factory=dict)
    study: str = ""
    concurrency: int | None = None
    budget_usd: float | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.protocol not in PROTOCOLS:
            _fail("protocol", f"{self.protocol!r} is not one of {', '.join(PROTOCOLS)}")
        temps = self.temperature
        temps = tuple(temps) if isinstance(temps, list | tuple) else (temps,)
        if not temps:
            _fail("temperature", "give at least one temperature")
        for t in temps:
            if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
                _fail("temperature", f"must be a number >= 0, got {t!r}")
        set_(self, "temperature", temps[0] if len(temps) == 1 else temps)
        if isinstance(self.trials, bool) or not isinstance(self.trials, int) or self.trials < 1:
            _fail("trials", f"must be an integer >= 1, got {self.trials!r}")
        if self.scale is not None:
            scale = tuple(self.scale)
            if len(scale) != 2 or not all(isinstance(v, int | float) for v in scale) or not scale[0] < scale[1]:
                _fail("scale", f"must be (low, high) with low < high, got {self.scale!r}")
            set_(self, "scale", scale)
        if self.dimensions is not None:
            dims = (self.dimensions,) if isinstance(self.dimensions, str) else tuple(self.dimensions)
            if not dims or not all(isinstance(d, str) and d for d in dims):
                _fail("dimensions", f"must be a non-empty tuple of names, got {self.dimensions!r}")
            set_(self, "dimensions", dims)
        if self.structured not in STRUCTURED:
            _fail("structured", f"{self.structured!r} is not one of {', '.join(STRUCTURED)}")
        if self.geval_mode not in GEVAL_MODES:
            _fail("geval_mode", f"{self.geval_mode!r} is not one of {', '.join(GEVAL_MODES)}")
        if not isinstance(self.geval_samples, int) or self.geval_samples < 1:
            _fail("geval_samples", f"must be an integer >= 1, got {self.geval_samples!r}")
        if not isinstance(self.top_logprobs, int) or not 1 <= self.top_logprobs <= 20:
            _fail("top_logprobs", f"must be an integer in 1..20, got {self.top_logprobs!r}")
        if self.budget_usd is not None and not self.budget_usd >= 0:
            _fail("budget_usd", f"must be >= 0, got {self.budget_usd!r}")
        if self.concurrency is not None and (not isinstance(self.concurrency, int) or self.concurrency < 1):
            _fail("concurrency", f"must be an integer >= 1, got {self.concurrency!r}")
        if self.lang is not None and self.lang not in ("ja", "en", "zh"):
            _fail("lang", f"must be ja, en or zh, got {self.lang!r}")
        if self.mitigation and self.system_prompt is not None:
            _fail("system_prompt", "mitigation=True uses the judge_system_mitigation prompt; "
                  "do not also give system_prompt")
        if self.protocol == "summarize_then":
            self._check_summarize_then()
        elif self.inner is not None:
            _fail("inner", f"only protocol 'summarize_then' takes an inner spec, not {self.protocol!r}")
        if not isinstance(self.judge_model, str) or not self.judge_model.strip():
            _fail("judge_model", f"must be a model string, got {self.judge_model!r}")
        if self.protocol == "decompose" and self.use_reference is False:
            _fail("use_reference", "decompose compares the answer with the reference; it cannot be False")
        if self.template is not None:
            if self.template not in template_ids():
                _fail("template", f"unknown template {self.template!r}; known: {', '.join(template_ids())}")
        set_(self, "params", dict(self.params))

    def _check_summarize_then(self) -> None:
        inner = self.inner
        if not isinstance(inner, JudgeSpec):
            _fail("inner", "protocol 'summarize_then' needs inner=JudgeSpec(...) (the protocol applied to the summary)")
        if inner.protocol not in SUMMARIZABLE:
            _fail("inner", f"summarize_then can wrap {', '.join(SUMMARIZABLE)}, not {inner.protocol!r}")
        set_ = object.__setattr__
        for name, default in (("judge_model", None), ("temperature", 0.0), ("trials", 1)):
            mine, theirs = getattr(self, name), getattr(inner, name)
            if mine not in (default, theirs):
                _fail(name, f"summarize_then takes {name} from inner ({theirs!r}); got {mine!r}")
            set_(self, name, theirs)

    # -- derived values -------------------------------------------------------------
    @property
    def temperatures(self) -> tuple[float, ...]:
        """The temperatures as a tuple."""
        t = self.temperature
        return tuple(float(v) for v in t) if isinstance(t, tuple) else (float(t),)

    @property
    def reference_shown(self) -> bool:
        """``use_reference`` resolved with the protocol default."""
        if self.protocol == "summarize_then":
            return self.inner.reference_shown  # type: ignore[union-attr]
        if self.use_reference is not None:
            return bool(self.use_reference)
        return DEFAULT_USE_REFERENCE[self.protocol]

    @property
    def template_id(self) -> str:
        """The judging template id (default per protocol)."""
        if self.template is not None:
            return self.template
        if self.protocol == "summarize_then":
            return self.inner.template_id  # type: ignore[union-attr]
        if self.protocol == "dimensions" and self.per_call:
            return "report_dimension"
        return DEFAULT_TEMPLATE[self.protocol]

    def replace(self, **changes: Any) -> JudgeSpec:
        """A copy with fields changed; ``judge_model``, ``temperature`` and ``trials`` of a
        ``summarize_then`` spec are changed on its inner spec too."""
        if self.protocol == "summarize_then":
            shared = {k: changes[k] for k in ("judge_model", "temperature", "trials") if k in changes}
            if shared:
                inner = changes.get("inner", self.inner)
                changes["inner"] = dataclasses.replace(inner, **shared)
        return dataclasses.replace(self, **changes)
