"""One vocabulary for the names figures show: correlation levels and legend titles.

The studies keep their own column values (``per_group_mean`` in S2, ``per model (mean)``
in X2); :func:`display_name` gives the one name a reader sees for both.
"""

from __future__ import annotations

from typing import Any

#: Shown name of a value (a level of ``workbench.stats.correlate``, a legend title).
DISPLAY_NAMES = {
    "pooled": "pooled",
    "per_group": "per model",
    "per_group_mean": "per model (mean)",
    "per_model_mean": "per model (mean)",
    "scope": "level",
}


def display_name(value: Any) -> str:
    """The name a figure shows for ``value`` (itself unless :data:`DISPLAY_NAMES` has it).

    Examples
    --------
    >>> display_name("per_group_mean"), display_name("per model (mean)"), display_name(0.5)
    ('per model (mean)', 'per model (mean)', '0.5')
    """
    return DISPLAY_NAMES.get(value, str(value)) if isinstance(value, str) else str(value)
