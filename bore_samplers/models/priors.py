"""Bounds and log priors of the GP hyperparameters, on the standardised scale.

Inputs are expected in about ``[0, 1]`` (the unit view) and regression targets standardised
(:mod:`bore_samplers.models.targets`), so one set of bounds and priors serves every problem.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = [
    "BOTORCH_PRIORS",
    "DEFAULT_PRIORS",
    "BalancedLengthscalePrior",
    "GPPriors",
    "GammaPrior",
    "LogNormalPrior",
    "Prior",
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

# Box bounds of the hyperparameters on the standardised scale. The noise floor is 1e-10 of
# the (unit) target variance, not Optuna's 1e-6: with a noise deviation of 1e-3 the GP cannot
# tell a constraint value of +4e-6 from -4e-6, and constrained EI kept proposing points just
# across a boundary it had already seen. cholesky_with_jitter keeps K + noise * I factorable.
LENGTHSCALE_BOUNDS = (1e-3, 1e5)
SIGNAL_VARIANCE_BOUNDS = (1e-4, 1e4)
NOISE_VARIANCE_BOUNDS = (1e-10, 10.0)
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


class Prior(Protocol):
    """A log prior on positive hyperparameter values."""

    def log_density(self, value: np.ndarray | float) -> tuple[float, np.ndarray]:
        """Summed log density (up to a constant) of ``value`` and its derivative with respect
        to ``log(value)``, elementwise (the optimisation variable is the log)."""
        ...


@dataclass(frozen=True)
class GammaPrior:
    """Gamma(concentration, rate) on the value itself (as GPyTorch and BoTorch put it)."""

    concentration: float
    rate: float

    def log_density(self, value: np.ndarray | float) -> tuple[float, np.ndarray]:
        return gamma_log_prior(value, (self.concentration, self.rate))


@dataclass(frozen=True)
class LogNormalPrior:
    """LogNormal(loc, scale): ``log(value) ~ N(loc, scale²)``, density on the value."""

    loc: float
    scale: float

    def log_density(self, value: np.ndarray | float) -> tuple[float, np.ndarray]:
        log_value = np.log(np.asarray(value, dtype=float))
        standardized = (log_value - self.loc) / self.scale
        # log p(v) = -z²/2 - log v + const; d/dlog v = -z / scale - 1.
        log_density = float(np.sum(-0.5 * standardized**2 - log_value))
        return log_density, -standardized / self.scale - 1.0


@dataclass(frozen=True)
class BalancedLengthscalePrior:
    """``-(a l² + b / l²)`` up to a constant: penalises long and short lengthscales alike.

    Optuna's GPSampler puts ``-(0.1 / ρ + 0.1 ρ)`` on the inverse squared lengthscale
    ``ρ = 1 / l²`` (``optuna/_gp/prior.py``): mode ``l = (b / a)^{1/4}``, and a steep barrier
    against lengthscales collapsing onto single observations.
    """

    a: float = 0.1
    b: float = 0.1

    def log_density(self, value: np.ndarray | float) -> tuple[float, np.ndarray]:
        squared = np.asarray(value, dtype=float) ** 2
        log_density = float(np.sum(-(self.a * squared + self.b / squared)))
        return log_density, -2.0 * (self.a * squared - self.b / squared)


@dataclass(frozen=True)
class GPPriors:
    """The priors of a GP regressor's hyperparameters on the standardised scale.

    ``lengthscale_loc_per_log_dim`` shifts the location of a log-normal lengthscale prior by
    that multiple of ``log(d)`` (``d`` lengthscale groups), the dimension scaling of Hvarfner
    et al. (*Vanilla Bayesian Optimization Performs Great in High Dimensions*, ICML 2024);
    0 for a fixed prior.
    """

    lengthscale: GammaPrior | LogNormalPrior | BalancedLengthscalePrior
    signal_variance: GammaPrior | LogNormalPrior
    noise_variance: GammaPrior | LogNormalPrior
    lengthscale_loc_per_log_dim: float = 0.0

    def lengthscale_prior(
        self, n_groups: int
    ) -> GammaPrior | LogNormalPrior | BalancedLengthscalePrior:
        """The lengthscale prior for ``n_groups`` lengthscales."""
        prior = self.lengthscale
        if isinstance(prior, LogNormalPrior) and self.lengthscale_loc_per_log_dim:
            shift = self.lengthscale_loc_per_log_dim * math.log(max(n_groups, 1))
            return LogNormalPrior(prior.loc + shift, prior.scale)
        return prior


#: BoTorch's classic SingleTaskGP priors (see the constants above).
BOTORCH_PRIORS = GPPriors(
    lengthscale=GammaPrior(*LENGTHSCALE_PRIOR),
    signal_variance=GammaPrior(*SIGNAL_VARIANCE_PRIOR),
    noise_variance=GammaPrior(*NOISE_VARIANCE_PRIOR),
)

#: The regression default: Optuna GPSampler's priors (``optuna/_gp/prior.py``), a balanced
#: lengthscale prior with mode 1 and a steep barrier against short lengthscales, signal
#: variance Gamma(2, 1) and noise variance Gamma(1.1, 30), which expects nearly noiseless
#: objectives.
DEFAULT_PRIORS = GPPriors(
    lengthscale=BalancedLengthscalePrior(0.1, 0.1),
    signal_variance=GammaPrior(2.0, 1.0),
    noise_variance=GammaPrior(1.1, 30.0),
)
