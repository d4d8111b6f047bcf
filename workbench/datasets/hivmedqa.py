"""Importer of the HIVMedQA release (repository ``medical_LLM_evaluation``, seed 002).

The release keeps every artefact as JSON lists under ``deploy_medical_llm_evaluation/``:
the questions per category, each answering model's answers per category and
iteration, the judge's (GPT-4o, temperature 0) replies with and without the gold
answer, the judge prompts, and the judged rephrased gold answers (the upper bound).
`load_release` turns them into long frames (judge replies as raw text: scores come
from ``workbench.judges.parse_dimension_reply`` with `RELEASE_KEYS` and `SCORE_RANGE`);
`release_replies` lists the (prompt, reply) pairs, which
``workbench.llm.write_replay_file`` writes for ``workbench cache import`` so the
release's real judge calls can be replayed.

Layout read (``<folder>`` is the answering model's folder, ``<stem>`` the model name
in the file name — they can differ: ``Llama_cluster`` holds ``Llama_…`` files):

- ``questions_files/HIV_evaluation_questionare_category_<c>.json``
- ``model_answers/raw/<folder>/<stem>_answers_category_<c>.<it>_HIV_EQ.json``
- ``model_answers/results-GPT-score/<folder>/GPT-score_<stem>_…`` (with reference)
- ``model_answers/results-unsupervised-GPT-score/<folder>/unsupervised-GPT-score_<stem>_…``
- ``model_answers/prompted_model_answers/<folder>/prompted_<stem>_…`` and
  ``model_answers/prompted_unsupervised_model_answers/<folder>/unsupervised_prompted_<stem>_…``
- ``gold_standard_rephrasing/results-GPT-score-rephrased/GPT-score_rephrased_true_answers_…``
- ``f1_raw.csv``: the release's own MedSynF1 per answer (read by `load_f1`)

Only files directly inside ``<folder>`` are read: folders of older runs (``old*``,
``*_old``, ``old_api*``, ``.ipynb_checkpoints``, hidden folders) and any deeper
sub-folder (the public repository keeps earlier runs in e.g. ``raw/After_pipeline/``)
are skipped. Files that do not follow the naming pattern are skipped and listed in the
``issues`` frame, as are empty lists and count mismatches.

References
----------
HIVMedQA: Benchmarking large language models for HIV medical decision support
(seed 002 of this project); https://github.com/GonzaloCardenalAl/medical_LLM_evaluation
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from workbench.datasets._hivmedqa_layout import QUESTIONS_RE, SOURCES, release_root, scan
from workbench.datasets._release import (
    read_json_list,
    records,
    relative,
)
from workbench.errors import DatasetError

__all__ = [
    "DIMENSIONS",
    "PAPER_CATEGORY",
    "RELEASE_KEYS",
    "REPHRASED_MODEL",
    "SCORE_RANGE",
    "F1_FILE",
    "default_display_names",
    "load_f1",
    "load_release",
    "release_replies",
]

DIMENSIONS = ("comprehension", "reasoning", "knowledge_recall", "demographic_bias", "harm")
"""The five MedGPT dimensions, in the release's order ("question 1" … "question 5")."""

RELEASE_KEYS = {dim: f"question {i}" for i, dim in enumerate(DIMENSIONS, start=1)}
"""Dimension -> the key of the judge reply's JSON object in the release."""

SCORE_RANGE = (0, 5)
"""The closed range of every MedGPT dimension score."""

REPHRASED_MODEL = "rephrased_true_answers"
"""``answer_model`` of the judged rephrased gold answers (the paper's upper bound)."""

PAPER_CATEGORY = {1: 1, 2: 2, 3: 3, 4: 5, 5: 4}
"""Release category -> the paper's category. Release 5 holds the category-3 vignettes,
in the same order, with an injected cognitive-bias sentence (the paper's category 4);
release 4 holds the 11 demographic/ethics questions (the paper's category 5, pooled in
its Table 2); release 6 is not in the paper and maps to NA."""

_DISPLAY_NAMES = (
    ("Claude", "Claude 3.5 Sonnet v2"),
    ("Gemini_2.5Pro", "Gemini 2.5 Pro"),
    ("Gemma-3-27B", "Gemma 3 27B"),
    ("Llama-1B", "Llama 3.2-1B-Instruct"),
    ("Llama-8B", "Llama 3.1-8B-Instruct"),
    ("Llama", "Llama 3.3-70B-Instruct"),
    ("Llama_cluster", "Llama 3.3-70B-Instruct"),
    ("Med42", "Med42-v2-70B"),
    ("MedGemma-3-27B", "MedGemma 27B"),
    ("Meditron", "Meditron 3-70B"),
    ("Meditron_cluster", "Meditron 3-70B"),
    ("NVLM", "NVLM-D-72B"),
    (REPHRASED_MODEL, "Rephrased gold answers"),
)


def default_display_names() -> pd.DataFrame:
    """The default folder -> paper-name table (a copy the caller may edit).

    Folder names as seen in the public repository, whose history holds more than one
    folder for some models (``Llama`` and ``Llama_cluster``, ``Meditron`` and
    ``Meditron_cluster``: runs of the same model); both spellings map to the paper's
    name, and `load_release` lists an issue when two imported folders share a name
    (choose one with ``models=``). A folder missing here is shown under its own name.
    Pass an edited table (or a dict) as ``display_names=`` to `load_release` to
    override.

    Examples
    --------
    >>> names = default_display_names()
    >>> names.loc[names.answer_model == "Llama_cluster", "display_name"].item()
    'Llama 3.3-70B-Instruct'
    """
    return pd.DataFrame(list(_DISPLAY_NAMES), columns=["answer_model", "display_name"])


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def _display_map(display_names) -> dict[str, str]:
    if display_names is None:
        display_names = default_display_names()
    if isinstance(display_names, pd.DataFrame):
        missing = {"answer_model", "display_name"} - set(display_names.columns)
        if missing:
            raise DatasetError(
                f"display_names needs columns answer_model and display_name "
                f"(missing {', '.join(sorted(missing))})"
            )
        return dict(
            zip(
                display_names["answer_model"].astype(str),
                display_names["display_name"].astype(str),
                strict=True,
            )
        )
    if isinstance(display_names, Mapping):
        return {str(k): str(v) for k, v in display_names.items()}
    raise DatasetError("display_names must be a DataFrame or a mapping")


def _paper_category(categories: pd.Series) -> pd.Series:
    return pd.Series(
        [PAPER_CATEGORY.get(int(c)) for c in categories], dtype="Int64", index=categories.index
    )


def _item_id(category: int, index: int) -> str:
    return f"{category}.{index + 1}"


def load_release(
    path: str | Path, *, display_names=None, models: Iterable[str] | None = None
) -> dict[str, pd.DataFrame]:
    """Read a downloaded HIVMedQA release into long frames.

    Parameters
    ----------
    path : str or Path
        The repository checkout or its ``deploy_medical_llm_evaluation/`` folder.
    display_names : DataFrame or mapping, optional
        Folder -> paper name (columns ``answer_model``, ``display_name``); default
        `default_display_names`. Folders not listed keep their own name.
    models : iterable of str, optional
        Only these answer-model folders (and ``"rephrased_true_answers"`` only if
        listed); default all.

    Returns
    -------
    dict of DataFrame
        ``questions``: ``category`` (release numbering, int), ``paper_category``
        (Int64: release 4 -> 5, 5 -> 4, NA for release 6), ``question_index`` (0-based), ``item_id``
        (``"<category>.<question_index + 1>"``, the paper's "question 3.5"
        notation in release numbering), ``question``, ``true_answer``.

        ``answers``: ``answer_model`` (folder), ``display_name``, ``stem``,
        ``category``, ``paper_category``, ``question_index``, ``item_id``,
        ``iteration`` (1–5), ``question``, ``answer`` (None when absent),
        ``true_answer``, ``file``.

        ``judgments``: one row per (answer model, category, question index,
        iteration, reference given, dimension): ``answer_model``, ``display_name``,
        ``category``, ``paper_category``, ``question_index``, ``item_id``,
        ``iteration``, ``reference_given`` (bool), ``dimension`` (`DIMENSIONS`),
        ``raw_reply`` (the judge's reply text, None when absent), ``file``. The reply
        holds every dimension's score under its `RELEASE_KEYS` key; parse it with
        ``workbench.judges.parse_dimension_reply(raw_reply, RELEASE_KEYS, SCORE_RANGE)``.
        The judged rephrased gold answers are the rows with
        ``answer_model == "rephrased_true_answers"``.

        ``prompts``: ``answer_model``, ``category``, ``question_index``,
        ``iteration``, ``reference_given``, ``prompt``, ``file``.

        ``display_names``: the table used. ``issues``: ``file``, ``problem`` for
        every skipped file, empty list and count mismatch.

    Raises
    ------
    DatasetError
        The path is not a release; a file is not valid JSON or not a JSON list; a
        record is not a JSON object (naming the file and record index).
    """
    root = release_root(path)
    names = _display_map(display_names)
    wanted = None if models is None else {str(m) for m in models}
    issues: list[dict] = []

    questions_rows = []
    qdir = root / "questions_files"
    if qdir.is_dir():
        for file in sorted(qdir.iterdir()):
            match = QUESTIONS_RE.match(file.name)
            if not match or not file.is_file():
                continue
            label = relative(file, root)
            data = read_json_list(file, label=label)
            category = int(match["category"])
            for index, record in records(data, label=label):
                questions_rows.append(
                    {
                        "category": category,
                        "question_index": index,
                        "item_id": _item_id(category, index),
                        "question": _text(record.get("question")),
                        "true_answer": _text(record.get("true_answer")),
                    }
                )
    n_questions = Counter(row["category"] for row in questions_rows)

    answers_rows, judgment_rows, prompt_rows = [], [], []
    for source in SOURCES:
        for found in scan(root, source, wanted, issues):
            label = relative(found.path, root)
            data = read_json_list(found.path, label=label)
            if not data:
                issues.append({"file": label, "problem": "empty list"})
                continue
            expected = n_questions.get(found.category)
            if expected is not None and expected != len(data):
                issues.append(
                    {"file": label, "problem": f"{len(data)} records for {expected} questions"}
                )
            base = {
                "answer_model": found.answer_model,
                "category": found.category,
                "iteration": found.iteration,
                "file": label,
            }
            for index, record in records(data, label=label):
                where = {
                    **base,
                    "question_index": index,
                    "item_id": _item_id(found.category, index),
                }
                if source.table == "answers":
                    answers_rows.append(
                        {
                            **where,
                            "stem": found.stem,
                            "question": _text(record.get("question")),
                            "answer": _text(record.get("answer")),
                            "true_answer": _text(record.get("true_answer")),
                        }
                    )
                elif source.table == "prompts":
                    prompt_rows.append(
                        {
                            **where,
                            "reference_given": source.reference_given,
                            "prompt": _text(record.get("prompt")),
                        }
                    )
                else:
                    reply = record.get("response")
                    if reply is not None and not isinstance(reply, str):
                        reply = json.dumps(reply, ensure_ascii=False)
                    for dim in DIMENSIONS:
                        judgment_rows.append(
                            {
                                **where,
                                "reference_given": source.reference_given,
                                "dimension": dim,
                                "raw_reply": reply,
                            }
                        )

    def finish(rows: list[dict], columns: list[str]) -> pd.DataFrame:
        frame = pd.DataFrame(rows, columns=columns)
        if "display_name" in columns:
            frame["display_name"] = [names.get(m, m) for m in frame["answer_model"]]
        if "paper_category" in columns:
            frame["paper_category"] = _paper_category(frame["category"])
        for column, kind in (
            ("category", int),
            ("question_index", int),
            ("iteration", int),
            ("reference_given", bool),
        ):
            if column in columns:
                frame[column] = frame[column].astype(kind)
        return frame

    key = [
        "answer_model",
        "display_name",
        "category",
        "paper_category",
        "question_index",
        "item_id",
        "iteration",
    ]
    questions = finish(
        questions_rows,
        ["category", "paper_category", "question_index", "item_id", "question", "true_answer"],
    )
    answers = finish(answers_rows, [*key, "stem", "question", "answer", "true_answer", "file"])
    judgments = finish(
        judgment_rows,
        [*key, "reference_given", "dimension", "raw_reply", "file"],
    )
    prompts = finish(
        prompt_rows,
        [
            "answer_model",
            "category",
            "question_index",
            "item_id",
            "iteration",
            "reference_given",
            "prompt",
            "file",
        ],
    )
    used = sorted(set(answers["answer_model"]) | set(judgments["answer_model"]))
    table = pd.DataFrame({"answer_model": used, "display_name": [names.get(m, m) for m in used]})
    for name, folders in table.groupby("display_name")["answer_model"]:
        if len(folders) > 1:
            issues.append(
                {
                    "file": ", ".join(folders),
                    "problem": f"folders share the display name {name!r}; choose one with models=",
                }
            )
    return {
        "questions": questions,
        "answers": answers,
        "judgments": judgments,
        "prompts": prompts,
        "display_names": table,
        "issues": pd.DataFrame(issues, columns=["file", "problem"]),
    }


F1_FILE = "f1_raw.csv"
"""The release's own MedSynF1 per answer, beside ``model_answers/``."""

_F1_PREFIX = "synonyms_lemmatized_"
_F1_SUFFIX = "_dict"


def load_f1(path: str | Path, *, display_names=None) -> pd.DataFrame | None:
    """The release's own MedSynF1 (``f1_raw.csv``), or None when the release has none.

    The file holds one row per NLP model, answering model, category, iteration and
    question, with F1 variants side by side; the paper's MedSynF1 is the
    ``synonyms_lemmatized_{precision,recall,f1}_dict`` columns (GPT-built synonym
    dictionary, lemmatised). Columns read: ``nlp_model``, ``model`` (the answering
    model's folder), ``category_id`` (release numbering), ``iteration_number`` (1-based),
    ``question_index`` (0-based); the file's first, unnamed column (a pandas index) is
    ignored. When several ``nlp_model`` values are present, the first one in the file
    is kept (``nlp_model`` says which).

    Returns
    -------
    DataFrame or None
        ``answer_model``, ``display_name``, ``category``, ``paper_category``,
        ``question_index``, ``item_id``, ``iteration``, ``precision``, ``recall``,
        ``f1``, ``nlp_model``.

    Raises
    ------
    DatasetError
        The file lacks one of those columns (naming it) or is not CSV.
    """
    file = release_root(path) / F1_FILE
    if not file.exists():
        return None
    try:
        raw = pd.read_csv(file)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DatasetError(f"not a CSV file ({exc})", file=F1_FILE) from None
    measures = {f"{_F1_PREFIX}{m}{_F1_SUFFIX}": m for m in ("precision", "recall", "f1")}
    needed = ["nlp_model", "model", "category_id", "iteration_number", "question_index",
              *measures]
    missing = [c for c in needed if c not in raw.columns]
    if missing:
        raise DatasetError(f"missing column(s) {', '.join(missing)}", file=F1_FILE,
                           column=missing[0])
    raw = raw[raw["nlp_model"] == raw["nlp_model"].iloc[0]] if len(raw) else raw
    names = _display_map(display_names)
    category = raw["category_id"].astype(int)
    index = raw["question_index"].astype(int)
    out = pd.DataFrame({
        "answer_model": raw["model"].astype(str),
        "display_name": [names.get(m, m) for m in raw["model"].astype(str)],
        "category": category,
        "paper_category": _paper_category(category),
        "question_index": index,
        "item_id": [_item_id(c, i) for c, i in zip(category, index, strict=True)],
        "iteration": raw["iteration_number"].astype(int),
        **{name: raw[column].astype(float) for column, name in measures.items()},
        "nlp_model": raw["nlp_model"],
    })
    return out.reset_index(drop=True)


def release_replies(
    release: Mapping[str, pd.DataFrame],
    *,
    judge_model: str = "gpt-4o",
    temperature: float = 0.0,
) -> pd.DataFrame:
    """The release's judge calls as requests and replies, to replay them from the cache.

    Each prompt of ``release["prompts"]`` is paired with the reply in
    ``release["judgments"]`` of the same answer model, category, iteration, question
    index and reference setting. The request is the prompt as one user message to
    ``judge_model`` at ``temperature`` (the paper's judge: GPT-4o at temperature 0;
    the release stores no system message), sample 0; the reply is the raw judge text,
    kept even when it does not parse, so a replay fails to parse exactly as the
    original did. Prompts without a reply and replies without a prompt are left out.

    ``workbench.llm.write_replay_file(frame.to_dict("records"), FILE, backend="openai")``
    writes them for ``workbench cache import FILE``; after it,
    ``workbench.llm.complete(judge_model, [{"role": "user", "content": prompt}],
    temperature=temperature)`` replays the release's reply from the cache.

    Parameters
    ----------
    release : dict of DataFrame
        What `load_release` returned.
    judge_model, temperature
        The request's model and temperature.

    Returns
    -------
    DataFrame
        One row per paired prompt, in the order of ``release["prompts"]``: ``model``,
        ``messages`` (``[{"role": "user", "content": prompt}]``), ``temperature``,
        ``text`` (the reply) and ``source`` (``"HIVMedQA release: <file>"``).
    """
    judgments = release["judgments"]
    keys = ["answer_model", "category", "iteration", "question_index", "reference_given"]
    replies = judgments.drop_duplicates(keys).set_index(keys)["raw_reply"].to_dict()
    rows = []
    for record in release["prompts"].to_dict("records"):
        reply = replies.get(tuple(record[k] for k in keys))
        if isinstance(record["prompt"], str) and isinstance(reply, str):
            rows.append({
                "model": judge_model,
                "messages": [{"role": "user", "content": record["prompt"]}],
                "temperature": temperature,
                "text": reply,
                "source": f"HIVMedQA release: {record['file']}",
            })
    return pd.DataFrame(rows, columns=["model", "messages", "temperature", "text", "source"])
