"""Cholesky factorisations that do not fail on duplicated inputs, and inverses from them."""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = [
    "JITTER_LEVELS",
    "cholesky_with_jitter",
    "gaussian_samples",
    "inverse_from_cholesky",
    "solve_lower",
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


def solve_lower(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``L^{-1} B`` for a lower triangular ``L`` (``(n, n)``) and ``B`` (``(n, m)``).

    The LAPACK ``trtrs`` call of ``scipy.linalg.solve_triangular(L, B, lower=True,
    check_finite=False)``, with the same arguments and so the same result, without its input
    validation: the acquisition optimisers predict at a few points hundreds of times per
    proposal, and there the validation costs about half as much as the solve.

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``L`` is singular.
    """
    if B.size == 0:
        return np.empty_like(B, dtype=float)
    if L.flags.f_contiguous:
        x, info = _TRTRS(L, B, overwrite_b=False, lower=True, trans=0, unitdiag=False)
    else:
        # trtrs expects Fortran order: solve the transposed (upper) system, as scipy does.
        x, info = _TRTRS(L.T, B, overwrite_b=False, lower=False, trans=1, unitdiag=False)
    if info > 0:
        raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {info - 1}")
    if info < 0:
        raise ValueError(f"illegal value in {-info}-th argument of trtrs")
    return x


_TRTRS = scipy.linalg.lapack.dtrtrs


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
