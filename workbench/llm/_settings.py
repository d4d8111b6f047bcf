"""The LLM layer's settings in code: :func:`configure`, :func:`temporary_settings`,
:func:`settings` and the requests-per-minute limit of a model (:func:`rpm_for`).

They are kept for the process (:func:`workbench.config.overrides`) and win over the
``WORKBENCH_*`` environment variables; the table of settings is in :mod:`workbench.config`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench import config


def _mode(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` as one of ``choices`` (case and surrounding space ignored)."""
    mode = str(value).strip().lower()
    if mode not in choices:
        raise ValueError(f"{name}={value!r}: expected one of {', '.join(choices)}")
    return mode


def configure(
    *,
    cache_dir: str | os.PathLike | None = None,
    cache_mode: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    retry_backoff: float | None = None,
    circuit_breaker: int | None = None,
    rpm: int | Mapping[str, int] | None = None,
    call_mode: str | None = None,
    batch_poll: float | None = None,
    max_wait: float | None = None,
) -> dict[str, Any]:
    """Set the LLM layer's settings in code; returns the settings now in force.

    Each is the setting of the ``WORKBENCH_*`` environment variable of its name (their
    table, with meanings and defaults, is in :mod:`workbench.config`), kept for this
    process (:func:`workbench.config.overrides`) and winning over that variable, which is
    not changed (child processes do not see it). ``None`` leaves a setting as it is;
    :func:`temporary_settings` undoes them after a ``with`` block. ``rpm`` (requests per
    minute) is one number for every model, or ``{model: rpm}`` (``0``/``None``: unlimited).
    """
    values: dict[str, Any] = {}
    if cache_mode is not None:
        values["cache_mode"] = _mode("cache_mode", cache_mode, config.CACHE_MODES)
    if cache_dir is not None:
        values["cache_dir"] = str(Path(cache_dir).expanduser())
    for name, value in (("concurrency", concurrency), ("timeout", timeout),
                        ("max_retries", max_retries), ("retry_backoff", retry_backoff),
                        ("circuit_breaker", circuit_breaker), ("batch_poll", batch_poll),
                        ("max_wait", max_wait)):
        if value is not None:
            number = type(config.CALL_SETTINGS[name][1])(value)
            if number < (1 if name == "concurrency" else 0) or (
                    name in ("batch_poll", "max_wait") and not 0 < number < float("inf")):
                raise ValueError(f"{name}={value!r} is out of range")
            values[name] = number
    if call_mode is not None:
        values["call_mode"] = _mode("call_mode", call_mode, config.CALL_MODES)
    if rpm is not None:
        values["rpm"] = dict(rpm) if isinstance(rpm, Mapping) else {"*": int(rpm)}
    config.set_overrides(values)
    return settings()


@contextmanager
def temporary_settings(**kwargs: Any) -> Iterator[dict[str, Any]]:
    """:func:`configure` for a ``with`` block; the previous settings come back after it.

    Examples
    --------
    >>> import tempfile
    >>> with temporary_settings(cache_dir=tempfile.mkdtemp(), cache_mode="off") as now:
    ...     now["cache_mode"]
    'off'
    """
    saved = config.overrides()
    try:
        yield configure(**kwargs)
    finally:
        config.set_overrides(saved, replace=True)


def settings() -> dict[str, Any]:
    """The settings now in force (:func:`configure`, else the environment, else defaults)."""
    return {
        "cache_dir": str(config.cache_dir()),
        "cache_mode": config.cache_mode(),
        "call_mode": config.call_mode(),
        **{name: config.call_setting(name) for name in config.CALL_SETTINGS},
        "rpm": dict(config.overrides().get("rpm", {})),
    }


def rpm_for(model: str, override: int | Mapping[str, int] | None = None) -> int | None:
    """Requests-per-minute limit of ``model`` (``None``: unlimited)."""
    table = config.overrides().get("rpm", {}) if override is None else (
        dict(override) if isinstance(override, Mapping) else {"*": override}
    )
    value = table.get(model, table.get("*"))
    return int(value) if value else None
