"""``workbench.config``: the settings table documents every ``WORKBENCH_*`` setting read."""

from __future__ import annotations

import re
from pathlib import Path

from workbench import config

PACKAGE = Path(config.__file__).resolve().parent
SETTING = re.compile(r"WORKBENCH_[A-Z0-9_]*[A-Z0-9]")


def _settings_read_by_the_code() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        found |= set(SETTING.findall(path.read_text(encoding="utf-8")))
    return found


def test_the_settings_table_lists_every_setting_the_code_reads():
    read = _settings_read_by_the_code()
    assert "WORKBENCH_CACHE_DIR" in read  # the scan finds settings
    table = set(SETTING.findall(config.__doc__))
    assert read - table == set(), f"add to config.py's settings table: {sorted(read - table)}"


def test_the_settings_table_lists_nothing_the_code_does_not_read():
    source = "".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))
    code = source.replace(config.__doc__, "")  # every use outside the table itself
    stale = sorted(n for n in set(SETTING.findall(config.__doc__)) if n not in code)
    assert not stale, f"documented but never read: {stale}"
