"""A Gaussian-process model of a latent utility learnt from duels (preferential BO).

A duel ``(x, x')`` is won by ``x`` with probability ``Phi(f(x) - f(x'))`` (probit), where the
utility ``f`` has a zero-mean GP prior with the Matérn 5/2 ARD kernel of
:mod:`bore_samplers.models.kernels` (Chu & Ghahramani, *Preference Learning with Gaussian
Processes*, ICML 2005; Fauvel & Chalk, *Efficient Exploration in Binary and Preferential
Bayesian Optimization*, arXiv preprint, 2021, eq. 4). ``f`` is identified only up to a
constant; the zero prior mean pins it down.

Formulation
-----------
The paper's view (eq. 5-6) is a GP classifier of the preference function
``g(x, x') = f(x) - f(x')``, whose kernel on pairs is
``k(x1, x2) + k(x1', x2') - k(x1, x2') - k(x1', x2)``, with ``f`` recovered from the
cross-covariance ``cov(f(x), g(x1, x1')) = k(x, x1) - k(x, x1')``. Chu & Ghahramani instead run
Laplace's method on ``f`` at the distinct duel points, with a non-diagonal ``W``. For a
likelihood that depends on ``f`` only through the linear map ``g = A f(P)`` (``A`` the duel
incidence matrix, ``P`` the distinct points) the two give the same posterior: the mode
equations ``f = K A^T grad log p(g)`` and ``g = A K A^T grad log p(g)`` coincide, the
covariances agree by the matrix-inversion lemma and the marginal likelihoods by Sylvester's
determinant identity. We use the first, because with ``A K A^T`` as the kernel it *is* the
Laplace classifier of :class:`bore_samplers.models.gp_classification.LaplaceGP` with a diagonal
``W``: Newton's mode search, the marginal likelihood and its gradient (R&W Algorithms 3.1, 5.1),
predictions with their input gradients, pathwise samples and Expectation Propagation are all
shared with :class:`~bore_samplers.models.gp_classification.GaussianProcessClassifier` (none of
them inverts the kernel matrix, which is singular when duels form cycles or chains). The kernel
is evaluated once on the distinct points and mapped by ``A``, so the cost is that of a
classifier with one label per duel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy.special import ndtr

from bore_samplers.models.gp_classification import GPClassifierHyperparameters, LaplaceGP

__all__ = ["PreferenceGP"]


class PreferenceGP(LaplaceGP):
    """Probit preference GP for duels, by Laplace's approximation or Expectation Propagation.

    Parameters
    ----------
    feature_groups
        Feature columns sharing one lengthscale (as for the GP regressor); ``None``: one
        lengthscale per column.
    approximation
        ``"laplace"`` (Newton's method for the mode) or ``"ep"`` (Expectation Propagation, the
        paper's choice; R&W Algorithm 3.5 on the duels).
    optimize
        Fit hyperparameters by maximising the approximate log marginal likelihood plus log
        priors; if False, ``hyperparameters`` are used as given.
    hyperparameters
        Fixed hyperparameters (``optimize=False``) or the first starting point. ``None``:
        lengthscales 0.5 and signal variance 1.
    use_priors
        Add the log priors of the classifier: lengthscales Gamma(3, 6), latent signal variance
        Gamma(2, 0.5).
    n_restarts
        Random restarts of L-BFGS-B in addition to the first starting point.
    max_iter
        Iteration limit of each L-BFGS-B run.
    max_newton_iter
        Iteration limit of the Newton mode search (Laplace) or of the EP sweeps.
    seed
        Seed of the restart points.

    Attributes
    ----------
    X_train_ : numpy.ndarray
        The distinct duel points ``P``.
    latent_mode_ : numpy.ndarray
        Posterior mode (EP: mean) of the utility at ``X_train_``.
    hyperparameters_, theta_, log_marginal_likelihood_value_
        As for :class:`~bore_samplers.models.gp_classification.GaussianProcessClassifier`.
    """

    likelihood: Literal["probit"] = "probit"

    def __init__(
        self,
        feature_groups: Sequence[Sequence[int]] | None = None,
        *,
        approximation: Literal["laplace", "ep"] = "laplace",
        optimize: bool = True,
        hyperparameters: GPClassifierHyperparameters | None = None,
        use_priors: bool = True,
        n_restarts: int = 2,
        max_iter: int = 100,
        max_newton_iter: int = 100,
        seed: int | None = None,
    ) -> None:
        self.feature_groups = feature_groups
        self.approximation = approximation
        self.optimize = optimize
        self.hyperparameters = hyperparameters
        self.use_priors = use_priors
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.max_newton_iter = max_newton_iter
        self.seed = seed

    def fit(
        self,
        first: np.ndarray,
        second: np.ndarray,
        outcomes: np.ndarray | None = None,
        warm_start: GPClassifierHyperparameters | None = None,
    ) -> PreferenceGP:
        """Fit hyperparameters and the posterior of the utility to duels.

        Parameters
        ----------
        first, second
            Features of the two members of each duel, shape ``(m, d)`` each.
        outcomes
            1 (or True) where ``first`` won, 0 where ``second`` won; ``None``: ``first`` won
            every duel, i.e. ``first`` holds the winners and ``second`` the losers.
        warm_start
            Previous hyperparameters, used as the first starting point.

        Notes
        -----
        Points are matched by exact equality of their features, so a point shown in several
        duels is one point of ``P``. A duel between identical points is the zero row of ``A``:
        its ``g`` is 0 with no prior variance, and it leaves the posterior and the marginal
        likelihood's gradient unchanged.
        """
        first = np.atleast_2d(np.asarray(first, dtype=float))
        second = np.atleast_2d(np.asarray(second, dtype=float))
        if first.shape != second.shape or len(first) == 0:
            raise ValueError(
                f"Need non-empty first and second of one shape, got {first.shape}, {second.shape}."
            )
        if outcomes is None:
            t = np.ones(len(first))
        else:
            labels = np.asarray(outcomes).ravel().astype(float)
            if len(labels) != len(first) or not set(np.unique(labels).tolist()) <= {0.0, 1.0}:
                raise ValueError("outcomes must hold one 0/1 label per duel.")
            t = labels
        points, index = np.unique(np.vstack([first, second]), axis=0, return_inverse=True)
        index = index.ravel()
        m = len(first)
        operator = np.zeros((m, len(points)))
        rows = np.arange(m)
        np.add.at(operator, (rows, index[:m]), 1.0)
        np.add.at(operator, (rows, index[m:]), -1.0)
        self._fit_observations(points, operator, t, warm_start)
        return self

    def predict_preference(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """Posterior probability that ``x1`` beats ``x2``, ``Phi(mu_g / sqrt(1 + var_g))``.

        ``mu_g`` and ``var_g`` are the moments of ``g = f(x1) - f(x2)`` from the joint
        posterior (:meth:`predict_duel`); ``X1`` may be a single row. Shape ``(m,)``.
        """
        mean, var = self.predict_duel(X1, X2)
        return ndtr(mean / np.sqrt(1.0 + var))
