"""Data: canonical tables, validation, the bundled study sets and release importers.

Canonical tables (one column vocabulary, see ``CANONICAL_COLUMNS``):

==================  ===========================================================
``items``           item_id, lang, category, question, reference, keywords (list),
                    perturbation, source_item (+ set-specific columns)
``rubric``          item_id, criterion_id, text, weight, kind (must/bonus/penalty/item)
``responses``       item_id, answer_model, answer_sample (files may say ``sample``), response
``human_scores``    item_id, answer_model, rater, dimension, score
``spans``           item_id, unit_id, role (gist/detail), start, end,
                    label (unit/excess/missing), text_source, answer_model, text
==================  ===========================================================

Judge tables a user brings (verdicts or scores beside human labels), documented in
:mod:`workbench.datasets._long`: `load_pairwise`, `load_pointwise` and `load_table`
(either, by kind) read CSV, JSONL, JSON or a frame with a column and label-code mapping;
`validate_pairwise`, `validate_pointwise` list every bad row.

`load_dataset` reads a bundled set from ``data/<name>/``; `load_folder` reads a
user's folder in the same format. Both validate and raise
`~workbench.errors.DatasetError` naming the file, the 1-based data row and the column.

Importers of public releases a user downloaded, one module each with
``load_release(path)``: `hivmedqa`, `llmbar`, `unieval`, `pandalm`, `judgebench`.
"""

from __future__ import annotations

from workbench.datasets import hivmedqa, judgebench, llmbar, pandalm, unieval
from workbench.datasets._bundled import list_datasets, load_dataset, load_folder, read_csv
from workbench.datasets._long import (
    PAIRWISE_COLUMNS,
    POINTWISE_COLUMNS,
    validate_pairwise,
    validate_pointwise,
)
from workbench.datasets._long_load import load_pairwise, load_pointwise, load_table
from workbench.datasets._schema import (
    CANONICAL_COLUMNS,
    LANGS,
    RUBRIC_KINDS,
    SPAN_LABELS,
    SPAN_ROLES,
    split_keywords,
)
from workbench.datasets._spans import validate_spans
from workbench.datasets._validate import (
    validate_human_scores,
    validate_items,
    validate_responses,
    validate_rubric,
)

__all__ = [
    "CANONICAL_COLUMNS",
    "LANGS",
    "PAIRWISE_COLUMNS",
    "POINTWISE_COLUMNS",
    "RUBRIC_KINDS",
    "SPAN_LABELS",
    "SPAN_ROLES",
    "hivmedqa",
    "judgebench",
    "list_datasets",
    "llmbar",
    "load_dataset",
    "load_folder",
    "load_pairwise",
    "load_pointwise",
    "load_table",
    "pandalm",
    "read_csv",
    "split_keywords",
    "unieval",
    "validate_human_scores",
    "validate_items",
    "validate_pairwise",
    "validate_pointwise",
    "validate_responses",
    "validate_rubric",
    "validate_spans",
]
