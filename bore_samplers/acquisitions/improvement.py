"""Improvement-based acquisitions and confidence bounds for minimisation: PI, EI, GP-LCB.

The closed forms follow section II-C of Vasconcelos et al., *No-PASt-BO: Normalized Portfolio
Allocation Strategy for Bayesian Optimization* (ICTAI 2019): probability of improvement
(Kushner, 1964), expected improvement (Močkus et al., 1978) and the lower confidence bound
GP-LCB (Srinivas et al., 2010). EI and PI are also given in log space (log-EI of Ament et al.,
*Unexpected Improvements to Expected Improvement for Bayesian Optimization*, NeurIPS 2023), so
that they stay finite and informative far from the incumbent. Lower objective values are
better; higher acquisition values are better.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erfcx, log_ndtr, ndtr

from bore_samplers.acquisitions.feasibility import VARIANCE_FLOOR

__all__ = [
    "expected_improvement",
    "lcb_beta",
    "log_expected_improvement",
    "log_probability_of_improvement",
    "lower_confidence_bound",
    "probability_of_improvement",
]

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# Below this z-score, 1 + z * Φ(z)/φ(z) cancels catastrophically; its asymptotic series
# 1/z² - 3/z⁴ + 15/z⁶ is accurate to ~1e-13 relative there.
_LOG_H_ASYMPTOTIC = -40.0


# ----------------------------------------------------------------------------- closed forms
def _z_score(
    mean: np.ndarray, var: np.ndarray, incumbent: float, xi: float
) -> tuple[np.ndarray, np.ndarray]:
    std = np.sqrt(np.maximum(np.asarray(var, dtype=float), VARIANCE_FLOOR))
    return (incumbent - xi - np.asarray(mean, dtype=float)) / std, std


def probability_of_improvement(
    mean: np.ndarray, var: np.ndarray, incumbent: float, xi: float = 0.0
) -> np.ndarray:
    """PI of minimisation, ``Φ((μ⁻ - ξ - μ(x)) / σ(x))`` (the paper, eq. 5; Kushner, 1964).

    Parameters
    ----------
    mean, var
        Posterior mean and variance of the latent objective, shape ``(n,)``.
    incumbent
        ``μ⁻``, the smallest posterior mean over the observed points (the paper's choice; the
        best observed value is the other common one).
    xi
        Trade-off ``ξ >= 0``, in the units of the objective: larger values explore more.
    """
    z, _ = _z_score(mean, var, incumbent, xi)
    return ndtr(z)


def log_probability_of_improvement(
    mean: np.ndarray, var: np.ndarray, incumbent: float, xi: float = 0.0
) -> np.ndarray:
    """``log PI``, finite for every finite input (see :func:`probability_of_improvement`)."""
    z, _ = _z_score(mean, var, incumbent, xi)
    return log_ndtr(z)


def expected_improvement(
    mean: np.ndarray, var: np.ndarray, incumbent: float, xi: float = 0.0
) -> np.ndarray:
    """EI of minimisation, ``τ Φ(τ/σ) + σ φ(τ/σ)`` with ``τ = μ⁻ - ξ - μ(x)`` (eq. 6).

    Parameters are those of :func:`probability_of_improvement` (Močkus et al., 1978).
    """
    z, std = _z_score(mean, var, incumbent, xi)
    return std * (z * ndtr(z) + np.exp(-0.5 * z**2 - LOG_SQRT_2PI))


def _log_h(z: np.ndarray) -> np.ndarray:
    """``log(z Φ(z) + φ(z))``, accurate for every finite ``z`` (log-EI of Ament et al., 2023).

    For ``z < -1`` it is ``log φ(z) + log(1 + z Φ(z)/φ(z))`` with
    ``Φ(z)/φ(z) = sqrt(π/2) erfcx(-z/√2)``, and the asymptotic series far in the tail.
    """
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    upper = z > -1.0
    zu = z[upper]
    out[upper] = np.log(zu * ndtr(zu) + np.exp(-0.5 * zu**2 - LOG_SQRT_2PI))
    middle = ~upper & (z >= _LOG_H_ASYMPTOTIC)
    zm = z[middle]
    ratio = math.sqrt(math.pi / 2.0) * erfcx(-zm / math.sqrt(2.0))
    out[middle] = -0.5 * zm**2 - LOG_SQRT_2PI + np.log1p(zm * ratio)
    tail = ~upper & ~middle
    zt = z[tail]
    inv2 = 1.0 / zt**2
    out[tail] = -0.5 * zt**2 - LOG_SQRT_2PI + np.log(inv2 * (1.0 - 3.0 * inv2 + 15.0 * inv2**2))
    return out


def log_expected_improvement(
    mean: np.ndarray, var: np.ndarray, incumbent: float, xi: float = 0.0
) -> np.ndarray:
    """``log EI``, finite (and accurate) even where EI underflows to 0 in float64."""
    z, std = _z_score(mean, var, incumbent, xi)
    return np.log(std) + _log_h(z)


def lcb_beta(t: int, n_dims: int, delta: float = 0.1) -> float:
    """``β_t = 2 log(t^(D/2 + 2) π² / (3δ))`` of GP-LCB (the paper, eq. 7; Brochu et al., 2010).

    Parameters
    ----------
    t
        Iteration: the number of observations the GP is conditioned on (at least 1), as in the
        paper's reference implementation.
    n_dims
        Dimension ``D`` of the search space.
    delta
        ``δ ∈ (0, 1)``; smaller values explore more.
    """
    t = max(int(t), 1)
    return 2.0 * ((n_dims / 2.0 + 2.0) * math.log(t) + math.log(math.pi**2 / (3.0 * delta)))


def lower_confidence_bound(mean: np.ndarray, var: np.ndarray, kappa: float) -> np.ndarray:
    """``μ(x) - κ σ(x)`` (the paper, eq. 7, with ``κ = sqrt(ν β_t)``); *lower* is better."""
    std = np.sqrt(np.maximum(np.asarray(var, dtype=float), 0.0))
    return np.asarray(mean, dtype=float) - kappa * std
