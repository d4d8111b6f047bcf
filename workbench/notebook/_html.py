"""A run folder as pages a browser opens without Jupyter: ``index.html`` and one page per
executed notebook.

Each executed copy ``<name>.ipynb`` becomes ``<name>.html`` (nbconvert's HTML exporter,
``lab`` template: the figures the kernel showed are embedded in the page as images, the
styles inline). ``index.html`` lists the folder's runs (from their ``.run.json``
records): status, the parameters that differ from the defaults, backend, judge models,
commit, the headline numbers, a link to the notebook's page, and the run's saved PNG
figures (``figures/<study>/``, relative links, only to files inside the folder). A
record that is not sound is named on the page instead of its section. Send the folder
and the reader opens ``index.html``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from workbench.notebook._runs import (
    RECORD_SUFFIX,
    flat_numbers,
    inside,
    read_json,
    record_problem,
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border: 1px solid #ccc; padding: .2em .6em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.failed { color: #b00; font-weight: bold; } .ok { color: #070; }
figure { display: inline-block; margin: .5em; } figure img { max-width: 34em; border: 1px solid #ddd; }
figcaption { font-size: .85em; color: #555; }
"""


def notebook_page(notebook: Path) -> Path:
    """``<name>.html`` beside an executed notebook (rewritten only when the notebook is
    newer)."""
    target = notebook.with_suffix(".html")
    if target.exists() and target.stat().st_mtime >= notebook.stat().st_mtime:
        return target
    import nbformat
    from nbconvert import HTMLExporter

    doc = nbformat.read(notebook, as_version=4)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(
        doc, resources={"metadata": {"name": notebook.stem}})
    target.write_text(body, encoding="utf-8")
    return target


def _table(rows: list[tuple[str, Any]]) -> str:
    cells = []
    for key, value in rows:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        cells.append(f"<tr><th>{html.escape(key)}</th>"
                     f"<td{' class=num' if number else ''}>{html.escape(shown)}</td></tr>")
    return "<table>" + "".join(cells) + "</table>"


def _section(folder: Path, rec: dict[str, Any]) -> str:
    name = rec.get("notebook", "?")
    status = rec.get("status") or "?"
    parts = [f"<h2 id='{html.escape(name)}'>{html.escape(name)} "
             f"<span class='{html.escape(status)}'>{html.escape(status)}</span></h2>"]
    if rec.get("error"):
        parts.append(f"<p class=failed>{html.escape(rec['error'])}</p>")
    page = folder / f"{name}.html"
    if page.exists():
        parts.append(f"<p><a href='{html.escape(page.name)}'>the executed notebook</a> "
                     f"(<code>{html.escape(name)}.ipynb</code> opens in Jupyter)</p>")
    changed = rec.get("changed") or {}
    parts.append(_table([
        ("study", rec.get("study") or "-"), ("started (UTC)", rec.get("started", "-")),
        ("seconds", rec.get("seconds", "-")),
        ("parameters changed", ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}"
                                         for k, v in changed.items()) or "none (defaults)"),
        ("backend", rec.get("backend", "-")),
        ("judge models", ", ".join(rec.get("judge_models") or []) or "-"),
        ("workbench", rec.get("version", "-")), ("git commit", rec.get("commit") or "-"),
    ]))
    numbers = flat_numbers(rec.get("headline") or {})
    if numbers:
        parts.append("<h3>Headline numbers</h3>" + _table(list(numbers.items())))
    studies = rec.get("study")
    for study in [studies] if isinstance(studies, str) else (studies or []):
        for png in sorted((folder / "figures" / study).glob("*.png")):
            if not inside(folder, png):  # a link out of the run folder
                continue
            rel = png.relative_to(folder).as_posix()
            parts.append(f"<figure><a href='{html.escape(rel)}'><img src='{html.escape(rel)}' "
                         f"alt='{html.escape(png.stem)}'></a><figcaption>{html.escape(rel)}"
                         "</figcaption></figure>")
    return "\n".join(parts)


def write_page(folder: Path, *, notebooks: bool = True) -> Path:
    """Write the notebook pages (``notebooks``: those older than their notebook) and
    ``index.html`` of a run folder; return the index."""
    folder = Path(folder)
    for notebook in sorted(folder.glob("*.ipynb")) if notebooks else ():
        notebook_page(notebook)
    records, odd = [], []
    for path in sorted(folder.glob(f"*{RECORD_SUFFIX}")):
        rec, why = read_json(path)
        why = why or record_problem(rec)
        if why:
            odd.append(f"<li><code>{html.escape(path.name)}</code>: {html.escape(why)}</li>")
        else:
            records.append(rec)
    toc = "".join(f"<li><a href='#{html.escape(r['notebook'])}'>{html.escape(r['notebook'])}</a>"
                  f" — {html.escape(r.get('status') or '?')}</li>" for r in records)
    body = "\n".join(_section(folder, r) for r in records)
    if odd:
        body += ("<h2>Records not shown</h2><p class=failed>These run records are not "
                 "sound (tampered with, or half written):</p><ul>" + "".join(odd) + "</ul>")
    index = folder / "index.html"
    index.write_text(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<title>Run {html.escape(folder.name)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Run {html.escape(folder.name)}</h1><p>Made by <code>workbench run</code>; opens "
        f"without Jupyter. Notebooks:</p><ul>{toc}</ul>{body}</body></html>\n",
        encoding="utf-8")
    return index
