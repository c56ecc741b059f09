"""The code base stays ruff-clean (ruff is part of the test extras)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_ruff_check_is_clean() -> None:
    result = subprocess.run(["ruff", "check", str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_core_imports_neither_optuna_nor_ray() -> None:
    code = (
        "import sys, bore_samplers, bore_samplers.proposers;"
        "from bore_samplers.space import SearchSpace;"
        "bad = [m for m in ('optuna', 'ray', 'torch') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_sampler_import_does_not_import_torch_or_ray() -> None:
    code = (
        "import sys; from bore_samplers import BORESampler;"
        "bad = [m for m in ('ray', 'torch') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_integrations_install_inside_the_package(tmp_path: Path) -> None:
    # Run outside the checkout, so that only the installed distribution is importable.
    code = (
        "import importlib.util;"
        "assert importlib.util.find_spec('integrations') is None, 'top-level integrations';"
        "import bore_samplers.integrations.optuna"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
