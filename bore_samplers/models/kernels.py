"""The Matérn 5/2 ARD kernel and its derivatives, with feature groups for categoricals.

Notation (shared by every GP module of :mod:`bore_samplers.models`)
-------------------------------------------------------------------
``X``
    Features, shape ``(n, n_features)``: the feature view of snapped unit points
    (:meth:`bore_samplers.space.SearchSpace.features`); numeric parameters keep their unit
    coordinate in ``[0, 1]``, categorical ones are one-hot encoded.
``feature_groups``
    For each search-space parameter, the feature columns that encode it. All columns of a
    group share one lengthscale; ``group_of_column`` maps each column to its group.
``l``
    Lengthscales, one per group; :func:`column_lengthscales` expands them to the columns.
``s``
    Signal variance ``k(x, x)``.
``r``
    Scaled distance, ``r^2 = sum_d (x_d - x'_d)^2 / c_d^2`` with the column lengthscales
    ``c`` of :func:`column_lengthscales` (``c_d = l_{g(d)}`` for a numeric column).

A one-hot encoded categorical with one shared lengthscale is a Hamming-distance (overlap)
kernel: equal choices are at 0, two different ones at the same distance whichever they are,
so no order between choices is implied. Two one-hot vectors that differ do so in two columns;
:func:`column_lengthscales` stretches those columns by ``sqrt(2)`` so that a changed choice
adds ``1 / l^2`` to ``r^2``, as a difference of ``l`` in a numeric parameter does, and as the
per-parameter Hamming term of Optuna's GPSampler does (``optuna/_gp/gp.py``). The lengthscale
priors (mode ``l = 1``) then mean the same correlation, about 0.52, between two choices of a
categorical as between the two ends of a numeric parameter; without the stretch the prior's
mode put it at 0.32, and with 20 observations of an all-categorical problem the fitted
correlations came out lower than Optuna's (``docs/discrete.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "column_groups",
    "column_lengthscales",
    "matern52_kernel",
    "matern52_lengthscale_gradients",
    "matern52_with_derivative",
    "squared_distances",
]


def column_groups(
    feature_groups: Sequence[Sequence[int]] | None, n_features: int
) -> tuple[np.ndarray, int]:
    """Map each feature column to the index of its lengthscale group.

    Parameters
    ----------
    feature_groups
        For each group (search-space parameter), the feature columns encoding it, e.g.
        :meth:`SearchSpace.feature_columns`. ``None``: every column is its own group.
    n_features
        Number of feature columns.

    Returns
    -------
    group_of_column, n_groups
        Integer array of length ``n_features`` and the number of groups.
    """
    if feature_groups is None:
        return np.arange(n_features), n_features
    group_of_column = np.full(n_features, -1)
    for g, columns in enumerate(feature_groups):
        columns = np.asarray(columns, dtype=int)
        if np.any(group_of_column[columns] >= 0):
            raise ValueError("feature_groups must not share columns.")
        group_of_column[columns] = g
    if np.any(group_of_column < 0):
        raise ValueError(
            f"feature_groups do not cover all {n_features} feature columns: "
            f"missing {np.flatnonzero(group_of_column < 0).tolist()}."
        )
    return group_of_column, len(feature_groups)


def column_lengthscales(lengthscales: np.ndarray, group_of_column: np.ndarray) -> np.ndarray:
    """The lengthscale of each feature column: its group's, times ``sqrt(2)`` in a group of
    several columns (a one-hot categorical), so that two different choices are at
    ``r^2 = 1 / l^2`` (a Hamming term, see the module docstring).

    Parameters
    ----------
    lengthscales
        One lengthscale per group.
    group_of_column
        The group of each column (:func:`column_groups`).
    """
    lengthscales = np.asarray(lengthscales, dtype=float)
    size = np.bincount(group_of_column, minlength=len(lengthscales))[group_of_column]
    return lengthscales[group_of_column] * np.where(size > 1, _SQRT2, 1.0)


_SQRT2 = float(np.sqrt(2.0))


def squared_distances(A: np.ndarray, B: np.ndarray, same: bool) -> np.ndarray:
    # The |a|^2 + |b|^2 - 2 a.b form needs no (n, m, d) temporary, which matters for the
    # 2000 x 2000 Thompson-sampling covariance; Matérn 5/2 is smooth in r^2 at 0, so the
    # cancellation error near r = 0 (order 1e-16) does not hurt. In place: the candidate
    # scoring of a proposal spends much of its time on these (m, n) passes.
    a2 = np.einsum("ij,ij->i", A, A)
    b2 = a2 if same else np.einsum("ij,ij->i", B, B)
    r2 = A @ B.T
    r2 *= -2.0
    r2 += a2[:, None]
    r2 += b2[None, :]
    np.maximum(r2, 0.0, out=r2)
    if same:
        np.fill_diagonal(r2, 0.0)
    return r2


def _matern52_parts(
    X1: np.ndarray,
    X2: np.ndarray | None,
    column_lengthscales: np.ndarray,
    signal_variance: float,
    with_derivative: bool,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
    A = X1 / column_lengthscales
    B = A if X2 is None else X2 / column_lengthscales
    # rho = sqrt(5) r, computed in place: K = s (1 + rho + rho^2 / 3) exp(-rho).
    rho = squared_distances(A, B, same=X2 is None)
    rho *= 5.0
    np.sqrt(rho, out=rho)
    e = np.negative(rho)
    np.exp(e, out=e)
    if signal_variance != 1.0:
        e *= signal_variance
    K = rho * rho
    K *= 1.0 / 3.0
    K += rho
    K += 1.0
    K *= e
    D = None
    if with_derivative:
        D = rho  # reuse: D = 5/6 s (1 + rho) exp(-rho)
        D += 1.0
        D *= e
        D *= 5.0 / 6.0
    return K, D, A, B


def matern52_with_derivative(
    X1: np.ndarray, X2: np.ndarray | None, column_lengthscales: np.ndarray, signal_variance: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kernel matrix plus the pieces its derivatives need (see :func:`matern52_kernel`).

    Returns
    -------
    K, D, A, B
        ``K``; ``D = -dK/d(r^2) = 5/6 s (1 + sqrt5 r) exp(-sqrt5 r)``; the scaled inputs
        ``A = X1 / l`` and ``B = X2 / l`` (``B is A`` when ``X2`` is None).
    """
    K, D, A, B = _matern52_parts(X1, X2, column_lengthscales, signal_variance, True)
    assert D is not None
    return K, D, A, B


def matern52_kernel(
    X1: np.ndarray,
    X2: np.ndarray | None,
    column_lengthscales: np.ndarray,
    signal_variance: float = 1.0,
) -> np.ndarray:
    """Matérn 5/2 ARD covariance ``s * k52(r)`` (Rasmussen & Williams, eq. 4.17).

    Parameters
    ----------
    X1, X2
        Inputs of shape ``(n, d)`` and ``(m, d)``; ``X2=None`` means ``X2 = X1`` (and an exact
        zero distance on the diagonal).
    column_lengthscales
        One lengthscale per feature column (expand group lengthscales with
        :func:`column_lengthscales`).
    signal_variance
        Prior variance ``s = k(x, x)``.
    """
    return _matern52_parts(X1, X2, column_lengthscales, signal_variance, False)[0]


def matern52_lengthscale_gradients(
    X: np.ndarray,
    column_lengthscales: np.ndarray,
    signal_variance: float,
    group_of_column: np.ndarray,
    n_groups: int,
) -> np.ndarray:
    """Derivatives ``dK/d log l_g`` of the training kernel matrix, shape ``(n_groups, n, n)``.

    ``dk/d log l_d = 2 D (x_d - x'_d)^2 / l_d^2`` with ``D = -dk/d(r^2)``; columns of a group
    add up because they share the lengthscale.
    """
    _, D, A, _ = matern52_with_derivative(X, None, column_lengthscales, signal_variance)
    grads = np.zeros((n_groups, len(X), len(X)))
    for column in range(X.shape[1]):
        diff = A[:, column, None] - A[None, :, column]
        grads[group_of_column[column]] += 2.0 * D * diff**2
    return grads
