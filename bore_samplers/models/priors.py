"""Bounds and log priors of the GP hyperparameters, on the standardised scale.

Inputs are expected in about ``[0, 1]`` (the unit view) and regression targets standardised
(:mod:`bore_samplers.models.targets`), so one set of bounds and priors serves every problem.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "LATENT_SIGNAL_VARIANCE_PRIOR",
    "LENGTHSCALE_BOUNDS",
    "LENGTHSCALE_PRIOR",
    "MEAN_BOUNDS",
    "NOISE_VARIANCE_BOUNDS",
    "NOISE_VARIANCE_PRIOR",
    "SIGNAL_VARIANCE_BOUNDS",
    "SIGNAL_VARIANCE_PRIOR",
    "gamma_log_prior",
]

# Box bounds of the hyperparameters on the standardised scale. Noise >= 1e-6 of the (unit)
# target variance keeps K + noise * I well conditioned.
LENGTHSCALE_BOUNDS = (1e-3, 1e5)
SIGNAL_VARIANCE_BOUNDS = (1e-4, 1e4)
NOISE_VARIANCE_BOUNDS = (1e-6, 10.0)
MEAN_BOUNDS = (-10.0, 10.0)

# Gamma(concentration, rate) log priors on the standardised scale, the long-standing defaults of
# BoTorch's SingleTaskGP: lengthscales Gamma(3, 6) (mode 1/3 of the unit cube), signal variance
# Gamma(2, 0.15) and noise variance Gamma(1.1, 0.05) (both weak, mainly keeping them off 0).
LENGTHSCALE_PRIOR = (3.0, 6.0)
SIGNAL_VARIANCE_PRIOR = (2.0, 0.15)
NOISE_VARIANCE_PRIOR = (1.1, 0.05)
# Gamma prior on the latent signal variance of GP classification: mode 2, so that prior
# probabilities mostly stay within sigma(+-3); weak enough for data to win.
LATENT_SIGNAL_VARIANCE_PRIOR = (2.0, 0.5)


def gamma_log_prior(
    value: np.ndarray | float, prior: tuple[float, float]
) -> tuple[float, np.ndarray]:
    """Log density (up to a constant) of a Gamma(concentration, rate) prior on ``value``, and
    its derivative with respect to ``log(value)`` (the optimisation variable; like GPyTorch and
    BoTorch, the prior is on the value itself)."""
    concentration, rate = prior
    value = np.asarray(value, dtype=float)
    log_density = float(np.sum((concentration - 1.0) * np.log(value) - rate * value))
    return log_density, (concentration - 1.0) - rate * value
