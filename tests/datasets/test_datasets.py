"""Canonical tables: validation errors (file, row, column), folders, bundled sets."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pandas as pd
import pytest

import workbench.datasets
from workbench import config
from workbench.datasets import (
    CANONICAL_COLUMNS,
    list_datasets,
    load_dataset,
    load_folder,
    split_keywords,
    validate_items,
    validate_responses,
    validate_rubric,
    validate_spans,
)
from workbench.errors import DatasetError

ITEMS = [
    {
        "item_id": "q1",
        "lang": "ja",
        "category": "消費税",
        "question": "Q1?",
        "reference": "ABCDEFGHIJ",
        "keywords": "ABC| DEF ||",
    },
    {
        "item_id": "q2",
        "lang": "en",
        "category": "tax",
        "question": "Q2?",
        "reference": "Reference two.",
        "keywords": "",
    },
]


def write_csv(folder: Path, name: str, rows: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def raises(
    call,
    *,
    file_end: str | None = None,
    row: int | None = None,
    column: str | None = None,
    match: str | None = None,
) -> DatasetError:
    with pytest.raises(DatasetError) as info:
        call()
    err = info.value
    if file_end is not None:
        assert err.file is not None and err.file.endswith(file_end), err.file
    assert err.row == row, (err.row, str(err))
    assert err.column == column, (err.column, str(err))
    if match is not None:
        assert match in str(err), str(err)
    return err


def items_frame(rows=None) -> pd.DataFrame:
    return pd.DataFrame(rows if rows is not None else ITEMS)


# --------------------------------------------------------------------------- items


def test_items_normalised():
    items = validate_items(items_frame())
    assert list(items.columns[:8]) == list(CANONICAL_COLUMNS["items"])
    assert items.loc[0, "keywords"] == ["ABC", "DEF"]
    assert items.loc[1, "keywords"] == []
    assert list(items["perturbation"]) == ["none", "none"]
    assert list(items["source_item"]) == ["q1", "q2"]


def test_items_integer_categories_become_int():
    rows = [dict(r, category=str(c)) for r, c in zip(ITEMS, (1, 3), strict=True)]
    items = validate_items(items_frame(rows))
    assert list(items["category"]) == [1, 3]
    assert all(isinstance(c, int) for c in items["category"])


def test_missing_column_names_file_and_column():
    frame = items_frame().drop(columns=["question"])
    err = raises(
        lambda: validate_items(frame, file="x/items.csv"),
        file_end="x/items.csv",
        row=None,
        column="question",
        match="missing column",
    )
    assert "file x/items.csv" in str(err)


def test_empty_required_field_names_row_and_column():
    rows = [dict(ITEMS[0]), dict(ITEMS[1], question="   ")]
    err = raises(
        lambda: validate_items(items_frame(rows)),
        row=2,
        column="question",
        match="empty required field",
    )
    assert "spreadsheet line 3" in str(err)


def test_empty_reference_allowed_only_when_asked():
    rows = [dict(ITEMS[0], reference="")]
    raises(lambda: validate_items(items_frame(rows)), row=1, column="reference")
    assert validate_items(items_frame(rows), require_reference=False).loc[0, "reference"] == ""


def test_duplicate_item_id():
    rows = [ITEMS[0], ITEMS[1], dict(ITEMS[1], question="other")]
    raises(
        lambda: validate_items(items_frame(rows)),
        row=3,
        column="item_id",
        match="duplicate item_id 'q2' (first at row 2)",
    )


def test_lang_outside_vocabulary():
    rows = [dict(ITEMS[0], lang="jp")]
    raises(lambda: validate_items(items_frame(rows)), row=1, column="lang", match="'jp'")


def test_unknown_source_item():
    rows = [dict(ITEMS[0], source_item="nope")]
    raises(lambda: validate_items(items_frame(rows)), row=1, column="source_item")


# --------------------------------------------------------------------------- rubric

RUBRIC = [
    {"item_id": "q1", "criterion_id": "m1", "text": "must text", "weight": "", "kind": "must"},
    {"item_id": "q1", "criterion_id": "c1", "text": "check", "weight": "8", "kind": "item"},
    {"item_id": "q1", "criterion_id": "c2", "text": "danger", "weight": "-10", "kind": "item"},
]


def test_rubric_weights_are_numbers():
    rubric = validate_rubric(pd.DataFrame(RUBRIC), items=validate_items(items_frame()))
    assert math.isnan(rubric.loc[0, "weight"])
    assert list(rubric["weight"][1:]) == [8.0, -10.0]


def test_rubric_weight_not_a_number():
    rows = [RUBRIC[0], dict(RUBRIC[1], weight="eight")]
    raises(
        lambda: validate_rubric(pd.DataFrame(rows), file="rubric.csv"),
        row=2,
        column="weight",
        match="'eight' is not a number",
    )


def test_rubric_checklist_item_needs_weight():
    rows = [dict(RUBRIC[1], weight="")]
    raises(lambda: validate_rubric(pd.DataFrame(rows)), row=1, column="weight")


def test_rubric_kind_vocabulary_and_duplicates_and_unknown_item():
    items = validate_items(items_frame())
    raises(
        lambda: validate_rubric(pd.DataFrame([dict(RUBRIC[0], kind="bonusx")])),
        row=1,
        column="kind",
    )
    raises(
        lambda: validate_rubric(pd.DataFrame([RUBRIC[1], RUBRIC[1]])),
        row=2,
        column="criterion_id",
        match="duplicate",
    )
    raises(
        lambda: validate_rubric(pd.DataFrame([dict(RUBRIC[0], item_id="q9")]), items=items),
        row=1,
        column="item_id",
        match="not in the items table",
    )


# --------------------------------------------------------------------------- responses

RESPONSES = [
    {"item_id": "q1", "answer_model": "m-a", "sample": "0", "response": "ABCxyz"},
    {"item_id": "q1", "answer_model": "m-b", "sample": "0", "response": "DEF only"},
]


def test_responses_checks():
    items = validate_items(items_frame())
    out = validate_responses(pd.DataFrame(RESPONSES), items=items)
    assert list(out["answer_sample"]) == [0, 0] and "sample" not in out.columns
    no_sample = validate_responses(pd.DataFrame(RESPONSES).drop(columns=["sample"]))
    assert list(no_sample["answer_sample"]) == [0, 0]
    named = validate_responses(pd.DataFrame(RESPONSES).rename(columns={"sample": "answer_sample"}))
    assert list(named["answer_sample"]) == [0, 0]
    raises(
        lambda: validate_responses(pd.DataFrame([RESPONSES[0], RESPONSES[0]])),
        row=2,
        column="answer_model",
        match="duplicate",
    )
    raises(
        lambda: validate_responses(pd.DataFrame([dict(RESPONSES[0], sample="1.5")])),
        row=1,
        column="sample",
        match="not an integer",
    )
    raises(
        lambda: validate_responses(pd.DataFrame([dict(RESPONSES[0], item_id="zz")]), items=items),
        row=1,
        column="item_id",
    )
    raises(
        lambda: validate_responses(pd.DataFrame([dict(RESPONSES[0], response="")])),
        row=1,
        column="response",
    )


# --------------------------------------------------------------------------- spans

SPANS = [
    {
        "item_id": "q1",
        "unit_id": "u1",
        "role": "gist",
        "start": "0",
        "end": "3",
        "label": "unit",
        "text_source": "reference",
        "answer_model": "",
        "text": "ABC",
    },
    {
        "item_id": "q1",
        "unit_id": "u2",
        "role": "detail",
        "start": "3",
        "end": "10",
        "label": "unit",
        "text_source": "reference",
        "answer_model": "",
        "text": "DEFGHIJ",
    },
    {
        "item_id": "q1",
        "unit_id": "e1",
        "role": "detail",
        "start": "3",
        "end": "6",
        "label": "excess",
        "text_source": "m-a",
        "answer_model": "",
        "text": "xyz",
    },
    {
        "item_id": "q1",
        "unit_id": "u2",
        "role": "detail",
        "start": "3",
        "end": "10",
        "label": "missing",
        "text_source": "reference",
        "answer_model": "m-a",
        "text": "",
    },
]


def span_tables():
    items = validate_items(items_frame())
    responses = validate_responses(pd.DataFrame(RESPONSES), items=items)
    return items, responses


def check_spans(rows):
    items, responses = span_tables()
    return validate_spans(pd.DataFrame(rows), items=items, responses=responses, file="spans.csv")


def test_spans_valid_and_sliced():
    spans = check_spans(SPANS)
    assert list(spans["text"]) == ["ABC", "DEFGHIJ", "xyz", "DEFGHIJ"]
    assert list(spans["answer_model"]) == ["", "", "m-a", "m-a"]
    assert spans["start"].dtype.kind == "i" and spans["end"].dtype.kind == "i"


@pytest.mark.parametrize(
    ("change", "column", "match"),
    [
        ({"end": "11"}, "end", "runs past the end"),
        ({"start": "-1"}, "start", "negative"),
        ({"start": "3", "end": "3"}, "end", "empty or reversed"),
        ({"start": "5", "end": "2"}, "end", "empty or reversed"),
        ({"end": "x"}, "end", "not an integer"),
        ({"text": "ABD"}, "text", "differs"),
        ({"role": "main"}, "role", "'main'"),
        ({"label": "extra"}, "label", "'extra'"),
    ],
)
def test_span_defects(change, column, match):
    rows = [dict(SPANS[0], **change)]
    raises(lambda: check_spans(rows), file_end="spans.csv", row=1, column=column, match=match)


def test_span_in_response_outside_its_text():
    rows = [SPANS[0], dict(SPANS[2], end="7")]  # "ABCxyz" has 6 characters
    raises(lambda: check_spans(rows), row=2, column="end", match="6 characters")


def test_span_source_and_model_rules():
    raises(
        lambda: check_spans([dict(SPANS[2], text_source="reference")]), row=1, column="text_source"
    )
    raises(lambda: check_spans([dict(SPANS[3], answer_model="")]), row=1, column="answer_model")
    raises(
        lambda: check_spans([dict(SPANS[3], answer_model="m-zz")]),
        row=1,
        column="answer_model",
        match="no response",
    )
    raises(lambda: check_spans([dict(SPANS[0], text_source="m-a")]), row=1, column="text_source")
    raises(lambda: check_spans([SPANS[0], SPANS[0]]), row=2, column="unit_id", match="duplicate")
    raises(lambda: check_spans([dict(SPANS[0], item_id="q7")]), row=1, column="item_id")


def test_split_keywords():
    assert split_keywords(" a | b||c ") == ["a", "b", "c"]
    assert split_keywords(["x ", " "]) == ["x"]
    assert split_keywords(float("nan")) == []


# --------------------------------------------------------------------------- folders


def test_load_folder_reads_csv_and_reports_row_numbers(tmp_path):
    folder = tmp_path / "mine"
    rows = [
        dict(ITEMS[0], question="multi\nline\nquestion"),
        dict(ITEMS[1]),
        dict(ITEMS[1], item_id="q3", lang=""),
    ]
    write_csv(folder, "items.csv", rows)
    # the quoted multi-line field spans three file lines, but rows count records
    err = raises(lambda: load_folder(folder), file_end="mine/items.csv", row=3, column="lang")
    assert "spreadsheet line 4" in str(err)


def test_load_folder_all_tables(tmp_path):
    folder = tmp_path / "set"
    write_csv(folder, "items.csv", ITEMS)
    write_csv(folder, "rubric.csv", RUBRIC)
    write_csv(folder, "responses.csv", RESPONSES)
    write_csv(
        folder,
        "human_scores.csv",
        [
            {
                "item_id": "q1",
                "answer_model": "m-a",
                "rater": "r1",
                "dimension": "overall",
                "score": "4",
            }
        ],
    )
    write_csv(folder, "spans.csv", SPANS)
    data = load_folder(folder)
    assert set(data) == {"items", "rubric", "responses", "human_scores", "spans"}
    assert data["human_scores"].loc[0, "score"] == 4.0
    assert len(data["spans"]) == 4
    # the original multi-line text and exact characters are kept (no stripping)
    assert data["items"].loc[1, "reference"] == "Reference two."


def test_load_folder_missing_files_give_empty_canonical_frames(tmp_path):
    write_csv(tmp_path / "s", "items.csv", ITEMS)
    data = load_folder(tmp_path / "s")
    for table in ("rubric", "responses", "human_scores", "spans"):
        assert data[table].empty
        assert list(data[table].columns) == list(CANONICAL_COLUMNS[table])


def test_human_score_not_a_number(tmp_path):
    folder = tmp_path / "h"
    write_csv(folder, "items.csv", ITEMS)
    write_csv(
        folder,
        "human_scores.csv",
        [{"item_id": "q1", "answer_model": "m", "rater": "r", "dimension": "d", "score": "high"}],
    )
    raises(lambda: load_folder(folder), file_end="h/human_scores.csv", row=1, column="score")


def test_file_level_defects(tmp_path):
    folder = tmp_path / "enc"
    folder.mkdir()
    (folder / "items.csv").write_bytes(
        "item_id,lang,category,question,reference,keywords\nq,ja,税,質問,参照,\n".encode("cp932")
    )
    raises(lambda: load_folder(folder), file_end="enc/items.csv", match="not UTF-8")
    raises(lambda: load_folder(tmp_path / "absent"), match="not found")
    empty = tmp_path / "noitems"
    empty.mkdir()
    raises(lambda: load_folder(empty), file_end="noitems/items.csv", match="missing items.csv")


def test_byte_order_mark_is_accepted(tmp_path):
    folder = tmp_path / "bom"
    folder.mkdir()
    text = "item_id,lang,category,question,reference,keywords\nq,ja,税,質問,参照,a|b\n"
    (folder / "items.csv").write_bytes(text.encode("utf-8-sig"))
    assert load_folder(folder)["items"].loc[0, "keywords"] == ["a", "b"]


def header_only(folder: Path, name: str, columns) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(",".join(columns) + "\n", encoding="utf-8")


def test_a_header_only_items_file_is_an_error_naming_it(tmp_path):
    """Issue 10: zero items is never a data set (it used to load as one)."""
    header_only(tmp_path / "h", "items.csv", CANONICAL_COLUMNS["items"])
    raises(lambda: load_folder(tmp_path / "h"), file_end="h/items.csv", match="no items")
    raises(lambda: validate_items(items_frame([]).reindex(columns=list(ITEMS[0]))), file_end="<items table>",
           match="no data rows")


def test_header_only_optional_tables_are_empty_tables(tmp_path):
    """An optional table with only its header is an empty table, as if the file were absent."""
    folder = tmp_path / "opt"
    write_csv(folder, "items.csv", ITEMS)
    for table in ("rubric", "responses", "human_scores", "spans"):
        header_only(folder, f"{table}.csv", CANONICAL_COLUMNS[table])
    data = load_folder(folder)
    for table in ("rubric", "responses", "human_scores", "spans"):
        assert data[table].empty and list(data[table].columns) == list(CANONICAL_COLUMNS[table]), table


def test_a_header_only_reports_file_is_an_error_naming_it(tmp_path):
    folder = tmp_path / "rep"
    header_only(folder, "reports.csv", REPORT)
    raises(lambda: load_folder(folder), file_end="rep/reports.csv", match="no reports")


@pytest.mark.parametrize(("name", "table"), [("s1_medical_ja", "rubric"), ("s5_accounting_ja", "spans")])
def test_a_bundled_set_refuses_an_empty_table_it_needs(monkeypatch, tmp_path, name, table):
    source = config.data_dir() / name
    target = tmp_path / "data" / name
    target.mkdir(parents=True)
    for path in source.glob("*.csv"):
        (target / path.name).write_bytes(path.read_bytes())
    header_only(target, f"{table}.csv", CANONICAL_COLUMNS[table])
    monkeypatch.setenv("WORKBENCH_ROOT", str(tmp_path))
    raises(lambda: load_dataset(name), file_end=f"{name}/{table}.csv", match=f"non-empty {table}.csv")


# --------------------------------------------------------------------------- reports folders


def report_folder(tmp_path: Path, rows: list[dict], texts: dict[str, str]) -> Path:
    folder = tmp_path / "reports_set"
    write_csv(folder, "reports.csv", rows)
    (folder / "reports").mkdir(exist_ok=True)
    for slug, text in texts.items():
        (folder / "reports" / f"{slug}.md").write_text(text, encoding="utf-8")
    return folder


REPORT = {
    "slug": "a-report",
    "date": "2026-01-02",
    "pipeline_version": "v1",
    "track": "tech",
    "title": "T",
    "topic": "Topic",
    "lang": "en",
    "quality_note": "",
    "padded_from": "",
}


def test_report_folder_defects(tmp_path):
    ok = report_folder(
        tmp_path,
        [REPORT, dict(REPORT, slug="b", padded_from="a-report")],
        {"a-report": "# A\ntext", "b": "# A\nlonger text"},
    )
    data = load_folder(ok)
    assert list(data["items"]["perturbation"]) == ["none", "padding"]
    assert list(data["items"]["source_item"]) == ["a-report", "a-report"]
    assert list(data["responses"]["answer_model"]) == ["pipeline-v1", "pipeline-v1"]
    for rows, texts, row, column in (
        ([dict(REPORT, slug="../etc")], {}, 1, "slug"),
        ([REPORT, REPORT], {"a-report": "x"}, 2, "slug"),
        ([dict(REPORT, date="21/02/2026")], {"a-report": "x"}, 1, "date"),
        ([dict(REPORT, padded_from="ghost")], {"a-report": "x"}, 1, "padded_from"),
        ([REPORT], {}, 1, "slug"),  # no reports/a-report.md
        ([dict(REPORT, topic="")], {"a-report": "x"}, 1, "topic"),
    ):
        folder = report_folder(tmp_path / f"case{row}{column}{len(rows)}", rows, texts)
        raises(lambda f=folder: load_folder(f), file_end="reports.csv", row=row, column=column)


# --------------------------------------------------------------------------- bundled sets


def test_unknown_dataset_lists_the_known_ones():
    err = raises(lambda: load_dataset("s9_nothing"))
    for name in list_datasets():
        assert name in str(err)


BUNDLED = ["s1_medical_ja", "s2_civil_ja", "s3_hiv_en", "s4_reports", "s5_accounting_ja"]


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_sets_load_and_have_provenance(name):
    folder = config.data_dir() / name
    if not folder.is_dir():  # pragma: no cover - only while a data helper is still writing
        pytest.skip(f"data/{name} not written yet")
    readme = " ".join((folder / "README.md").read_text(encoding="utf-8").split()).lower()
    assert "written for this workbench" in readme or "written for this project" in readme
    assert "not expert-validated" in readme
    data = load_dataset(name)
    items = data["items"]
    assert len(items) > 0 and items["item_id"].is_unique
    assert set(items["lang"]) <= {"ja", "en", "zh"}
    assert all(isinstance(k, list) for k in items["keywords"])


def test_s1_s2_s3_set_specific_content():
    if not all((config.data_dir() / n).is_dir() for n in BUNDLED[:3]):  # pragma: no cover
        pytest.skip("S1-S3 data not written yet")
    s1 = load_dataset("s1_medical_ja")
    assert len(s1["items"]) == 10 and set(s1["rubric"]["kind"]) == {
        "must",
        "bonus",
        "penalty",
        "item",
    }
    s2 = load_dataset("s2_civil_ja")
    assert len(s2["items"]) == 50
    s3 = load_dataset("s3_hiv_en")["items"]
    assert set(s3["category"]) == {1, 2, 3}
    assert (s3.loc[s3["category"] == 3, "wrong_answer"].str.strip() != "").all()


def test_s4_reports():
    data = load_dataset("s4_reports")
    reports, items, responses = data["reports"], data["items"], data["responses"]
    assert len(reports) >= 8
    originals = reports[reports["padded_from"] == ""]
    assert (originals.groupby("pipeline_version").size() >= 4).all()
    assert originals["pipeline_version"].nunique() >= 2
    padded = reports[reports["padded_from"] != ""]
    assert len(padded) >= 2
    words = reports.set_index("slug")["n_words"]
    for slug, original in zip(padded["slug"], padded["padded_from"], strict=True):
        assert words[slug] > 1.4 * words[original]
    assert set(items["perturbation"]) == {"none", "padding"}
    assert (items["reference"] == "").all()
    assert set(responses["answer_model"]) == {
        "pipeline-" + v for v in reports["pipeline_version"].unique()
    }
    assert all(r.lstrip().startswith("# ") for r in responses["response"])


def test_s5_spans_cover_references_and_point_at_their_texts():
    data = load_dataset("s5_accounting_ja")
    items = data["items"].set_index("item_id")
    spans, responses = data["spans"], data["responses"]
    assert len(items) == 20
    per_item = responses.groupby("item_id").size()
    assert per_item.between(2, 3).all()
    units = spans[spans["label"] == "unit"].sort_values(["item_id", "start"])
    for item_id, group in units.groupby("item_id"):
        reference = items.loc[item_id, "reference"]
        # units tile the reference exactly: contiguous, no gap, no overlap
        assert list(group["start"])[0] == 0 and list(group["end"])[-1] == len(reference)
        assert list(group["start"])[1:] == list(group["end"])[:-1]
        assert "".join(group["text"]) == reference
        for keyword in items.loc[item_id, "keywords"]:
            assert keyword in reference
    texts = responses.set_index(["item_id", "answer_model"])["response"]
    for row in spans[spans["label"] == "excess"].itertuples():
        assert texts[(row.item_id, row.answer_model)][row.start : row.end] == row.text
    missing = spans[spans["label"] == "missing"]
    unit_spans = set(
        zip(units["item_id"], units["unit_id"], units["start"], units["end"], strict=True)
    )
    for row in missing.itertuples():
        assert (row.item_id, row.unit_id, row.start, row.end) in unit_spans
    # every class is present, and some answers have none of a class (seed Table 1)
    flagged = spans[spans["label"] != "unit"]
    assert set(zip(flagged["label"], flagged["role"], strict=True)) == {
        ("excess", "gist"),
        ("excess", "detail"),
        ("missing", "gist"),
        ("missing", "detail"),
    }
    answers = set(zip(responses["item_id"], responses["answer_model"], strict=True))
    with_excess = set(
        zip(
            flagged.loc[flagged["label"] == "excess", "item_id"],
            flagged.loc[flagged["label"] == "excess", "answer_model"],
            strict=True,
        )
    )
    assert 0 < len(answers - with_excess) < len(answers)


def test_load_dataset_leaves_the_simulator_registry_alone():
    from workbench.sim import registry

    before = registry.snapshot()
    load_dataset("s5_accounting_ja")
    assert registry.snapshot() == before


def test_datasets_import_no_sim_llm_or_judges():
    """datasets sits below the calls and methods layers (function-level imports count)."""
    package = Path(workbench.datasets.__file__).parent
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                assert not name.startswith(
                    ("workbench.sim", "workbench.llm", "workbench.judges")
                ), f"{path.name}:{node.lineno} imports {name}"
