"""Versioned prompt templates and their rendering (CONVENTION.md in ``templates/``).

A template is a file ``templates/<id>.<lang>.md`` (front matter with ``id`` and
``version``, a ``## system`` and/or ``## user`` section); :func:`render` fills it into
chat messages, wrapping untrusted text in tagged blocks (:data:`BLOCK_TAGS`,
:func:`wrap_block`). ``templates/dimensions.yaml`` is the catalogue of judging
dimensions (:func:`load_dimensions`, :func:`dimension_set`). Used by
:mod:`workbench.judges`, :mod:`workbench.perturb` and the studies; imports only
:mod:`workbench.text`.
"""

from __future__ import annotations

from workbench.prompts._templates import (
    BLOCK_TAGS,
    POLARITY_HINT,
    Template,
    dimension_set,
    list_templates,
    literal_label,
    load_dimensions,
    load_template,
    neutralise,
    render,
    template_dir,
    template_ids,
    template_langs,
    wrap_block,
)

__all__ = [
    "BLOCK_TAGS",
    "POLARITY_HINT",
    "Template",
    "dimension_set",
    "list_templates",
    "literal_label",
    "load_dimensions",
    "load_template",
    "neutralise",
    "render",
    "template_dir",
    "template_ids",
    "template_langs",
    "wrap_block",
]
