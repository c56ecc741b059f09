"""Ray Tune's search-space conventions, framework-free: what the Ray adapter maps domains onto.

A Tune ``param_space`` is a nested dict of domains and constants. :class:`TuneSearchSpace`
holds its translation: a core :class:`~bore_samplers.SearchSpace` over flat ``"a/b"`` names,
the codecs that carry values across, and the constants. :func:`float_param` and
:func:`int_param` translate one domain's bounds; the Ray adapter
(:func:`bore_samplers.integrations.ray_space.search_space_from_tune`) reads them off Ray's
``Domain`` objects. Bounds follow what Tune's own samplers produce
(``ray/tune/search/sample.py``), so no proposal is a value the domain could not have drawn:

* ``uniform(l, u)``: ``FloatParam(l, u⁻)``, ``u⁻`` the float just below ``u`` (Tune draws
  from ``[l, u)``); ``loguniform(l, u)``: the same with ``log=True``.
* ``quniform(l, u, q)``: ``FloatParam(l, u, step=q)``, values rounded to the multiples of
  ``q`` as Tune rounds them (``u`` included).
* ``qloguniform(l, u, q)``: the grid index ``k`` of the value ``k·q``, as
  ``IntParam(l/q, u/q, log=True)`` (the core has no log-scaled stepped floats).
* ``randint(l, u)``, ``qrandint(l, u, 1)``: ``IntParam(l, u - 1)`` (Tune excludes ``u``);
  ``lograndint(l, u)``, ``qlograndint(l, u, 1)``: the same with ``log=True``.
* ``qrandint(l, u, q)`` with ``q > 1``: the multiples of ``q`` in ``[l, u]``, both bounds
  included, as ``IntParam(⌈l/q⌉·q, ⌊u/q⌋·q, step=q)``.
* ``qlograndint(l, u, q)`` with ``q > 1``: the grid index, ``IntParam(⌈l/q⌉, ⌊u/q⌋,
  log=True)``.
* ``choice(c)``: ``CategoricalParam((0, ..., len(c) - 1))``, the index of the category, so
  that any object (``None``, tuples, arrays) round-trips.
* ``grid_search``, ``sample_from``, ``randn``, ``qrandn``, ``{"eval": ...}`` and domains
  inside lists: ``ValueError``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from bore_samplers.space import (
    CategoricalParam,
    FloatParam,
    IntParam,
    Param,
    SearchSpace,
    choice_index,
)

__all__ = ["DELIMITER", "TuneParam", "TuneSearchSpace", "choice_param", "float_param", "int_param"]

#: Joins the keys of a nested parameter into its flat name (``"a/b"``).
DELIMITER = "/"


@dataclass(frozen=True)
class TuneParam:
    """One Tune domain as a core parameter, and how values cross between the two.

    Parameters
    ----------
    param
        The core parameter the proposers search over.
    codec
        How a core value becomes a Tune value: ``"value"`` (unchanged), ``"grid"`` (a float
        on a ``q`` grid, rounded as Tune rounds it: ``round(v / q) * q``), ``"index"`` (the core
        value is the grid index ``k`` of the Tune value ``k * q``: log-scaled quantized domains,
        which the core cannot express directly) or ``"choice"`` (the core value is the index
        of a category, so that any Python object round-trips).
    q
        The quantization step for ``"grid"`` and ``"index"``.
    categories
        The categories of a ``"choice"``.
    integer
        Whether Tune casts the values of an ``"index"`` parameter to ``int``.
    """

    param: Param
    codec: Literal["value", "grid", "index", "choice"] = "value"
    q: float = 1
    categories: tuple[Any, ...] = ()
    integer: bool = False

    def to_tune(self, value: Any) -> Any:
        """A core value -> the value Tune's own sampler would have produced."""
        if self.codec == "grid":
            return float(round(value / self.q) * self.q)
        if self.codec == "index":
            return int(value * self.q) if self.integer else float(value * self.q)
        if self.codec == "choice":
            return self.categories[value]
        return value

    def to_core(self, value: Any, name: str) -> Any:
        """A Tune value (a point given by the user) -> the core value.

        Raises
        ------
        ValueError
            If ``value`` is not one of the categories of a choice, or outside the domain.
        """
        if self.codec == "choice":
            return choice_index(self.categories, value, name)
        core = int(round(float(value) / self.q)) if self.codec == "index" else value
        low, high = self.param.low, self.param.high  # type: ignore[union-attr]
        if not isinstance(core, numbers.Real) or not low <= core <= np.nextafter(high, np.inf):
            raise ValueError(f"{name}={value!r} is not a number in {self.describe()}.")
        return core

    def describe(self) -> str:
        """The domain in Tune's units: ``[-5.0, 5.0)`` (Tune excludes a uniform's upper bound)."""
        low, high = (self.to_tune(v) for v in (self.param.low, self.param.high))  # type: ignore[union-attr]
        if self.codec == "value" and isinstance(self.param, FloatParam):
            return f"[{low!r}, {float(np.nextafter(high, np.inf))!r})"
        return f"[{low!r}, {high!r}]"


@dataclass(frozen=True)
class TuneSearchSpace:
    """A Tune ``param_space`` translated for the proposers (see
    :func:`~bore_samplers.integrations.ray_space.search_space_from_tune`).

    Parameters
    ----------
    space
        The core search space; nested keys are flattened to ``"a/b"``.
    params
        Flat name -> :class:`TuneParam`, in the order of ``space``.
    paths
        Flat name -> key path of the parameter in the nested ``param_space``.
    constants
        Key path -> value of everything in ``param_space`` that is not a domain.
    """

    space: SearchSpace
    params: dict[str, TuneParam]
    paths: dict[str, tuple[Any, ...]]
    constants: dict[tuple[Any, ...], Any] = field(default_factory=dict)

    def to_config(
        self, params: Mapping[str, Any], given: Mapping[str, Any] | None = None
    ) -> dict[Any, Any]:
        """The nested Tune config of core ``params``, with the constants.

        ``given`` (flat name -> Tune value) overrides the translated values: a point of
        ``points_to_evaluate`` is passed on exactly as the user wrote it.
        """
        given = given or {}
        config: dict[Any, Any] = {}
        for path, value in self.constants.items():
            _set_path(config, path, value)
        for name, param in self.params.items():
            value = given[name] if name in given else param.to_tune(params[name])
            _set_path(config, self.paths[name], value)
        return config

    def read_point(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """The Tune values of a user-given configuration (nested or with ``"a/b"`` keys).

        Parameters missing from ``point`` are left out; constants are ignored.

        Raises
        ------
        ValueError
            For a key that is neither a parameter nor a constant.
        """
        known = set(self.params) | {DELIMITER.join(map(str, p)) for p in self.constants}
        unknown = [k for k in _flat_keys(point, self.paths.values()) if k not in known]
        if unknown:
            raise ValueError(
                f"Unknown parameter(s) {unknown} in {dict(point)!r}; the search space has "
                f"{sorted(self.params)}."
            )
        values = {}
        for name, path in self.paths.items():
            found, value = _lookup(point, name, path)
            if found:
                values[name] = value
        return values


def choice_param(categories: Any) -> TuneParam:
    """A ``choice`` domain: the index of the category, so that any object round-trips."""
    indices = CategoricalParam(tuple(range(len(categories))))
    return TuneParam(indices, "choice", categories=tuple(categories))


def float_param(low: float, high: float, log: bool, q: float | None) -> TuneParam:
    """A float domain (``uniform``, ``loguniform``, ``quniform``, ``qloguniform``).

    Raises
    ------
    ValueError
        For infinite bounds, or no multiple of ``q`` between them.
    """
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("bounds must be finite")
    if q is None:
        # Tune draws from [low, high): the upper bound itself is never produced.
        top = math.nextafter(high, -math.inf) if high > low else high
        return TuneParam(FloatParam(low, top, log=log))
    k_low, k_high = _grid_index(low, q, True), _grid_index(high, q, False)
    if k_high < k_low:
        raise ValueError(f"no multiple of q={q} lies between the bounds")
    if log:
        if k_low < 1:
            raise ValueError("a log-scaled domain needs a lower bound of at least q")
        return TuneParam(IntParam(k_low, k_high, log=True), "index", q)
    return TuneParam(FloatParam(k_low * q, k_high * q, step=q), "grid", q)


def int_param(low: Any, high: Any, log: bool, q: float | None) -> TuneParam:
    """An integer domain (``randint``, ``lograndint``, ``qrandint``, ``qlograndint``).

    Raises
    ------
    ValueError
        For bounds that are not integers, an empty domain or a bad ``q``.
    """
    if not (_is_int(low) and _is_int(high)):
        raise ValueError("integer bounds must be finite integers")
    if q is None or q == 1:
        # Tune's integer samplers exclude the upper bound (also qrandint with q == 1).
        if high - 1 < low:
            raise ValueError("the domain is empty (the upper bound is exclusive)")
        return TuneParam(IntParam(int(low), int(high) - 1, log=log))
    if not _is_int(q) or q < 1:
        raise ValueError(f"the quantization q={q} of an integer domain must be an integer")
    q = int(q)
    # Quantized integers are the multiples of q in [low, high], both bounds inclusive.
    k_low, k_high = _grid_index(low, q, True), _grid_index(high, q, False)
    if k_high < k_low:
        raise ValueError(f"no multiple of q={q} lies between the bounds")
    if log:
        return TuneParam(IntParam(k_low, k_high, log=True), "index", q, integer=True)
    return TuneParam(IntParam(k_low * q, k_high * q, step=q))


def _grid_index(bound: float, q: float, round_up: bool) -> int:
    """``bound``'s index on the multiples of ``q``, rounded inwards (as Tune's Quantized)."""
    scaled = bound / q
    nearest = round(scaled)
    if math.isclose(scaled, nearest):
        return int(nearest)
    return int(math.ceil(scaled) if round_up else math.floor(scaled))


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) or (isinstance(value, float) and value.is_integer())


def _set_path(config: dict, path: tuple[Any, ...], value: Any) -> None:
    node = config
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


def _lookup(point: Mapping[str, Any], name: str, path: tuple[Any, ...]) -> tuple[bool, Any]:
    if name in point:
        return True, point[name]
    node: Any = point
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False, None
        node = node[key]
    return True, node


def _flat_keys(point: Mapping[str, Any], paths: Any) -> list[str]:
    """Flat names of a user point's leaves, not descending into parameter values."""
    stops = {tuple(p) for p in paths}
    keys: list[str] = []

    def visit(node: Mapping[str, Any], prefix: tuple[Any, ...]) -> None:
        for key, value in node.items():
            path = (*prefix, key)
            if path not in stops and isinstance(value, Mapping) and value:
                visit(value, path)
            else:
                keys.append(DELIMITER.join(map(str, path)))

    visit(point, ())
    return keys
