"""Hyperparameter fitting by multi-start L-BFGS-B, shared by GP regression and classification."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["multistart_maximize"]


def multistart_maximize(
    log_posterior: Callable[[np.ndarray], tuple[float, np.ndarray]],
    starts: Sequence[np.ndarray],
    bounds: Sequence[tuple[float, float]],
    max_iter: int,
) -> np.ndarray:
    """The best of L-BFGS-B runs maximising ``log_posterior`` (value and gradient) from ``starts``.

    Hyperparameters whose kernel matrix cannot be factorised score as a huge loss instead of
    aborting the search. Shared by the GP regressor and classifier.
    """

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        try:
            value, grad = log_posterior(theta)
        except np.linalg.LinAlgError:
            return 1e25, np.zeros_like(theta)
        return -value, -grad

    from scipy.optimize import minimize  # here: scipy.optimize costs ~0.1 s to import

    best_theta, best_loss = np.asarray(starts[0], dtype=float), np.inf
    for start in starts:
        result = minimize(
            loss, start, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": max_iter}
        )
        if np.isfinite(result.fun) and result.fun < best_loss:
            best_theta, best_loss = result.x, float(result.fun)
    return best_theta
