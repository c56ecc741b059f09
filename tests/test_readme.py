"""The README's option tables against the samplers' signatures.

Each ``### `SamplerName``` section of README.md has a table whose first column names options
(several per row, comma-separated). Together with the options that the "Every sampler takes"
sentence names for all samplers, they must be exactly the constructor's parameters: an option
added to a signature without a row, or a row for an option that is gone, fails here.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _common_options() -> set[str]:
    sentence = re.search(r"Every sampler takes(.*?)\n\n", README, re.S)
    assert sentence, "README.md lost its 'Every sampler takes' paragraph"
    return set(re.findall(r"`(\w+)`", sentence.group(1)))


def _table_options(name: str) -> set[str]:
    section = re.search(rf"^### `{name}`\n(.*?)(?=^#)", README, re.S | re.M)
    assert section, f"README.md has no section for {name}"
    options: set[str] = set()
    for row in re.findall(r"^\| (.+?) \|", section.group(1), re.M):
        options.update(re.findall(r"`(\w+)`", row))
    return options


def _sampler(name: str) -> type:
    if name == "PreferentialSampler":
        pytest.importorskip("optuna_dashboard")
        from bore_samplers.integrations.preferential import PreferentialSampler

        return PreferentialSampler
    import bore_samplers

    return getattr(bore_samplers, name)


@pytest.mark.parametrize(
    "name",
    [
        "AutoSampler",
        "BORESampler",
        "CMESSampler",
        "PortfolioSampler",
        "BinaryOutcomeSampler",
        "PreferentialSampler",
    ],
)
def test_the_option_table_lists_every_parameter(name: str) -> None:
    parameters = set(inspect.signature(_sampler(name)).parameters)
    documented = _table_options(name)
    unknown = sorted(documented - parameters)
    assert not unknown, f"README rows for options that {name} does not take: {unknown}"
    missing = parameters - documented - _common_options()
    assert not missing, f"{name}'s options without a README row: {sorted(missing)}"
