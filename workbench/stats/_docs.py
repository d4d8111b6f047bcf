"""Docstring paragraphs several statistics share, written once.

A docstring names a shared paragraph by a placeholder on a line of its own, ``{rng}``;
:func:`shared_docs` puts the paragraph there when the module is imported, indented like
the placeholder, so ``help()``, the rendered docs and the doctests see whole docstrings
(scipy's ``doccer`` and matplotlib's docstring interpolation work the same way).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

#: Parameter paragraphs, by placeholder name (numpydoc: name line, then the description
#: indented by four spaces).
PARAMETERS = {
    "ci_level": "ci_level : float, default 0.95\n    Confidence level.",
    "rng": "rng : numpy.random.Generator or int, optional\n    Required when ``n_boot > 0``.",
    "ddof": "ddof : int, default 1\n    Delta degrees of freedom of every standard deviation.",
}


def shared_docs(func: F | None = None, **more: str) -> F | Callable[[F], F]:
    """Fill the ``{name}`` placeholders of a docstring from :data:`PARAMETERS` and ``more``.

    Use it bare (``@shared_docs``) or with paragraphs of one module
    (``@shared_docs(seed="Author, A. (2024). Title.")``). A placeholder can stand alone on
    its line (the paragraph takes its indentation) or end a line (``.. [1] {seed}``).

    Examples
    --------
    >>> @shared_docs(note="Drawn once.")
    ... def f(rng=None):
    ...     '''Draw.
    ...
    ...     Parameters
    ...     ----------
    ...     {rng}
    ...
    ...     Notes
    ...     -----
    ...     {note}
    ...     '''
    >>> print(f.__doc__)
    Draw.
    <BLANKLINE>
        Parameters
        ----------
        rng : numpy.random.Generator or int, optional
            Required when ``n_boot > 0``.
    <BLANKLINE>
        Notes
        -----
        Drawn once.
    <BLANKLINE>
    """
    paragraphs = {**PARAMETERS, **more}

    def fill(match: re.Match) -> str:
        indent, before, name = match.groups()
        if name not in paragraphs:
            raise KeyError(f"no shared docstring paragraph {name!r}")
        return indent + before + paragraphs[name].replace("\n", "\n" + indent)

    def decorate(f: F) -> F:
        f.__doc__ = re.sub(r"^([ \t]*)(.*?)\{(\w+)\}[ \t]*$", fill, f.__doc__ or "", flags=re.M)
        return f

    return decorate(func) if func is not None else decorate
