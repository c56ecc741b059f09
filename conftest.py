"""Configuration for the README's and the docs' code blocks, which run as tests.

pytest-markdown-docs runs each ``python`` block of ``README.md`` and ``docs/*.md`` as pasted.
Each runs in a temporary folder, so the files a block writes (SQLite studies, artifacts) land
there and not in the checkout.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _code_blocks_run_in_a_temporary_folder(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[None]:
    if type(request.node).__name__ != "MarkdownInlinePythonItem":
        yield
        return
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield
    finally:
        os.chdir(here)
