"""``complete`` and ``complete_many``: the public calls (signatures fixed, DESIGN §2).

They check their arguments and hand the requests to the one pipeline,
:func:`workbench.llm._pipeline.run`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from workbench import config
from workbench.errors import CacheMiss, ProviderError
from workbench.llm import _pipeline
from workbench.llm._types import CallFailure, Completion, Request, Result


def complete(
    model: str,
    messages: list[dict],
    *,
    temperature: float = 0.0,
    sample: int = 0,
    max_tokens: int | None = None,
    response_format: dict | None = None,
    logprobs: bool = False,
    top_logprobs: int | None = None,
    top_p: float | None = None,
    stop: str | list[str] | None = None,
    seed: int | None = None,
    **params: Any,
) -> Completion:
    """One chat completion, through the cache (threads calling ``complete`` with the same
    request at the same time send it once).

    Parameters
    ----------
    model
        A litellm model string (``sim/judge-a``, ``gpt-4o``, ``openai/<name>`` with
        ``api_base=...``, ...).
    messages
        ``[{"role": "system"|"user"|"assistant", "content": str}, ...]``.
    temperature, sample, max_tokens, response_format, logprobs, top_logprobs, top_p, stop, seed
        See :class:`Request`; ``sample`` is the repeat index.
    **params
        Provider keyword arguments (``api_base``, ``api_key``, ``timeout``, ...).

    Raises
    ------
    CacheMiss
        in ``readonly`` mode when the request is not cached.
    CacheError
        as :func:`complete_many`.
    ProviderError
        for an unknown model, a missing API key (both before any call) or a call that
        finally failed; its ``failure`` attribute holds the :class:`CallFailure`.
    ValueError
        naming the field, for a malformed request.

    Examples
    --------
    >>> import tempfile
    >>> from workbench.llm import temporary_settings
    >>> with temporary_settings(cache_dir=tempfile.mkdtemp()):
    ...     reply = complete("sim/judge-a", [{"role": "user", "content": "Say hi."}])
    ...     again = complete("sim/judge-a", [{"role": "user", "content": "Say hi."}])
    >>> reply.backend, reply.cached, again.cached, again.text == reply.text
    ('sim', False, True, True)
    """
    request = Request(model, messages, temperature=temperature, sample=sample,
                      max_tokens=max_tokens, response_format=response_format,
                      logprobs=logprobs, top_logprobs=top_logprobs, top_p=top_p, stop=stop,
                      seed=seed, params=params)
    (result,) = _pipeline.run([request], progress=False, warn_misses=False)
    if isinstance(result, CallFailure):
        if result.error_type == "cache_miss":
            raise CacheMiss(model, result.key)
        error = ProviderError(f"{model}: {result.error_type} after {result.attempts} "
                              f"attempt(s): {result.message}")
        error.failure = result  # type: ignore[attr-defined]
        raise error
    return result


def complete_many(
    requests: Iterable[Request],
    *,
    concurrency: int | None = None,
    progress: bool = True,
    budget_usd: float | None = None,
    rpm: int | Mapping[str, int] | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    mode: str | None = None,
    poll_interval: float | None = None,
    deadline: float | None = None,
) -> list[Result]:
    """Many requests, concurrently, through the cache; results in request order.

    Parameters
    ----------
    requests
        :class:`Request` objects. Identical requests (same cache key) are sent once
        and fill every slot; so are requests another run is sending at the same time
        (another thread of this process, or, through short-lived claims in a shared
        store in ``readwrite`` mode, another process: its reply is then replayed).
    concurrency
        Calls in flight per model at most (default: the ``concurrency`` setting): the
        ceiling of the gate of each (provider, model, endpoint)
        (:class:`~workbench.llm._throttle.Gate`), which holds the provider's quota as
        its ``x-ratelimit-*`` headers and 429s teach it (``Retry-After`` honoured;
        such 429s do not use up ``max_retries``).
    progress
        Show a tqdm bar (``tqdm.auto``: a widget in JupyterLab) of the calls made, from
        the count replayed from the cache; a run that sends nothing prints one line
        instead (``LLM calls: N replayed from cache``).
    budget_usd
        Stop before the next call would cross this spend (cached replays are free).
        The first call of each model is its price probe; after it, a call is only
        started if the spend so far, plus the calls in flight, plus the highest cost
        seen for that model stays within the budget.
    rpm
        Requests per minute, one number or ``{model: rpm}`` (default: the
        :func:`configure` setting, else ``WORKBENCH_RPM``, else the provider's quota as
        learned); ``WORKBENCH_TPM`` caps the tokens per minute (prompt estimate plus
        ``max_tokens``, charged before each call).
    timeout, max_retries
        Per-call timeout in seconds and retries of retryable errors (defaults: the
        ``timeout`` and ``max_retries`` settings). A request's own
        ``params["timeout"]`` / ``params["num_retries"]`` win.
    mode
        ``"online"`` (one call per request) or ``"batch"`` (default: the ``call_mode``
        setting, ``WORKBENCH_CALL_MODE``, else online): the uncached requests go to
        the provider as batch jobs (:mod:`workbench.llm._batch`: half the price, hours
        not seconds), polled every ``poll_interval`` seconds at first (default: the
        ``batch_poll`` setting, 30; doubling, at most 300), their replies cached under
        the same keys as online ones; a killed run resumes the jobs it submitted. In-process ``sim/`` models are answered
        online; ``budget_usd`` is refused (price a design with
        :func:`workbench.judges.estimate` first). ``"auto"``: online what can be
        answered within ``deadline`` seconds at the quota the gate observes (a call
        still waiting for its turn when it could no longer finish in time is not sent),
        the rest in batch jobs as above (providers with batch jobs, and a cache to
        hold their replies; otherwise everything goes online). ``"ray"``: the uncached
        requests go to one Ray Data job (:mod:`workbench.llm._ray`: ``ray.data.llm``'s
        HTTP processor for OpenAI-compatible endpoints, or a vLLM or SGLang engine on the
        cluster, ``WORKBENCH_RAY_ENGINE``), each reply stored as it streams back under the
        same key as online; in-process ``sim/`` models are answered online;
        ``budget_usd`` is refused.
    deadline
        Seconds from now, for ``mode="auto"`` (required there).

    Returns
    -------
    list of Completion or CallFailure
        One per request, in order. A request that finally failed is a
        :class:`CallFailure` in its slot (``cache_miss`` in ``readonly`` mode). After
        ``circuit_breaker`` (a setting) consecutive ``connection_error`` failures of a
        model, its requests still waiting are ``not_run`` at once, and one warning
        says so; the progress bar counts failures as they come (``failed=N``).

    Raises
    ------
    ProviderError
        before any call, for an unknown model or a missing API key.
    CacheError
        before any call, when the cache store cannot take the replies (read-only, or
        less than 32 MB free on its disk); during the run, when a write finds the
        disk full (replies already written are kept); or for a damaged store.
    BudgetExceeded
        when the budget stopped the run; ``.partial`` holds the list above, with
        ``CallFailure(error_type="budget")`` for the requests not run.
    """
    options = _options(mode, budget_usd, poll_interval, deadline, auto=True)
    return _pipeline.run(requests, concurrency=concurrency, progress=progress,
                         budget_usd=budget_usd, rpm=rpm, timeout=timeout,
                         max_retries=max_retries, **options)


def _options(mode: str | None, budget_usd: float | None, poll_interval: float | None,
             deadline: float | None, *, auto: bool = False) -> dict[str, Any]:
    """The route options of :func:`_pipeline.run` for these arguments, checked."""
    mode = config.call_mode() if mode is None else mode
    if mode not in (*config.CALL_MODES, *(("auto",) if auto else ())):
        raise ValueError(f"mode={mode!r}: expected 'online', 'batch', 'ray'"
                         + (" or 'auto'" if auto else ""))
    if (mode == "auto") != (deadline is not None):
        raise ValueError("deadline=... goes with mode='auto' (and mode='auto' needs one)")
    if deadline is not None and not deadline > 0:
        raise ValueError(f"deadline={deadline!r}: expected a number of seconds > 0")
    if mode in ("batch", "auto", "ray") and budget_usd is not None:
        job = "a Ray" if mode == "ray" else "a batch"
        raise ValueError(f"budget_usd cannot stop {job} job once submitted: estimate the "
                         "cost first (workbench.judges.estimate), or use mode='online'")
    if poll_interval is None:
        poll_interval = float(config.call_setting("batch_poll"))
    if not poll_interval > 0:
        raise ValueError(f"poll_interval={poll_interval!r}: expected a number > 0")
    return {"batch_poll": poll_interval if mode in ("batch", "auto") else None,
            "deadline": None if deadline is None else time.monotonic() + deadline,
            "ray": mode == "ray"}


def complete_iter(
    requests: Iterable[Request],
    *,
    window: int = _pipeline.WINDOW,
    concurrency: int | None = None,
    progress: bool = True,
    budget_usd: float | None = None,
    rpm: int | Mapping[str, int] | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    mode: str | None = None,
    poll_interval: float | None = None,
) -> Iterator[tuple[int, Result]]:
    """:func:`complete_many` for any number of requests, in flat memory: yields
    ``(index, result)`` as results arrive.

    ``requests`` may be any iterable, e.g. a generator that plans each request when it
    is asked for: it is read ``window`` requests at a time, each window sent and recorded
    (every reply stored as it comes) and its results yielded, in order; the next window
    is read (and looked up in the cache by another thread) before this one is sent, so
    memory holds two windows, whatever the total. A killed run resumes
    from the cache. The other arguments are those of :func:`complete_many`
    (``budget_usd`` counts across windows; ``mode="auto"`` is not offered; with
    ``mode="ray"`` or ``"batch"`` each window is one job: give it a large ``window``).

    Examples
    --------
    >>> import tempfile
    >>> from workbench.llm import temporary_settings
    >>> asks = (Request("sim/judge-a", [{"role": "user", "content": f"Item {i}?"}])
    ...         for i in range(5))
    >>> with temporary_settings(cache_dir=tempfile.mkdtemp()):
    ...     got = [(i, r.backend) for i, r in complete_iter(asks, window=2, progress=False)]
    >>> got
    [(0, 'sim'), (1, 'sim'), (2, 'sim'), (3, 'sim'), (4, 'sim')]
    """
    options = _options(mode, budget_usd, poll_interval, None)
    return _pipeline.stream(requests, window=window, concurrency=concurrency,
                            progress=progress, budget_usd=budget_usd, rpm=rpm,
                            timeout=timeout, max_retries=max_retries, **options)
