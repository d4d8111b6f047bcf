"""Judging protocols and reply parsing (DESIGN §4).

``run_judging(items, spec)`` runs one protocol over an items frame and returns the long
results frame (:data:`RESULT_COLUMNS`); ``JudgeSpec`` configures it; ``parse_reply``
parses a judge reply by the seed-003 binding rule. Each protocol is one generator that
yields its rounds of calls and reads their replies (``_protocols``), driven by
``run_judging`` and, against the cache, by ``estimate``. ``Design`` / ``expand_design``
/ ``estimate`` / ``run_design`` cross judges x protocols x temperatures x trials x
perturbations and report, before any spend, the calls, cache hits, tokens and cost per
model. The prompt
templates live in :mod:`workbench.prompts` (re-exported here: ``render``,
``load_template`` …).
"""

from __future__ import annotations

from workbench.judges._check import ItemProblem, check_items
from workbench.judges._columns import COLUMN_DOCS, CORE_COLUMNS, EXTRA_COLUMNS, RESULT_COLUMNS
from workbench.judges._design import (
    Design,
    PlannedCall,
    Run,
    estimate,
    expand_design,
    plan_requests,
    run_design,
)
from workbench.judges._format import OutputSpec, output_spec
from workbench.judges._interpret import geval_score
from workbench.judges._parse import (
    extract_json_object,
    parse_detection,
    parse_dimension_reply,
    parse_fields,
    parse_reply,
    parse_score_only,
    parse_units,
    parse_verdict,
)
from workbench.judges._plan import COMPLETION_TOKENS, estimate_tokens
from workbench.judges._protocols import run_judging
from workbench.judges._spans import detection_spans, units_table
from workbench.judges._spec import PROTOCOLS, JudgeSpec
from workbench.judges._structured import describe_structured, reply_schema, structured_form
from workbench.prompts import (
    BLOCK_TAGS,
    Template,
    list_templates,
    load_dimensions,
    load_template,
    render,
    template_ids,
    wrap_block,
)
from workbench.text import detect_lang

__all__ = [
    "BLOCK_TAGS",
    "COLUMN_DOCS",
    "COMPLETION_TOKENS",
    "CORE_COLUMNS",
    "Design",
    "EXTRA_COLUMNS",
    "ItemProblem",
    "JudgeSpec",
    "OutputSpec",
    "PROTOCOLS",
    "PlannedCall",
    "RESULT_COLUMNS",
    "Run",
    "Template",
    "check_items",
    "describe_structured",
    "detect_lang",
    "detection_spans",
    "estimate",
    "estimate_tokens",
    "expand_design",
    "extract_json_object",
    "geval_score",
    "list_templates",
    "load_dimensions",
    "load_template",
    "output_spec",
    "parse_detection",
    "parse_dimension_reply",
    "parse_fields",
    "parse_reply",
    "parse_score_only",
    "parse_units",
    "parse_verdict",
    "plan_requests",
    "render",
    "reply_schema",
    "run_design",
    "run_judging",
    "structured_form",
    "template_ids",
    "units_table",
    "wrap_block",
]
