"""The shared docstring paragraphs of ``workbench.stats`` are filled in at import."""

from __future__ import annotations

import pytest

import workbench.stats as stats
from workbench.stats._docs import PARAMETERS, shared_docs

PUBLIC = [getattr(stats, name) for name in stats.__all__ if callable(getattr(stats, name))]


@pytest.mark.parametrize("func", PUBLIC, ids=lambda f: getattr(f, "__name__", repr(f)))
def test_no_placeholder_is_left(func):
    doc = func.__doc__ or ""
    left = [name for name in [*PARAMETERS, "seed"] if f"{{{name}}}" in doc]
    assert not left, f"{func.__name__}: unfilled {left}"


def test_a_shared_paragraph_reads_as_written_in_place():
    doc = stats.fleiss_kappa.__doc__
    assert "    rng : numpy.random.Generator or int, optional\n        Required when ``n_boot > 0``.\n" in doc
    assert "    ci_level : float, default 0.95\n        Confidence level.\n" in doc
    assert "Ota, M., Saigusa, K." in stats.consistency_index.__doc__  # a module's own paragraph


def test_an_unknown_placeholder_is_an_error():
    def f():
        """Draw.

        {nope}
        """

    with pytest.raises(KeyError, match="nope"):
        shared_docs(f)
