"""The sim-server's OpenAI Files and Batch endpoints, with injected job failures.

``POST /v1/files`` (multipart ``file`` + ``purpose``), ``GET /v1/files/{id}``,
``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches`` (the list,
newest first, paged with ``limit`` and ``after``) and ``GET /v1/batches/{id}``,
as in the OpenAI Batch API (https://platform.openai.com/docs/guides/batch and
https://platform.openai.com/docs/api-reference/batch): the input file holds one JSON
line per request, ``{"custom_id", "method": "POST", "url": "/v1/chat/completions",
"body"}``; the output and error files one line per request, ``{"id", "custom_id",
"response": {"status_code", "request_id", "body"}, "error"}``.

A job is ``validating`` for the first fifth of ``latency_ms`` after it is created,
then ``in_progress``, then final, decided at the first retrieve after that:
``completed`` (each request's answer, or, at ``error_rate``, a 500 in the error file),
``failed`` (``final="failed"``: validation errors, no output) or ``expired``
(``final="expired"``: the first half of the requests answered, the rest in the error
file with code ``batch_expired``). Output lines come in a shuffled order (seeded), as
a provider does not promise the input order. All state is in memory.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from aiohttp import web

from workbench.sim._checks import BadRequest, parse

FINALS = ("completed", "failed", "expired")
_ENDPOINT = "/v1/chat/completions"


class BatchService:
    """Files and batch jobs of one sim-server."""

    def __init__(self, *, latency_ms: float = 1000.0, error_rate: float = 0.0,
                 final: str = "completed", seed: int = 0):
        if latency_ms < 0:
            raise ValueError(f"--batch-latency-ms={latency_ms!r}: expected >= 0")
        if not 0.0 <= error_rate <= 1.0:
            raise ValueError(f"--batch-error-rate={error_rate!r}: expected a rate in [0, 1]")
        if final not in FINALS:
            raise ValueError(f"--batch-final={final!r}: expected one of {', '.join(FINALS)}")
        self.latency_s = latency_ms / 1000.0
        self.error_rate = error_rate
        self.final = final
        self.rng = random.Random(seed)
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.counts: Counter[str] = Counter()
        self.downloads: Counter[str] = Counter()  # file id -> downloads of its content
        self.answer: Callable[[Any], tuple[int, dict[str, Any]]] | None = None

    def routes(self, app: web.Application,
               answer: Callable[[Any], tuple[int, dict[str, Any]]]) -> None:
        """Serve the endpoints on ``app``; ``answer(body) -> (status, JSON body)`` answers
        one chat request (the sim-server's own, validation included)."""
        self.answer = answer
        app.router.add_post("/v1/files", self.upload)
        app.router.add_get("/v1/files/{file_id}", self.file)
        app.router.add_get("/v1/files/{file_id}/content", self.content)
        app.router.add_post("/v1/batches", self.create)
        app.router.add_get("/v1/batches", self.listing)
        app.router.add_get("/v1/batches/{batch_id}", self.retrieve)

    def stats(self) -> dict[str, Any]:
        return {"files_uploaded": self.counts["files"], "created": self.counts["created"],
                "retrieved": self.counts["retrieved"], "downloaded": self.counts["downloaded"],
                "downloads_by_file": dict(sorted(self.downloads.items())),
                "by_status": dict(sorted(Counter(b["status"] for b in self.batches.values()).items()))}

    def _add_file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = "file-" + uuid.uuid4().hex[:24]
        meta = {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": filename, "purpose": purpose, "status": "processed"}
        self.files[file_id] = {"meta": meta, "data": data}
        return meta

    async def upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload, purpose = form.get("file"), form.get("purpose")
        if upload is None or not hasattr(upload, "file") or purpose not in ("batch", "batch_output"):
            return _error(400, "expected a multipart 'file' and purpose='batch'")
        self.counts["files"] += 1
        return web.json_response(self._add_file(upload.file.read(), upload.filename or "input.jsonl",
                                                str(purpose)))

    async def file(self, request: web.Request) -> web.Response:
        found = self.files.get(request.match_info["file_id"])
        return web.json_response(found["meta"]) if found else _error(404, "no such file")

    async def content(self, request: web.Request) -> web.Response:
        found = self.files.get(request.match_info["file_id"])
        if found is None:
            return _error(404, "no such file")
        self.counts["downloaded"] += 1
        self.downloads[request.match_info["file_id"]] += 1
        return web.Response(body=found["data"], content_type="application/octet-stream")

    async def create(self, request: web.Request) -> web.Response:
        try:
            body = parse(await request.read())
        except BadRequest as exc:
            return _error(400, str(exc))
        if not isinstance(body, dict) or body.get("input_file_id") not in self.files:
            return _error(400, "input_file_id: no such file")
        if body.get("endpoint") != _ENDPOINT or body.get("completion_window") != "24h":
            return _error(400, f"expected endpoint={_ENDPOINT!r} and completion_window='24h'")
        self.counts["created"] += 1
        batch_id = "batch_" + uuid.uuid4().hex[:24]
        now = int(time.time())
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": _ENDPOINT, "errors": None,
            "input_file_id": body["input_file_id"], "completion_window": "24h",
            "status": "validating", "output_file_id": None, "error_file_id": None,
            "created_at": now, "in_progress_at": None, "expires_at": now + 86400,
            "finalizing_at": None, "completed_at": None, "failed_at": None, "expired_at": None,
            "cancelling_at": None, "cancelled_at": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata"), "_started": time.monotonic(),
        }
        return web.json_response(_public(self.batches[batch_id]))

    async def listing(self, request: web.Request) -> web.Response:
        """``GET /v1/batches?limit=&after=``: the jobs, newest first, a page at a time."""
        try:
            limit = min(100, max(1, int(request.query.get("limit", "20"))))
        except ValueError:
            return _error(400, "limit: expected an integer")
        order = list(reversed(self.batches))  # dicts keep the creation order
        after = request.query.get("after")
        if after is not None:
            if after not in self.batches:
                return _error(400, f"after: no such batch {after!r}")
            order = order[order.index(after) + 1:]
        page = [_public(self.batches[batch_id]) for batch_id in order[:limit]]
        return web.json_response({"object": "list", "data": page,
                                  "first_id": page[0]["id"] if page else None,
                                  "last_id": page[-1]["id"] if page else None,
                                  "has_more": len(order) > limit})

    async def retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _error(404, "no such batch")
        self.counts["retrieved"] += 1
        elapsed = time.monotonic() - batch["_started"]
        if batch["status"] in ("validating", "in_progress"):
            if elapsed >= self.latency_s:
                self._finish(batch)
            elif elapsed >= self.latency_s / 5 and batch["status"] == "validating":
                batch["status"], batch["in_progress_at"] = "in_progress", int(time.time())
        return web.json_response(_public(batch))

    def _finish(self, batch: dict[str, Any]) -> None:
        now = int(time.time())
        lines, problems = _parse_input(self.files[batch["input_file_id"]]["data"])
        batch["request_counts"]["total"] = len(lines)
        if problems or self.final == "failed":
            problems = problems or [{"code": "invalid_request", "line": 1,
                                     "message": "simulated validation failure", "param": None}]
            batch.update(status="failed", failed_at=now,
                         errors={"object": "list", "data": problems})
            return
        cut = len(lines) // 2 if self.final == "expired" else len(lines)
        out, err = [], []
        for n, line in enumerate(lines):
            request_id = f"req_{uuid.uuid4().hex[:16]}"
            row = {"id": f"batch_req_{uuid.uuid4().hex[:16]}", "custom_id": line["custom_id"],
                   "response": None, "error": None}
            if n >= cut:
                row["error"] = {"code": "batch_expired", "message": "This request could not be "
                                "executed before the completion window expired."}
                err.append(row)
                continue
            if self.rng.random() < self.error_rate:
                status, payload = 500, error_body("simulated internal server error", "server_error")
            else:
                status, payload = self.answer(line["body"])
            row["response"] = {"status_code": status, "request_id": request_id, "body": payload}
            (out if status == 200 else err).append(row)
        self.rng.shuffle(out)
        self.rng.shuffle(err)
        batch["request_counts"].update(completed=len(out), failed=len(err))
        for rows, field in ((out, "output_file_id"), (err, "error_file_id")):
            if rows:
                data = "".join(json.dumps(r) + "\n" for r in rows).encode()
                batch[field] = self._add_file(data, f"{batch['id']}_{field}.jsonl",
                                              "batch_output")["id"]
        if self.final == "expired":
            batch.update(status="expired", expired_at=now)
        else:
            batch.update(status="completed", finalizing_at=now, completed_at=now)


def _parse_input(data: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The request lines of an input file, and its validation errors (OpenAI's shape)."""
    lines, problems, seen = [], [], set()
    for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = parse(raw)
            ok = (isinstance(line, dict) and isinstance(line.get("custom_id"), str)
                  and line.get("method") == "POST" and line.get("url") == _ENDPOINT
                  and isinstance(line.get("body"), dict))
        except BadRequest:
            ok = False
        if not ok:
            problems.append({"code": "invalid_json_line", "line": n, "param": None,
                             "message": "expected {custom_id, method: POST, url, body}"})
        elif line["custom_id"] in seen:
            problems.append({"code": "duplicate_custom_id", "line": n, "param": "custom_id",
                             "message": f"custom_id {line['custom_id']!r} is not unique"})
        else:
            seen.add(line["custom_id"])
            lines.append(line)
    if not lines and not problems:
        problems.append({"code": "empty_file", "line": None, "param": None,
                         "message": "the input file has no requests"})
    return lines, problems


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if not k.startswith("_")}


def error_body(message: str, kind: str, code: str | None = None,
               param: str | None = None) -> dict[str, Any]:
    """An OpenAI-shaped error body (also the sim-server's)."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _error(status: int, message: str) -> web.Response:
    return web.json_response(error_body(message, "invalid_request_error"), status=status)
