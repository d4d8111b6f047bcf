"""``workbench qualify``: the qualification report of your own judge-vs-human table.

::

    workbench qualify verdicts.csv -c 'verdict: output' -c 'label: gold' \\
        --verdicts '{0: A, 1: B, 2: tie}' --second-order positional --out report/

Reads the table with :func:`workbench.datasets.load_pairwise` (when it holds verdicts)
or :func:`~workbench.datasets.load_pointwise` (scores), then writes
:func:`workbench.report.qualification_report`: ``index.html`` with the figures and
tables, and one CSV per table. Every mapping option takes YAML (``-c`` is repeatable);
``--spec`` takes a YAML file of the loader's keyword arguments (``kind``, ``columns``,
``verdicts``, ``second_order``, ``judges`` ...), which the options override. A table
with problems is an error listing every bad row (file, line, field, why).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _yaml(text: str | None, what: str) -> Any:
    import yaml

    if text is None:
        return None
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _fail(f"{what}: not YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(value, dict):
        raise _fail(f"{what}: expected a YAML mapping such as '{{a: b}}', got {text!r}")
    return value


def qualify(
    table: Annotated[Path, typer.Argument(help="CSV, TSV, JSONL or JSON table (order 0 when "
                                               "--swapped is given).")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Report folder (default: "
                                             "<table stem>_qualification/ here).")] = None,
    kind: Annotated[str, typer.Option("--kind", help="pairwise, pointwise or auto (pairwise "
                                      "when the table has verdicts).")] = "auto",
    columns: Annotated[list[str] | None, typer.Option(
        "--columns", "-c", help="YAML: canonical name -> your column, e.g. 'verdict: output' "
        "(repeatable).")] = None,
    verdicts: Annotated[str | None, typer.Option("--verdicts", help="YAML: your verdict codes -> "
                                                 "A/B/tie, e.g. '{0: A, 1: B, 2: tie}'.")] = None,
    labels: Annotated[str | None, typer.Option("--labels", help="YAML: label codes (default: "
                                               "--verdicts).")] = None,
    second_order: Annotated[str | None, typer.Option(
        "--second-order", help="positional (order-1 verdicts name the position shown) or "
        "original (already mapped back).")] = None,
    swapped: Annotated[Path | None, typer.Option("--swapped", help="The same items judged in the "
                                                 "other order (line-aligned file).")] = None,
    items: Annotated[Path | None, typer.Option("--items", help="Per-item table joined on item_id "
                                               "(or line position).")] = None,
    constants: Annotated[str | None, typer.Option("--set", help="YAML: columns set to one value, "
                                                  "e.g. 'judge: my-judge'.")] = None,
    recode: Annotated[str | None, typer.Option("--recode", help="YAML: column -> {value: new "
                                               "value}.")] = None,
    judges: Annotated[str | None, typer.Option("--judges", help="Pointwise, wide: comma-separated "
                                               "columns that each hold one judge's scores.")] = None,
    annotators: Annotated[str | None, typer.Option(
        "--annotators", help="Pointwise, wide: comma-separated columns of people's scores.")] = None,
    explode: Annotated[bool, typer.Option("--explode", help="Spread list cells to one row per "
                                          "item.")] = False,
    spec: Annotated[Path | None, typer.Option("--spec", help="YAML file of loader keyword "
                                              "arguments (and kind).")] = None,
    by: Annotated[str, typer.Option("--by", help="Group column.")] = "group",
    method: Annotated[str, typer.Option("--method", help="Correlation (pointwise).")] = "kendall",
    n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples.")] = 1000,
    n_rep: Annotated[int, typer.Option("--n-rep", help="PPI simulation repetitions.")] = 200,
    epsilon: Annotated[float, typer.Option("--epsilon", help="Alternative annotator test "
                                           "allowance.")] = 0.2,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    encoding: Annotated[str | None, typer.Option("--encoding", help="The files' text encoding "
                                                 "(default UTF-8), e.g. latin-1, shift_jis."
                                                 )] = None,
    pattern: Annotated[str | None, typer.Option(
        "--pattern", help="Pairwise, free-text verdicts: a regular expression whose first "
        "group is the verdict code (mapped by --verdicts); unmatched replies are unparsed."
        )] = None,
    nested: Annotated[str | None, typer.Option(
        "--nested", help="A nested JSON release: the path to walk, e.g. "
        "'{item_id}.{system}.{dimension}'.")] = None,
    target_width: Annotated[float | None, typer.Option(
        "--target-width", help="PPI target: a 95% interval width.")] = None,
    target_labels: Annotated[int | None, typer.Option(
        "--target-labels", help="PPI target: the width this many human labels alone give "
        "(default: half the labelled units).")] = None,
) -> None:
    """Write the qualification report of a judge-vs-human table (HTML + CSVs)."""
    import yaml

    from workbench.datasets import load_table
    from workbench.errors import DatasetError
    from workbench.report import qualification_report

    options: dict[str, Any] = {}
    if spec is not None:
        try:
            options = yaml.safe_load(spec.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise _fail(f"--spec {spec}: {exc}") from None
        if not isinstance(options, dict):
            raise _fail(f"--spec {spec}: expected a YAML mapping of keyword arguments")
    mapping = dict(options.pop("columns", None) or {})
    for text in columns or []:
        mapping.update(_yaml(text, "--columns"))
    given = {"verdicts": _yaml(verdicts, "--verdicts"), "labels": _yaml(labels, "--labels"),
             "second_order": second_order, "constants": _yaml(constants, "--set"),
             "recode": _yaml(recode, "--recode"),
             "items": str(items) if items else None,
             "judges": [c.strip() for c in judges.split(",")] if judges else None,
             "annotators": [c.strip() for c in annotators.split(",")] if annotators else None,
             "explode": explode or None, "encoding": encoding, "pattern": pattern,
             "nested": nested}
    options.update({k: v for k, v in given.items() if v is not None})
    options["columns"] = mapping or None
    spec_kind = options.pop("kind", "auto")
    kind = spec_kind if kind == "auto" else kind
    if swapped:
        options["swapped"] = str(swapped)
    hint = _column_hint(table, kind, options)
    if hint:
        raise _fail(f"file {table}: {hint}")
    try:
        frame = load_table(str(table), kind=kind, **{k: v for k, v in options.items()
                                                 if v is not None})
    except (DatasetError, ValueError) as exc:  # ValueError: an option of the other kind
        raise _fail(str(exc) if isinstance(exc, DatasetError) else f"{table}: {exc}") from None
    folder = out or Path(f"{table.stem}_qualification")
    try:
        result = qualification_report(frame, folder, by=by, method=method, n_boot=n_boot,
                                      n_rep=n_rep, epsilon=epsilon, rng=seed,
                                      target_width=target_width, target_labels=target_labels)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    for answer in result["answers"]:
        typer.echo(f"- {answer}")
    typer.echo(f"report: {result['path']}")


def _column_hint(table: Path, kind: str, options: dict) -> str | None:
    """What the file lacks, with a mapping that fits its columns (None: nothing lacks, or
    the loader will say why it cannot read the file)."""
    from workbench.datasets._long_guess import column_hint
    from workbench.datasets._long_load import _PAIRWISE_ONLY, _header

    header = _header(str(table), options.get("encoding"))
    if not header or table.suffix.lower() not in (".csv", ".tsv", ".jsonl"):
        return None
    if options.get("swapped") or options.get("items") or options.get("nested"):
        return None  # columns may come from the other files: the loader checks
    mapped = {**(options.get("columns") or {}),
              **{k: k for k in (options.get("constants") or {})}}
    if kind == "auto":
        pairwise = (bool(_PAIRWISE_ONLY & {k for k, v in options.items() if v is not None})
                    or "verdict" in mapped or "verdict" in header)
        kind = "pairwise" if pairwise else "pointwise"
    wide = bool(options.get("judges") or options.get("annotators"))
    return column_hint(header, kind, mapped, wide=wide)


def register(app: typer.Typer) -> None:
    """Add ``qualify`` to the ``workbench`` command."""
    app.command("qualify")(qualify)
