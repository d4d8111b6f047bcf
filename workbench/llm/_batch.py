"""``complete_many(..., mode="batch")``: the uncached requests as provider batch jobs.

Through litellm's files and batches API (https://docs.litellm.ai/docs/batches) in the
OpenAI Batch format (https://platform.openai.com/docs/guides/batch): one JSONL line per
request whose ``custom_id`` is its cache key (so replies map back in any order), one job
per model and endpoint (split at :data:`MAX_PER_JOB`). Each reply line goes through the
pipeline's record stage (``record``) and is stored exactly as an online reply
(``latency_s`` 0, ``batch_id`` naming the job, ``cost_usd`` at batch prices).

Every job is recorded in a ledger, ``batch_jobs.json`` in the cache folder (job id,
model, input file, keys; no secret), until its results are stored: a killed run
resumes polling its jobs instead of submitting them again. The intent to submit is
recorded before the provider is asked and the job's metadata carries an id of ours
(:data:`TAG_FIELD`), so a run killed between the two finds its job in the provider's
list (:meth:`BatchRun._find`). A job is polled and its output and error files read
over plain HTTP (OpenAI's ``GET /batches/{id}`` and ``GET /files/{id}/content``, as the
direct transport sends chats): litellm's ``aretrieve_batch`` of a finished job has its
success logging download the output file again, in a task that outlives the run's event
loop (a second download, and a traceback at exit). Azure jobs, whose URLs differ, go
through litellm. A request a job did not answer is a :class:`CallFailure`
naming the job and why; it can be sent again with ``mode="online"``. Providers:
:data:`PROVIDERS` (sim-servers included); in-process ``sim/`` models have no batch
service and are answered online.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from workbench import config
from workbench.errors import CacheError, ProviderError
from workbench.llm import _cache, _http, _providers
from workbench.llm._http import HTTPStatusError, body_of
from workbench.llm._providers import get_field
from workbench.llm._transports import reply_of
from workbench.llm._types import CallFailure, Completion, Request, Result

LEDGER_FILE = "batch_jobs.json"
#: Ledger ids of jobs being submitted (``intent:<tag>``), recorded before the provider is
#: asked; the job's metadata carries the tag under :data:`TAG_FIELD`.
INTENT = "intent:"
TAG_FIELD = "workbench_job"
_CLOCK_SLACK_S = 600.0  # the provider's clock may differ from ours
_MAX_PAGES = 50
#: litellm providers whose batch endpoint takes the OpenAI JSONL format as is.
PROVIDERS = ("openai", "azure", "hosted_vllm")
#: Requests per job (OpenAI's limit).
MAX_PER_JOB = 50_000
MAX_POLL_S = 300.0
ENDPOINT = "/v1/chat/completions"
_FINAL = ("completed", "failed", "expired", "cancelled")
#: Where OpenAI's own API is (litellm's default base URL for ``openai/...``).
OPENAI_BASE = "https://api.openai.com/v1"
#: Bounds (seconds) of one plain-HTTP poll of a job, and of one file download.
POLL_TIMEOUT_S = 120.0
DOWNLOAD_TIMEOUT_S = 1800.0


def check(route: _providers.Route) -> None:
    """Raise :class:`ProviderError` unless ``route``'s provider takes batch jobs."""
    if route.provider not in PROVIDERS:
        raise ProviderError(f"{route.model}: provider {route.provider!r} has no batch jobs "
                            f"here (supported: {', '.join(PROVIDERS)}); use mode='online'")


# --- the ledger -------------------------------------------------------------------------

@contextlib.contextmanager
def _ledger() -> Iterator[dict[str, Any]]:
    """The jobs in the ledger of submitted, unfinished jobs (in the configured cache
    folder): job id -> record (``model``, ``input_file_id``, ``keys``, ``submitted``,
    ``tag``), or ``intent:<tag>`` -> record of a job whose submission a killed run may not
    have seen through. Locked for read-modify-write; saved (atomically) on exit."""
    path = config.cache_dir() / LEDGER_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a") as lock:
        with contextlib.suppress(ImportError):  # POSIX: one process at a time edits the ledger
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            jobs = json.loads(path.read_text(encoding="utf-8"))["jobs"] if path.exists() else {}
        except (OSError, ValueError, KeyError, TypeError):
            _cache.log.warning("batch ledger %s is unreadable: starting a new one", path)
            jobs = {}
        before = json.dumps(jobs, sort_keys=True)
        yield jobs
        if json.dumps(jobs, sort_keys=True) != before:
            temporary = path.with_suffix(".tmp")
            temporary.write_text(json.dumps({"schema": 1, "jobs": jobs}, indent=1),
                                 encoding="utf-8")
            os.replace(temporary, path)


# --- the run ----------------------------------------------------------------------------

def _client_kwargs(request: Request, route: _providers.Route) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"custom_llm_provider": route.provider}
    for name in ("api_base", "api_key", "api_version", "organization", "extra_headers"):
        if request.params.get(name) is not None:
            kwargs[name] = request.params[name]
    kwargs.update(_providers.auth(request.params, route))
    if kwargs.get("api_base") and not kwargs.get("api_key"):
        kwargs["api_key"] = _providers.LOCAL_KEY  # azure, hosted_vllm: a local server
    return kwargs


def _plain_base(route: _providers.Route, kwargs: dict[str, Any]) -> str | None:
    """The OpenAI-format base URL a job is polled and read at over plain HTTP; ``None``
    (Azure, or a ``hosted_vllm`` job without a base URL): through litellm."""
    if route.provider == "azure":
        return None
    base = _providers.base_url(kwargs, route.provider)
    return base or (OPENAI_BASE if route.provider == "openai" else None)


async def _get(base: str, path: str, kwargs: dict[str, Any], timeout: float) -> bytes:
    """The body of ``GET {base}{path}`` with the request's credentials (an
    :class:`HTTPStatusError` for a non-2xx reply; a redirect is not followed)."""
    import aiohttp

    headers = {k: v for k, v in _http._headers(kwargs).items() if k != "Content-Type"}
    async with _http._session().get(_http._url(base, path), headers=headers,
                                    allow_redirects=False,
                                    timeout=aiohttp.ClientTimeout(total=timeout)) as reply:
        data = await reply.read()
        if reply.status >= 300:
            raise HTTPStatusError(reply.status, _http._error_message(
                data.decode("utf-8", "replace")), reply.headers)
    return data


@dataclass
class BatchRun:
    """The batch jobs of one ``complete_many``: resume, submit, poll, have each reply
    recorded by ``record`` (the pipeline's record stage) and hand each result, a
    :class:`Completion` or a failure row, to ``done(key, result)``."""

    jobs: dict[str, Request]
    routes: dict[str, _providers.Route]  # key -> route
    _: KW_ONLY
    record: Callable[..., Completion]
    poll_interval: float
    done: Callable[[str, Result], None]
    litellm: Any = field(default_factory=_providers.get_litellm)
    results: dict[str, Result] = field(default_factory=dict)

    async def run(self) -> dict[str, Result]:
        with _ledger() as ledger:
            pending = dict(ledger)
        polls = []
        covered: set[str] = set()
        for batch_id, record in pending.items():
            mine = [k for k in record["keys"] if k in self.jobs and k not in covered]
            if not mine:
                continue
            if batch_id.startswith(INTENT):  # submitted when a run was killed: created?
                found = await self._find(batch_id, record, mine[0])
                if found is None:
                    continue  # never created: its requests are submitted below
                batch_id, record = found
            covered.update(mine)
            _cache.log.info("resuming batch job %s (%d request(s) of this run)", batch_id,
                            len(mine))
            polls.append(self._poll(batch_id, record, mine[0]))
        groups: dict[tuple, list[str]] = {}
        for key, request in self.jobs.items():
            if key not in covered:
                groups.setdefault(_providers.route_id(request), []).append(key)
        for keys in groups.values():
            for start in range(0, len(keys), MAX_PER_JOB):
                chunk = keys[start:start + MAX_PER_JOB]
                submitted = await self._submit(chunk)
                if submitted is not None:
                    polls.append(self._poll(*submitted, chunk[0]))
        await asyncio.gather(*polls)
        return self.results

    async def _submit(self, keys: list[str]) -> tuple[str, dict[str, Any]] | None:
        """Upload ``keys``' lines and create their job (recorded in the ledger); ``None``,
        with a :class:`CallFailure` for each request, when the provider refuses."""
        first = self.jobs[keys[0]]
        route = self.routes[keys[0]]
        lines = "".join(json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT,
                                    "body": body_of(_providers.call_kwargs(
                                        self.jobs[key], route, timeout=0), route.provider)},
                                   ensure_ascii=False, separators=(",", ":")) + "\n"
                        for key in keys)
        kwargs = _client_kwargs(first, route)
        tag = uuid.uuid4().hex
        record = {"model": first.model, "keys": keys, "tag": tag, "since": time.time(),
                  "submitted": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
        with _ledger() as ledger:  # the intent first: a kill from here on is resumed
            ledger[INTENT + tag] = record
        created = False
        try:
            upload = await self.litellm.acreate_file(
                file=("workbench_batch.jsonl", lines.encode("utf-8")), purpose="batch", **kwargs)
            created = True  # from here, an error may come after the job was created
            job = await self.litellm.acreate_batch(
                completion_window="24h", endpoint=ENDPOINT, input_file_id=upload.id,
                metadata={"client": "workbench", TAG_FIELD: tag}, **kwargs)
        except Exception as exc:
            kind = _providers.classify(exc)
            unsure = created and kind not in ("auth", "bad_request", "not_found", "rate_limit")
            why = (f"could not submit a batch job of {len(keys)} request(s): "
                   f"{_providers.error_message(exc, first, kind)}"
                   + ("; the job may exist all the same: a rerun looks for it before "
                      "submitting again" if unsure else ""))
            if not unsure:
                with _ledger() as ledger:
                    ledger.pop(INTENT + tag, None)
            for key in keys:
                self._finish(key, CallFailure(key, kind, why, 1, first.model))
            return None
        record = {**{k: v for k, v in record.items() if k != "since"},
                  "input_file_id": upload.id}
        with _ledger() as ledger:
            ledger.pop(INTENT + tag, None)
            ledger[job.id] = record
        _cache.log.info("submitted batch job %s: %d request(s) of %s", job.id, len(keys),
                        first.model)
        return job.id, record

    async def _find(self, intent: str, record: dict[str, Any], key: str
                    ) -> tuple[str, dict[str, Any]] | None:
        """The job the ledger's ``intent`` was submitting when its run was killed, looked
        up in the provider's list (newest first, back to a few minutes before the intent)
        by the id of ours in its metadata; ``None``: its requests are submitted anew."""
        kwargs = _client_kwargs(self.jobs[key], self.routes[key])
        since = float(record.get("since") or 0) - _CLOCK_SLACK_S
        after, found = None, None
        try:
            for _ in range(_MAX_PAGES):
                page = await self.litellm.alist_batches(after=after, limit=100, **kwargs)
                jobs = list(getattr(page, "data", None) or [])
                found = next((job for job in jobs if (get_field(job, "metadata") or {}).get(
                    TAG_FIELD) == record["tag"]), None)
                if found is not None or not jobs or not get_field(page, "has_more") or min(
                        int(get_field(job, "created_at") or 0) for job in jobs) < since:
                    break
                after = get_field(jobs[-1], "id")
        except Exception as exc:  # noqa: BLE001 (cannot tell: submit, as before intents)
            _cache.log.warning("could not list the batch jobs of %s to find one submitted "
                               "by a killed run (%s): its requests are submitted again",
                               record["model"], _providers.error_message(exc, self.jobs[key]))
        with _ledger() as ledger:
            ledger.pop(intent, None)
            if found is None:
                return None
            record = {name: value for name, value in record.items() if name != "since"}
            record["input_file_id"] = get_field(found, "input_file_id")
            ledger[get_field(found, "id")] = record
        _cache.log.info("found batch job %s, submitted by a run that was killed",
                        get_field(found, "id"))
        return get_field(found, "id"), record

    async def _poll(self, batch_id: str, record: dict[str, Any], key: str) -> None:
        """Poll ``batch_id`` (backoff) until final, then store its results (``key``: one
        request of this run in the job, whose route and credentials reach it)."""
        sample = self.jobs[key]
        kwargs = _client_kwargs(sample, self.routes[key])
        base = _plain_base(self.routes[key], kwargs)
        delay = self.poll_interval
        while True:
            try:
                if base is None:
                    job = await self.litellm.aretrieve_batch(batch_id=batch_id, **kwargs)
                else:
                    job = json.loads(await _get(base, f"/batches/{batch_id}", kwargs,
                                                POLL_TIMEOUT_S))
                status = get_field(job, "status")
            except Exception as exc:  # transient: keep polling, give up on a 4xx
                kind = _providers.classify(exc)
                if kind in ("auth", "not_found", "bad_request"):
                    self._fail_all(batch_id, record, kind, "could not retrieve the job: "
                                   + _providers.error_message(exc, sample, kind))
                    return
                status = None
            if status in _FINAL:
                break
            await asyncio.sleep(delay)
            delay = min(MAX_POLL_S, delay * 2)
        for file_id in (get_field(job, "output_file_id"), get_field(job, "error_file_id")):
            if file_id:
                await self._read(batch_id, file_id, record, kwargs, base)
        why = {"completed": "no line for this request in the job's output or error file",
               "failed": "the job failed validation: " + _errors_of(job),
               "expired": "the job expired (24 h window) before this request ran",
               "cancelled": "the job was cancelled"}[status]
        kind = {"failed": "bad_request", "expired": "timeout", "cancelled": "not_run"}.get(
            status, "other")
        self._fail_all(batch_id, record, kind, why)

    def _fail_all(self, batch_id: str, record: dict[str, Any], kind: str, why: str) -> None:
        """Every request of this run in the job without a result fails with ``why``; the
        job leaves the ledger, or keeps there the requests of other runs (their replies are
        read when a run that holds them resumes it)."""
        for key in record["keys"]:
            if key in self.jobs and key not in self.results:
                self._finish(key, CallFailure(key, kind, _providers.redacted(
                    f"batch {batch_id}: {why}; send it again with mode='online'",
                    self.jobs[key]), 1, self.jobs[key].model))
        rest = [key for key in record["keys"] if key not in self.jobs]
        with _ledger() as ledger:
            if rest:
                ledger[batch_id] = {**record, "keys": rest}
            else:
                ledger.pop(batch_id, None)

    def _finish(self, key: str, result: Result) -> None:
        self.results[key] = result
        self.done(key, result)

    async def _read(self, batch_id: str, file_id: str, record: dict[str, Any],
                    kwargs: dict[str, Any], base: str | None) -> None:
        """Download ``file_id`` once and finish each request of this run it answers."""
        if base is None:
            content = (await self.litellm.afile_content(file_id=file_id, **kwargs)).content
        else:
            content = await _get(base, f"/files/{file_id}/content", kwargs, DOWNLOAD_TIMEOUT_S)
        keys = set(record["keys"]) & self.jobs.keys()
        for raw in content.decode("utf-8", "replace").splitlines():
            try:
                line = json.loads(raw)
                key = line.get("custom_id")
            except (ValueError, AttributeError):
                continue  # not a result line (or blank): its request is reported as not answered
            if key not in keys or key in self.results:
                continue
            self._finish(key, self._result(batch_id, key, self.jobs[key], line))

    def _result(self, batch_id: str, key: str, request: Request,
                line: dict[str, Any]) -> Result:
        """The reply of one output line, recorded, or the failure row of an error line (or
        of a reply not kept: this line alone, never the job's other replies)."""
        response = line.get("response")
        response = response if isinstance(response, dict) else {}
        status = response.get("status_code")
        body = response.get("body")
        if line.get("error") or status != 200 or not isinstance(body, dict):
            error = line.get("error")
            if not error and isinstance(body, dict):
                error = body.get("error")
            if not error and body:
                error = f"a reply body that is not a JSON object: {str(body)[:80]}"
            code = error.get("code") if isinstance(error, dict) else None
            message = error.get("message") if isinstance(error, dict) else str(error or "")
            exc = HTTPStatusError(status if isinstance(status, int) else 0,
                                  f"{code or ''} {message or ''}".strip())
            return _providers.failure(key, request, exc, 1, prefix=f"batch {batch_id}: ",
                                      kind="timeout" if code == "batch_expired" else None,
                                      suffix="; send it again with mode='online'")
        try:
            reply = reply_of(body)
        except ValueError as exc:
            return CallFailure(key, "malformed", f"batch {batch_id}: {exc}", 1, request.model)
        try:
            return self.record(key, request, reply, latency=0.0, attempts=1, batch_id=batch_id)
        except CacheError:
            raise
        except Exception as exc:
            return _providers.failure(key, request, exc, 1, prefix=f"batch {batch_id}: ")


def _errors_of(job: Any) -> str:
    """The first reasons a job failed validation (its ``errors.data``)."""
    data = get_field(get_field(job, "errors"), "data") or []
    if not data:
        return "no reason given"
    parts = [f"{get_field(item, 'code')}: {get_field(item, 'message')}"
             + (f" (line {get_field(item, 'line')})" if get_field(item, "line") else "")
             for item in data[:3]]
    return "; ".join(parts) + (f"; and {len(data) - 3} more" if len(data) > 3 else "")
