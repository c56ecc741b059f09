"""Every option's bad value raises the documented error at construction.

The README promises an error that is both a ``ValueError`` and a ``TypeError``
(:class:`~bore_samplers.validation.InvalidOptionError`) and names the option. This sweeps each
sampler's keyword options with an unknown string (for options whose default is a string) and
with a value of the wrong type (for numeric options).
"""

from __future__ import annotations

import inspect

import pytest

import bore_samplers
from bore_samplers.validation import InvalidOptionError

SAMPLERS = [
    "AutoSampler",
    "BORESampler",
    "CMESSampler",
    "PortfolioSampler",
    "BinaryOutcomeSampler",
]


def _cases() -> list[tuple[str, str, object]]:
    cases = []
    for name in SAMPLERS:
        signature = inspect.signature(getattr(bore_samplers, name))
        for option, parameter in signature.parameters.items():
            default = parameter.default
            if isinstance(default, str):
                cases.append((name, option, "no-such-choice"))
            elif isinstance(default, (int, float)) and not isinstance(default, bool):
                cases.append((name, option, "3"))
    return cases


@pytest.mark.parametrize(("name", "option", "value"), _cases())
def test_a_bad_value_raises_the_documented_error(name: str, option: str, value: object) -> None:
    with pytest.raises(InvalidOptionError, match=option) as info:
        getattr(bore_samplers, name)(**{option: value})
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
