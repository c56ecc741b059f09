"""Framework-free search-space description and its numeric encodings.

Notation: three coordinate systems, used with these names throughout the package.

==========  =============================  ==========================================
name        what                           maps
==========  =============================  ==========================================
``params``  parameter values (a dict)      ``encode`` -> ``u``; ``decode`` <- ``u``
``u``       unit cube, ``(n, d)``          one coordinate per parameter; ``snap``
``x``       model features, ``(n, f)``     ``features(u)``: one-hot for categoricals
==========  =============================  ==========================================

Every algorithm in this package works on two numeric views of a configuration:

* the **unit view** ``u`` in ``[0, 1]^d``, one coordinate per parameter. Acquisition optimisers
  search here. Continuous floats map linearly (or in log space) onto ``[0, 1]``; integer,
  stepped and categorical parameters map onto ``m`` equal-width bins, one per valid value, so
  that uniform sampling in ``u`` is uniform over the valid values and every ``u`` decodes to
  exactly one valid value (:meth:`SearchSpace.snap` moves ``u`` to the centre of its bin).
* the **feature view** ``x`` that models are trained on (:meth:`SearchSpace.features`). Numeric
  parameters keep their unit coordinate. Categorical parameters are one-hot encoded by default
  (``categorical_encoding="onehot"``): no order between choices is implied, which suits both
  trees (one split isolates a choice) and neural networks (BORE paper, section 5). Very large
  choice lists can use ``"index"`` (the unit coordinate of the bin) to keep the feature matrix
  small, at the price of an arbitrary order.

Decoding (:meth:`SearchSpace.decode`) always returns valid plain-Python values: inside the
bounds, on the step grid, and an actual element of a categorical's choices.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = [
    "CategoricalParam",
    "Dimension",
    "FloatParam",
    "IntParam",
    "Param",
    "SearchSpace",
    "choice_index",
]


@dataclass(frozen=True)
class FloatParam:
    """A real-valued parameter on ``[low, high]``, optionally log-scaled or on a step grid.

    Parameters
    ----------
    low, high
        Inclusive bounds.
    log
        Search in ``log`` space (needs ``low > 0``).
    step
        Grid spacing; valid values are ``low + k * step <= high``. Cannot be combined with
        ``log``.
    """

    low: float
    high: float
    log: bool = False
    step: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            raise ValueError(f"FloatParam bounds must be finite, got [{self.low}, {self.high}].")
        if self.low > self.high:
            raise ValueError(f"FloatParam needs low <= high, got [{self.low}, {self.high}].")
        if self.log and self.step is not None:
            raise ValueError("FloatParam cannot be both log-scaled and stepped.")
        if self.log and self.low <= 0:
            raise ValueError(f"A log-scaled FloatParam needs low > 0, got {self.low}.")
        if self.step is not None and self.step <= 0:
            raise ValueError(f"FloatParam step must be positive, got {self.step}.")


@dataclass(frozen=True)
class IntParam:
    """An integer parameter on ``[low, high]`` with a step, optionally log-scaled.

    Parameters
    ----------
    low, high
        Inclusive bounds.
    log
        Search in ``log`` space (needs ``low >= 1`` and ``step == 1``).
    step
        Grid spacing; valid values are ``low + k * step <= high``.
    """

    low: int
    high: int
    log: bool = False
    step: int = 1

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError(f"IntParam needs low <= high, got [{self.low}, {self.high}].")
        if self.step < 1:
            raise ValueError(f"IntParam step must be >= 1, got {self.step}.")
        if self.log and (self.low < 1 or self.step != 1):
            raise ValueError("A log-scaled IntParam needs low >= 1 and step == 1.")


@dataclass(frozen=True)
class CategoricalParam:
    """A parameter taking one of a finite tuple of ``choices`` (no order implied)."""

    choices: tuple[Any, ...]

    def __post_init__(self) -> None:
        if len(self.choices) == 0:
            raise ValueError("CategoricalParam needs at least one choice.")
        object.__setattr__(self, "choices", tuple(self.choices))


Param = FloatParam | IntParam | CategoricalParam


def _n_grid_points(low: float, high: float, step: float) -> int:
    # A tiny tolerance keeps e.g. (10.2 - -10.2) / 0.1 from losing its last grid point.
    return int(math.floor((high - low) / step + 1e-9)) + 1


class Dimension:
    """Encoding of one parameter between its value and its unit coordinate.

    ``n_bins`` is the number of equal-width bins of an integer, stepped or categorical
    parameter (``None`` for continuous floats and log-scaled integers).
    """

    def __init__(self, name: str, param: Param) -> None:
        self.name = name
        self.param = param
        self.n_bins: int | None  # None for continuous dimensions
        self._log_low = self._log_high = 0.0
        self._choice_lookup: dict[Any, int] | None = None
        if isinstance(param, CategoricalParam):
            self.n_bins = len(param.choices)
            self._choice_lookup = _unique_choice_lookup(param.choices)
        elif isinstance(param, IntParam):
            if param.log:
                # Pad by half a unit in log space so every integer gets a bin around it.
                self.n_bins = None
                self._log_low = math.log(param.low - 0.5)
                self._log_high = math.log(param.high + 0.5)
            else:
                self.n_bins = _n_grid_points(param.low, param.high, param.step)
        elif param.step is not None:
            self.n_bins = _n_grid_points(param.low, param.high, param.step)
        else:
            self.n_bins = None
            if param.log:
                self._log_low = math.log(param.low)
                self._log_high = math.log(param.high)

    @property
    def is_continuous(self) -> bool:
        """True for real-valued parameters without a step (the only ones L-BFGS may move)."""
        return isinstance(self.param, FloatParam) and self.param.step is None

    @property
    def is_categorical(self) -> bool:
        return isinstance(self.param, CategoricalParam)

    def snap(self, u: np.ndarray) -> np.ndarray:
        """Move unit coordinates to the canonical point of the valid value they decode to."""
        u = np.clip(u, 0.0, 1.0)
        if self.n_bins is not None:
            index = np.minimum(np.floor(u * self.n_bins), self.n_bins - 1)
            return (index + 0.5) / self.n_bins
        if isinstance(self.param, IntParam):  # log-scaled integer
            return self.encode_values(self.decode_values(u))
        if self.param.low == self.param.high:
            # A single value: every u decodes to it, so all must snap to encode's 0.5.
            return np.full(u.shape, 0.5)
        return u

    def decode_values(self, u: np.ndarray) -> list[Any]:
        """Unit coordinates -> valid plain-Python values."""
        u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
        p = self.param
        if self.n_bins is not None:
            index = np.minimum(np.floor(u * self.n_bins), self.n_bins - 1).astype(int)
            if isinstance(p, CategoricalParam):
                return [p.choices[i] for i in index]
            if isinstance(p, IntParam):
                return [int(p.low + i * p.step) for i in index]
            assert p.step is not None
            return [float(min(p.low + i * p.step, p.high)) for i in index]
        if isinstance(p, IntParam):  # log-scaled integer
            raw = np.exp(self._log_low + u * (self._log_high - self._log_low))
            return [int(v) for v in np.clip(np.round(raw), p.low, p.high)]
        if p.log:
            raw = np.exp(self._log_low + u * (self._log_high - self._log_low))
        else:
            raw = p.low + u * (p.high - p.low)
        # The ends map to the bounds exactly (exp(log(low)) can be off in the last digit).
        raw = np.where(u <= 0.0, p.low, np.where(u >= 1.0, p.high, raw))
        return [float(v) for v in np.clip(raw, p.low, p.high)]

    def encode_values(self, values: Sequence[Any]) -> np.ndarray:
        """Valid values -> unit coordinates (bin centres for discrete parameters)."""
        p = self.param
        if isinstance(p, CategoricalParam):
            get = (self._choice_lookup or {}).get
            try:
                found = [get(v, -1) for v in values]
            except TypeError:  # an unhashable value
                found = [-1] * len(values)
            index = np.array(
                [
                    i if i >= 0 else choice_index(p.choices, v, self.name)
                    for i, v in zip(found, values, strict=True)
                ],
                float,
            )
            return (index + 0.5) / len(p.choices)
        v = np.asarray(values, dtype=float)
        if self.n_bins is not None:
            assert p.step is not None
            index = np.clip(np.round((v - p.low) / p.step), 0, self.n_bins - 1)
            return (index + 0.5) / self.n_bins
        if isinstance(p, IntParam) or p.log:
            span = self._log_high - self._log_low
            if span == 0.0:
                return np.full(len(v), 0.5)
            return np.clip((np.log(v) - self._log_low) / span, 0.0, 1.0)
        if p.high == p.low:
            return np.full(len(v), 0.5)
        return np.clip((v - p.low) / (p.high - p.low), 0.0, 1.0)


def choice_index(choices: tuple[Any, ...], value: Any, name: str) -> int:
    """The index of ``value`` among a categorical parameter's ``choices``.

    The same object first, then an equal value of the same type (so that ``True`` does not
    match the choice ``1``), then any equal value (NaN matching NaN). Values that cannot be
    compared (numpy arrays) match only themselves.

    Raises
    ------
    ValueError
        If ``value`` is none of the choices; the message names the parameter ``name``.
    """
    for i, choice in enumerate(choices):
        if choice is value:
            return i
    for strict in (True, False):
        for i, choice in enumerate(choices):
            if strict and type(choice) is not type(value):
                continue
            try:
                if bool(choice == value) or (_is_nan(choice) and _is_nan(value)):
                    return i
            except (TypeError, ValueError):  # no truth value (e.g. numpy arrays)
                continue
    raise ValueError(
        f"Value {value!r} is not one of the choices {list(choices)} of categorical "
        f"parameter {name!r}."
    )


_PLAIN_CHOICE_TYPES = (str, int, float, bool, type(None))


def _unique_choice_lookup(choices: tuple[Any, ...]) -> dict[Any, int] | None:
    """Choice -> index, when a dictionary lookup gives what :func:`choice_index` gives.

    That holds when every choice is a plain value (str, int, float, bool, None: hashes
    consistent with equality) and no two are equal: a value then equals at most one choice,
    whichever rule of :func:`choice_index` finds it. Otherwise ``None`` (encode by scanning).
    """
    if not all(type(choice) in _PLAIN_CHOICE_TYPES for choice in choices):
        return None
    lookup = {choice: i for i, choice in enumerate(choices)}
    return lookup if len(lookup) == len(choices) else None


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


class SearchSpace:
    """An ordered mapping of parameter names to :data:`Param` with numeric encodings.

    Parameters
    ----------
    params
        Parameter name -> :class:`FloatParam`, :class:`IntParam` or :class:`CategoricalParam`.
        The order of the mapping is the order of the unit coordinates.
    categorical_encoding
        How :meth:`features` encodes categorical parameters: ``"onehot"`` (default) or
        ``"index"``.

    Raises
    ------
    ValueError
        If ``params`` is empty.
    """

    def __init__(
        self,
        params: Mapping[str, Param],
        categorical_encoding: Literal["onehot", "index"] = "onehot",
    ) -> None:
        if len(params) == 0:
            raise ValueError("The search space is empty: there is no parameter to propose.")
        if categorical_encoding not in ("onehot", "index"):
            raise ValueError(
                f"categorical_encoding must be 'onehot' or 'index', got {categorical_encoding!r}."
            )
        for name, param in params.items():
            if not isinstance(param, FloatParam | IntParam | CategoricalParam):
                raise TypeError(f"Parameter {name!r} has unsupported type {type(param)!r}.")
        self.params = dict(params)
        self.categorical_encoding = categorical_encoding
        self._dims = [Dimension(name, param) for name, param in self.params.items()]
        # Asked at every batch of points the acquisition optimisers score.
        self._has_categorical = any(d.is_categorical for d in self._dims)

    def __repr__(self) -> str:
        return f"SearchSpace({self.params!r}, categorical_encoding={self.categorical_encoding!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SearchSpace)
            and self.params == other.params
            and self.categorical_encoding == other.categorical_encoding
        )

    def __hash__(self) -> int:
        return hash((tuple(self.params.items()), self.categorical_encoding))

    @property
    def dimensions(self) -> tuple[Dimension, ...]:
        """The encoding of each parameter, in coordinate order."""
        return tuple(self._dims)

    @property
    def names(self) -> list[str]:
        """Parameter names in coordinate order."""
        return list(self.params)

    @property
    def n_dims(self) -> int:
        """Number of unit coordinates (one per parameter)."""
        return len(self._dims)

    @property
    def continuous_mask(self) -> np.ndarray:
        """Boolean mask of unit coordinates that gradient-based optimisers may move."""
        return np.array([d.is_continuous for d in self._dims])

    @property
    def is_continuous(self) -> bool:
        """True when every parameter is a real-valued float without a step."""
        return bool(self.continuous_mask.all())

    # ----------------------------------------------------------------- unit view
    def encode(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Configurations -> unit coordinates of shape ``(n, n_dims)``.

        Raises
        ------
        KeyError
            If a configuration misses a parameter.
        ValueError
            If a categorical value is not one of the choices.
        """
        u = np.empty((len(configs), self.n_dims))
        for j, dim in enumerate(self._dims):
            u[:, j] = dim.encode_values([c[dim.name] for c in configs]) if len(configs) else 0
        return u

    def decode(self, u: np.ndarray) -> list[dict[str, Any]]:
        """Unit coordinates ``(n, n_dims)`` -> valid configurations of plain Python values."""
        u = np.atleast_2d(np.asarray(u, dtype=float))
        columns = [dim.decode_values(u[:, j]) for j, dim in enumerate(self._dims)]
        return [
            {dim.name: columns[j][i] for j, dim in enumerate(self._dims)} for i in range(len(u))
        ]

    def snap(self, u: np.ndarray) -> np.ndarray:
        """Canonical unit coordinates of the configurations that ``u`` decodes to.

        ``snap(u)`` and ``u`` decode to the same configuration, and two points that decode to
        the same configuration snap to the same coordinates, so snapped points can be compared
        for duplicates and fed to models without giving them invalid inputs.
        """
        u = np.atleast_2d(np.asarray(u, dtype=float))
        return np.column_stack([dim.snap(u[:, j]) for j, dim in enumerate(self._dims)])

    def sample_uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` snapped unit points drawn uniformly (uniform over values per parameter)."""
        return self.snap(rng.random((n, self.n_dims)))

    def sample_sobol(self, n: int, seed: int | None, skip: int = 0) -> np.ndarray:
        """Points ``skip .. skip + n - 1`` of a scrambled Sobol sequence, snapped.

        Deterministic for a given ``seed``, so a worker that knows how many points were already
        handed out can continue the sequence instead of repeating it.
        """
        # Imported here: scipy.stats takes most of a second to import, and ``import
        # bore_samplers`` should not pay for it before a proposal needs it.
        from scipy.stats import qmc

        sobol = qmc.Sobol(d=self.n_dims, scramble=True, seed=seed)
        if skip:
            sobol.fast_forward(skip)
        with warnings.catch_warnings():
            # Any prefix of the sequence is low-discrepancy; only exact balance needs 2^k.
            warnings.filterwarnings(
                "ignore", message="The balance properties", category=UserWarning
            )
            return self.snap(sobol.random(n))

    # -------------------------------------------------------------- feature view
    @property
    def n_features(self) -> int:
        """Width of the feature matrix returned by :meth:`features`."""
        if self.categorical_encoding == "index":
            return self.n_dims
        return sum(d.n_bins if d.is_categorical else 1 for d in self._dims)  # type: ignore[misc]

    def features(self, u: np.ndarray) -> np.ndarray:
        """Model features of (snapped) unit points, shape ``(n, n_features)``."""
        u = np.atleast_2d(np.asarray(u, dtype=float))
        if self.categorical_encoding == "index" or not self._has_categorical:
            # Every column is its own feature. (The acquisition optimisers call this for every
            # batch of points they score: the column-wise copy below costs more than the
            # scoring of a few points.)
            return u.copy()
        blocks = []
        for j, dim in enumerate(self._dims):
            if dim.is_categorical:
                k = dim.n_bins
                assert k is not None
                index = np.minimum(np.floor(np.clip(u[:, j], 0, 1) * k), k - 1).astype(int)
                # Scatter the ones directly: np.eye(k)[index] would build a k x k matrix first.
                onehot = np.zeros((len(u), k))
                onehot[np.arange(len(u)), index] = 1.0
                blocks.append(onehot)
            else:
                blocks.append(u[:, j : j + 1])
        return np.hstack(blocks)

    def inactive_coordinates(self, u: np.ndarray) -> np.ndarray | None:
        """Where a coordinate of ``u`` does not reach the features (a branch parameter whose
        branch is not taken): ``(n, n_dims)`` booleans, or ``None`` when every coordinate
        does everywhere, as here. Gradients of a score of features are zero there."""
        return None

    def feature_columns(self) -> list[np.ndarray]:
        """For each unit coordinate, the indices of the feature columns that encode it."""
        columns, start = [], 0
        for dim in self._dims:
            width = (
                dim.n_bins if dim.is_categorical and self.categorical_encoding == "onehot" else 1
            )
            assert width is not None
            columns.append(np.arange(start, start + width))
            start += width
        return columns
