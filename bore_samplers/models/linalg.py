"""Cholesky factorisations that do not fail on duplicated inputs, and inverses from them."""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = [
    "JITTER_LEVELS",
    "cholesky_with_jitter",
    "gaussian_samples",
    "inverse_from_cholesky",
]

# Relative jitter levels tried in turn when a Cholesky factorisation fails (multiples of the mean
# diagonal): duplicated inputs with a tiny noise variance make the matrix numerically singular.
JITTER_LEVELS = (0.0, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4)


def cholesky_with_jitter(A: np.ndarray) -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of a symmetric PSD matrix, adding jitter only if needed.

    Jitter escalates through ``1e-10 ... 1e-4`` times the mean diagonal, so duplicated inputs
    or noise-free posterior covariances never make the factorisation fail.

    Returns
    -------
    L, jitter
        ``L @ L.T == A + jitter * I``; ``jitter`` is the absolute amount added (0 if none).

    Raises
    ------
    numpy.linalg.LinAlgError
        If even the largest jitter does not help (the matrix is not PSD or not finite).
    """
    scale = float(np.mean(np.diag(A))) if len(A) else 1.0
    if not (np.isfinite(scale) and scale > 0):
        scale = 1.0
    for level in JITTER_LEVELS:
        jitter = level * scale
        matrix = A if jitter == 0 else A + jitter * np.eye(len(A))
        try:
            return scipy.linalg.cholesky(matrix, lower=True, check_finite=False), jitter
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("Cholesky failed even with a relative jitter of 1e-4.")


def inverse_from_cholesky(L: np.ndarray) -> np.ndarray:
    """``(L L^T)^{-1}`` from a lower Cholesky factor (LAPACK potri: a third of the cost of
    solving against the identity, which the marginal-likelihood gradient does every step)."""
    inverse, info = scipy.linalg.lapack.dpotri(L, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"potri failed with info={info}")
    # potri fills the lower triangle and keeps L's zero upper one (scipy's cholesky is clean).
    symmetric = inverse + inverse.T
    np.fill_diagonal(symmetric, np.diagonal(inverse))
    return symmetric


def gaussian_samples(
    mean: np.ndarray, cov: np.ndarray, n_samples: int, rng: np.random.Generator
) -> np.ndarray:
    """``n_samples`` joint draws of ``N(mean, cov)``: ``mean + L z`` with ``L L^T = cov``.

    The Cholesky factor gets jitter when ``cov`` is numerically singular (a posterior
    covariance at training inputs, duplicated points). Cost ``O(m^3)``.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_samples, m)``.
    """
    factor, _ = cholesky_with_jitter(cov)
    normals = rng.standard_normal((n_samples, len(mean)))
    return mean + normals @ factor.T
