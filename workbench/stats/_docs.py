"""Docstring paragraphs several statistics share, written once (as scipy's ``doccer``).

A line ``{rng}`` in a docstring becomes :data:`PARAMETERS` ``["rng"]`` at import, indented
like the placeholder, so ``help()`` and the doctests see the whole docstring.
"""

from __future__ import annotations

import re

#: Parameter paragraphs by placeholder name (numpydoc: name line, description indented).
PARAMETERS = {
    "ci_level": "ci_level : float, default 0.95\n    Confidence level.",
    "rng": "rng : numpy.random.Generator or int, optional\n    Required when ``n_boot > 0``.",
    "ddof": "ddof : int, default 1\n    Delta degrees of freedom of every standard deviation.",
}


def shared_docs(func=None, **more: str):
    """Fill a docstring's ``{name}`` placeholders (a line's last word) from
    :data:`PARAMETERS` and ``more``: ``@shared_docs`` or ``@shared_docs(seed="A. (2024).")``.

    Examples
    --------
    >>> @shared_docs(note="Drawn once.")
    ... def f(rng=None):
    ...     '''Draw.
    ...
    ...     {rng}
    ...     .. note:: {note}
    ...     '''
    >>> print(f.__doc__.rstrip())
    Draw.
    <BLANKLINE>
        rng : numpy.random.Generator or int, optional
            Required when ``n_boot > 0``.
        .. note:: Drawn once.
    """
    paragraphs = {**PARAMETERS, **more}

    def fill(match: re.Match) -> str:
        indent, before, name = match.groups()
        if name not in paragraphs:
            raise KeyError(f"no shared docstring paragraph {name!r}")
        return indent + before + paragraphs[name].replace("\n", "\n" + indent)

    def decorate(f):
        f.__doc__ = re.sub(r"^([ \t]*)(.*?)\{(\w+)\}[ \t]*$", fill, f.__doc__ or "", flags=re.M)
        return f

    return decorate(func) if func is not None else decorate
