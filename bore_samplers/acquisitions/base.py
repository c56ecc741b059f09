"""Acquisition functions as composable scoring members with exact gradients.

An :class:`Acquisition` scores rows of a feature matrix ``X`` (the model view of unit points,
:meth:`bore_samplers.space.SearchSpace.features`); higher is better. Every acquisition gives
its gradient with respect to ``X`` in the same pass, so that optimisers need no finite
differences. Log-space acquisitions (log EI, log PI, log PF) compose by addition: constrained
EI is ``LogEI + LogPF`` (:class:`Sum`), as in Optuna's ``LogCEI`` and Gardner et al.
(*Bayesian Optimization with Inequality Constraints*, ICML 2014). :class:`ModelAverage` is the
one place that averages an acquisition over models (hyperparameter samples; Snoek et al.,
*Practical Bayesian Optimization of Machine Learning Algorithms*, NeurIPS 2012), in log space
where the members are. :class:`OnUnitCube` turns an acquisition over features into the score
of unit points that the optimisers of :mod:`bore_samplers.optimizers` maximise, with the
gradient on the continuous coordinates.

What those optimisers maximise is any :class:`UnitCubeScore` (a batch score of snapped unit
points) or :class:`DifferentiableUnitCubeScore` (one with a gradient on the continuous
coordinates): protocols, not base classes, so a test's plain function object qualifies too.
They live here, not beside the optimisers, so that the scores of this layer
(:class:`OnUnitCube`, BORE's ``ClassProbability``) can declare that they implement them.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from scipy.special import logsumexp, softmax

from bore_samplers.space import SearchSpace

__all__ = [
    "Acquisition",
    "DifferentiableUnitCubeScore",
    "ModelAverage",
    "OnUnitCube",
    "Sum",
    "UnitCubeScore",
]


class UnitCubeScore(Protocol):
    """Scores snapped unit points ``(n, n_dims)``; higher is better."""

    def __call__(self, u: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class DifferentiableUnitCubeScore(Protocol):
    """A :class:`UnitCubeScore` with a gradient with respect to the continuous unit coordinates."""

    def __call__(self, u: np.ndarray) -> np.ndarray: ...

    def value_and_grad(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A smooth surrogate of the score (monotone in it) and its gradient, ``(n, n_dims)``."""
        ...


class Acquisition(abc.ABC):
    """A batch score of feature rows, higher is better, with its gradient.

    Subclasses implement :meth:`evaluate`. ``log_scale`` tells whether the score is the log of
    a non-negative quantity (EI, PI, PF), which decides how :class:`ModelAverage` averages it.
    """

    log_scale: bool = False

    @abc.abstractmethod
    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Scores ``(n,)`` of the rows of ``X`` ``(n, n_features)``, and their gradient
        ``(n, n_features)`` with respect to ``X`` when ``with_grad`` (else ``None``)."""

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return self.evaluate(np.atleast_2d(X), with_grad=False)[0]

    def value_and_grad(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scores and their gradient with respect to ``X``."""
        values, grad = self.evaluate(np.atleast_2d(X), with_grad=True)
        assert grad is not None
        return values, grad


class Sum(Acquisition):
    """The sum of acquisitions, e.g. ``log EI + log PF`` (the log of ``EI · PF``)."""

    def __init__(self, terms: Sequence[Acquisition]) -> None:
        if not terms:
            raise ValueError("Sum needs at least one term.")
        self.terms = list(terms)
        self.log_scale = all(term.log_scale for term in self.terms)

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        values = np.zeros(len(X))
        grad = np.zeros_like(X) if with_grad else None
        for term in self.terms:
            term_values, term_grad = term.evaluate(X, with_grad)
            values = values + term_values
            if grad is not None:
                grad += term_grad
        return values, grad


class ModelAverage(Acquisition):
    """The mean of one acquisition built on each of several models.

    ``â(x) = (1/M) Σ_m a(x; θ_m)`` (Snoek et al., 2012, the integrated acquisition over
    hyperparameter samples ``θ_m``). Log-scale members are averaged as the log of the mean of
    their exponentials (averaging the logs would integrate a geometric mean instead); the
    gradient is then the softmax-weighted mean of the members' gradients.
    """

    def __init__(self, members: Sequence[Acquisition]) -> None:
        if not members:
            raise ValueError("ModelAverage needs at least one member.")
        self.members = list(members)
        self.log_scale = all(member.log_scale for member in self.members)

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        if len(self.members) == 1:
            return self.members[0].evaluate(X, with_grad)
        results = [member.evaluate(X, with_grad) for member in self.members]
        values = np.stack([v for v, _ in results])  # (M, n)
        if self.log_scale:
            mean = logsumexp(values, axis=0) - np.log(len(self.members))
            weights = softmax(values, axis=0)
        else:
            mean = np.mean(values, axis=0)
            weights = np.full_like(values, 1.0 / len(self.members))
        if not with_grad:
            return mean, None
        grads = np.stack([g for _, g in results])  # (M, n, d)
        return mean, np.einsum("mn,mnd->nd", weights, grads)


class OnUnitCube(DifferentiableUnitCubeScore):
    """An acquisition over features as a score of snapped unit points of ``space``.

    A :class:`DifferentiableUnitCubeScore`, what :mod:`bore_samplers.optimizers` maximise:
    ``value_and_grad`` fills in the gradient of the continuous coordinates, whose feature is
    the unit coordinate itself; the other coordinates (integer, stepped, categorical) are
    searched by the optimisers without a gradient.
    """

    def __init__(self, acquisition: Acquisition, space: SearchSpace) -> None:
        self.acquisition = acquisition
        self.space = space
        self._continuous = np.flatnonzero(space.continuous_mask)
        # A continuous coordinate is encoded by exactly one feature column, equal to it.
        columns = space.feature_columns()
        self._columns = np.array([columns[j][0] for j in self._continuous], dtype=int)

    def __call__(self, u: np.ndarray) -> np.ndarray:
        return self.acquisition(self.space.features(u))

    def value_and_grad(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scores of unit points and their gradient on the continuous coordinates."""
        u = np.atleast_2d(u)
        values, feature_grad = self.acquisition.value_and_grad(self.space.features(u))
        grad = np.zeros_like(u, dtype=float)
        if len(self._continuous):
            grad[:, self._continuous] = feature_grad[:, self._columns]
            inactive = self.space.inactive_coordinates(u)
            if inactive is not None:  # imputed features do not move with the coordinate
                grad[inactive] = 0.0
        return values, grad
