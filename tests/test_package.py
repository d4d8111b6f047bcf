"""The package surface: sorted, complete, cheap to import."""

import subprocess
import sys

import workbench


def test_all_is_sorted_and_every_name_resolves():
    assert workbench.__all__ == sorted(workbench.__all__)
    for name in workbench.__all__:
        assert getattr(workbench, name) is not None, name


def test_import_is_offline_and_light():
    code = (
        "import os, sys, workbench; "
        "print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'], os.environ['HF_HUB_OFFLINE'], "
        "'litellm' in sys.modules, 'pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "1", "False", "False"]
    assert out.stderr == ""
