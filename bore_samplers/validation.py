"""Checks of user-given options, shared by the proposers' ``validate()`` and the adapters.

Each check raises :class:`InvalidOptionError` with a message that names the option, repeats
the value and says what is allowed, e.g. ``"n_candidates must be an integer >= 1, got 0."``.
The caller passes the name the user typed (``n_startup_trials`` for a sampler, ``n_startup``
for a proposer), so that the message speaks of the class the user called.

:func:`unexpected_option` is the ``TypeError`` for a misspelt keyword, with the nearest
option suggested.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "InvalidOptionError",
    "check_bool",
    "check_callable",
    "check_choice",
    "check_float",
    "check_given_points",
    "check_instance",
    "check_int",
    "check_metric_mode",
    "check_constraint_metrics",
    "check_seed",
    "unexpected_option",
]

#: The largest seed every consumer accepts (``numpy.random.RandomState``, Optuna's samplers).
MAX_SEED = 2**32 - 1


class InvalidOptionError(ValueError, TypeError):
    """An option of the wrong type or outside its allowed values.

    Both a ``ValueError`` and a ``TypeError`` (as scikit-learn's ``InvalidParameterError``),
    so that code catching either, as the constructors' earlier checks raised both, catches it.
    """


def _got(value: Any) -> str:
    # A string's type is named: "got '0.25' (str)" says why a number-looking value fails.
    return f"got {value!r} (str)" if isinstance(value, str) else f"got {value!r}"


def _or_none(text: str, allow_none: bool) -> str:
    return f"None or {text}" if allow_none else text


def check_bool(name: str, value: Any) -> None:
    """``value`` is ``True`` or ``False`` (a numpy bool too; not 0, 1 or a string)."""
    if not isinstance(value, bool | np.bool_):
        raise InvalidOptionError(f"{name} must be True or False, {_got(value)}.")


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def check_int(
    name: str,
    value: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    allow_none: bool = False,
) -> None:
    """``value`` is an integer (not a bool, not a float) in ``[minimum, maximum]``."""
    if value is None and allow_none:
        return
    if minimum is not None and maximum is not None:
        allowed = f"an integer in [{minimum}, {maximum}]"
    elif minimum is not None:
        allowed = f"an integer >= {minimum}"
    elif maximum is not None:
        allowed = f"an integer <= {maximum}"
    else:
        allowed = "an integer"
    if not (
        _is_int(value)
        and (minimum is None or value >= minimum)
        and (maximum is None or value <= maximum)
    ):
        raise InvalidOptionError(f"{name} must be {_or_none(allowed, allow_none)}, {_got(value)}.")


def check_float(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_none: bool = False,
) -> None:
    """``value`` is a finite real number (an int too; not a bool or a string) within bounds.

    ``low`` and ``high`` are inclusive unless ``low_open`` / ``high_open``.
    """
    if value is None and allow_none:
        return
    if low is not None and high is not None:
        opening, closing = "(" if low_open else "[", ")" if high_open else "]"
        allowed = f"a number in {opening}{low:g}, {high:g}{closing}"
    elif low is not None:
        allowed = f"a finite number {'>' if low_open else '>='} {low:g}"
    elif high is not None:
        allowed = f"a finite number {'<' if high_open else '<='} {high:g}"
    else:
        allowed = "a finite number"
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
    if ok:
        number = float(value)
        ok = math.isfinite(number)
        if ok and low is not None:
            ok = number > low if low_open else number >= low
        if ok and high is not None:
            ok = number < high if high_open else number <= high
    if not ok:
        raise InvalidOptionError(f"{name} must be {_or_none(allowed, allow_none)}, {_got(value)}.")


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> None:
    """``value`` is one of ``choices`` (compared by equality and type, so ``1 != True``)."""
    choices = tuple(choices)
    try:
        ok = any(value == c and type(value) is type(c) for c in choices)
    except Exception:  # noqa: BLE001 - e.g. an array, whose comparison has no truth value
        ok = False
    if not ok:
        listed = ", ".join(repr(c) for c in choices)
        raise InvalidOptionError(f"{name} must be one of {listed}; {_got(value)}.")


def check_seed(name: str, value: Any) -> None:
    """``value`` is ``None`` or an integer in ``[0, 2**32 - 1]`` (what every generator takes)."""
    if value is None:
        return
    if not (_is_int(value) and 0 <= value <= MAX_SEED):
        raise InvalidOptionError(
            f"{name} must be None or an integer in [0, 2**32 - 1], {_got(value)}."
        )


def check_instance(
    name: str, value: Any, types: type | tuple[type, ...], what: str, *, allow_none: bool = False
) -> None:
    """``value`` is an instance of ``types``, described to the user as ``what``."""
    if value is None and allow_none:
        return
    if not isinstance(value, types):
        raise InvalidOptionError(
            f"{name} must be {_or_none(what, allow_none)}, got {value!r} ({type(value).__name__})."
        )


def check_callable(name: str, value: Any, what: str, *, allow_none: bool = False) -> None:
    """``value`` is callable (``what`` describes the expected signature)."""
    if value is None and allow_none:
        return
    if not callable(value):
        raise InvalidOptionError(
            f"{name} must be {_or_none(what, allow_none)}, got {value!r} ({type(value).__name__})."
        )


def unexpected_option(owner: str, name: str, options: Collection[str]) -> TypeError:
    """The ``TypeError`` for a keyword ``owner()`` does not take, naming the nearest option."""
    message = f"{owner}() got an unexpected keyword argument {name!r}"
    close = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
    if close:
        message += f"; did you mean {close[0]!r}?"
    else:
        message += f"; its options are {', '.join(sorted(options))}."
    return TypeError(message)


def check_constraint_metrics(constraints: Any, metric: Any) -> tuple[str, ...]:
    """``constraints`` (metrics reported beside the objectives ``metric``) as a tuple of
    distinct names other than the objectives."""
    what = "a list of metric names (str) that the trainable reports"
    check_instance("constraints", constraints, Sequence, what, allow_none=True)
    names = tuple(constraints or ())
    if isinstance(constraints, str) or not all(isinstance(name, str) for name in names):
        raise InvalidOptionError(f"constraints must be None or {what}, got {constraints!r}.")
    objectives = set(metric) if isinstance(metric, list | tuple) else {metric}
    if len(set(names)) < len(names) or objectives & set(names):
        raise InvalidOptionError(
            f"constraints must name distinct metrics other than the objective, got "
            f"constraints={constraints!r} with metric={metric!r}."
        )
    return names


def check_metric_mode(metric: Any, mode: Any, owner: str, multi_objective: bool) -> None:
    """``metric`` and ``mode``: names and ``"min"``/``"max"``, or lists of the same length."""
    several = isinstance(metric, list | tuple), isinstance(mode, list | tuple)
    if any(several):
        if not all(several) or len(metric) != len(mode) or len(metric) < 1:
            raise ValueError(
                "For several objectives pass a list of metrics and a list of modes of the same "
                f"length (as Ray's OptunaSearch takes them), got metric={metric!r}, "
                f"mode={mode!r}."
            )
        if len(set(metric)) < len(metric):
            raise ValueError(f"metric names each objective once, got metric={metric!r}.")
        if not multi_objective:
            raise ValueError(
                f"{owner} optimises a single objective: pass one metric, got metric={metric!r}."
            )
        modes, metrics = mode, metric
    else:
        modes, metrics = [mode], [metric]
    for each in metrics:
        check_instance("metric", each, str, "a metric name (str)", allow_none=True)
    for each in modes:
        if each not in (None, "min", "max"):
            raise InvalidOptionError(f"mode must be None, 'min' or 'max', got {each!r}.")


def check_given_points(space: Any, points: Any, rewards: Any) -> None:
    """The types of a searcher's ``space``, ``points_to_evaluate`` and ``evaluated_rewards``."""
    check_instance("space", space, Mapping, "a Tune search space (a dict)", allow_none=True)
    what = "a list of configurations (dicts)"
    check_instance("points_to_evaluate", points, Sequence, what, allow_none=True)
    if isinstance(points, str) or any(not isinstance(p, Mapping) for p in points or ()):
        raise InvalidOptionError(f"points_to_evaluate must be None or {what}, got {points!r}.")
    what = (
        "a list of metric values (numbers, or one list of numbers per point for several metrics)"
    )
    check_instance("evaluated_rewards", rewards, Sequence, what, allow_none=True)

    def is_number(value: Any) -> bool:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)

    def is_reward(value: Any) -> bool:
        if isinstance(value, Sequence) and not isinstance(value, str):
            return all(is_number(v) for v in value)
        return is_number(value)

    if isinstance(rewards, str) or any(not is_reward(r) for r in rewards or ()):
        raise InvalidOptionError(f"evaluated_rewards must be None or {what}, got {rewards!r}.")
    if rewards is not None and (points is None or len(points) != len(rewards)):
        raise ValueError(
            "evaluated_rewards needs points_to_evaluate of the same length (one reward per point)."
        )
