"""File layout of the HIVMedQA release: which folders and file names hold what."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from workbench.datasets._release import is_ignored_dir, relative
from workbench.errors import DatasetError

_FILE_RE = re.compile(
    r"^(?P<stem>.+)_answers_category_(?P<category>\d+)\.(?P<iteration>\d+)"
    r"_HIV_EQ\.json$"
)
QUESTIONS_RE = re.compile(r"^HIV_evaluation_questionn?ai?re_category_(?P<category>\d+)\.json$")


@dataclass(frozen=True)
class Source:
    subdir: str
    prefix: str
    table: str
    reference_given: bool | None
    flat: bool = False


SOURCES = (
    Source("model_answers/raw", "", "answers", None),
    Source("model_answers/results-GPT-score", "GPT-score_", "judgments", True),
    Source(
        "model_answers/results-unsupervised-GPT-score",
        "unsupervised-GPT-score_",
        "judgments",
        False,
    ),
    Source("model_answers/prompted_model_answers", "prompted_", "prompts", True),
    Source(
        "model_answers/prompted_unsupervised_model_answers",
        "unsupervised_prompted_",
        "prompts",
        False,
    ),
    Source(
        "gold_standard_rephrasing/results-GPT-score-rephrased",
        "GPT-score_",
        "judgments",
        True,
        flat=True,
    ),
)


@dataclass(frozen=True)
class ReleaseFile:
    answer_model: str
    stem: str
    category: int
    iteration: int
    path: Path
    source: Source


def release_root(path: str | Path) -> Path:
    root = Path(path)
    if (root / "deploy_medical_llm_evaluation").is_dir():
        root = root / "deploy_medical_llm_evaluation"
    if not (
        (root / "model_answers").is_dir()
        or (root / "questions_files").is_dir()
        or (root / "gold_standard_rephrasing").is_dir()
    ):
        raise DatasetError(
            "not a HIVMedQA release: expected deploy_medical_llm_evaluation/ "
            "with questions_files/ and model_answers/",
            file=str(path),
        )
    return root


def scan(
    root: Path, source: Source, models: set[str] | None, issues: list[dict]
) -> list[ReleaseFile]:
    base = root / source.subdir
    if not base.is_dir():
        return []
    if source.flat:
        groups: list[tuple[str | None, Path]] = [(None, base)]
    else:
        groups = [
            (d.name, d) for d in sorted(base.iterdir()) if d.is_dir() and not is_ignored_dir(d.name)
        ]
    found = []
    for folder, directory in groups:
        for path in sorted(directory.iterdir()):
            if not path.is_file() or path.suffix != ".json":
                continue
            name = path.name
            match = (
                _FILE_RE.match(name.removeprefix(source.prefix))
                if name.startswith(source.prefix)
                else None
            )
            if match is None:
                issues.append(
                    {
                        "file": relative(path, root),
                        "problem": "file name does not follow the release pattern; skipped",
                    }
                )
                continue
            answer_model = folder or match["stem"]
            if models is not None and answer_model not in models:
                continue
            found.append(
                ReleaseFile(
                    answer_model,
                    match["stem"],
                    int(match["category"]),
                    int(match["iteration"]),
                    path,
                    source,
                )
            )
    return found
