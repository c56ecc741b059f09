"""The BORE classification targets: which observations are in the best γ-quantile."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["GammaSchedule", "check_gamma", "quantile_labels", "resolve_gamma"]

#: A fixed proportion, or a function of the number of labelled observations returning one.
GammaSchedule = float | Callable[[int], float]


def resolve_gamma(gamma: GammaSchedule, n: int) -> float:
    """The proportion γ to use with ``n`` labelled observations.

    Raises
    ------
    ValueError
        If γ is not in the open interval (0, 1).
    """
    value = float(gamma(n)) if callable(gamma) else float(gamma)
    if not 0.0 < value < 1.0:
        raise ValueError(f"gamma must be in (0, 1), got {value}.")
    return value


#: Numbers of observations at which :func:`check_gamma` tries a schedule.
GAMMA_CHECK_SIZES = (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 10_000)


def check_gamma(gamma: GammaSchedule) -> None:
    """Raise ``ValueError`` unless ``gamma`` (a proportion, or a schedule tried at
    :data:`GAMMA_CHECK_SIZES`) gives a proportion in (0, 1); a schedule that raises is
    reported with the size it failed at."""
    if not callable(gamma):
        resolve_gamma(gamma, 1)
        return
    for n in GAMMA_CHECK_SIZES:
        try:
            resolve_gamma(gamma, n)
        except Exception as error:
            raise ValueError(f"The gamma schedule fails for n = {n}: {error}") from error


def quantile_labels(values: np.ndarray, gamma: float) -> np.ndarray:
    """Binary labels ``z_n = I[y_n <= τ]`` with τ the γ-quantile of ``values``.

    This is line 2-4 of Algorithm 1 of Tiao et al. (2021). τ is the order statistic at
    position ``floor((N - 1) γ)`` (numpy's ``"lower"`` quantile): it is always an observed value,
    so ``+inf`` or ``-inf`` values never turn τ into NaN. NaN values count as ``+inf`` (worst).
    Ties with τ are labelled positive, so all-equal values give a single class, which callers
    must handle.

    Parameters
    ----------
    values
        Objective values to minimise, shape ``(N,)``.
    gamma
        Proportion in (0, 1).

    Returns
    -------
    numpy.ndarray
        Boolean array, ``True`` for the observations in the best γ-quantile.
    """
    y = np.where(np.isnan(values), math.inf, np.asarray(values, dtype=float))
    if y.size == 0:
        return np.zeros(0, dtype=bool)
    tau = np.quantile(y, gamma, method="lower")
    return y <= tau
