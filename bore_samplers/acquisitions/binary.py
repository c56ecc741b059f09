"""Acquisitions for binary outcomes and duels: UCB_Φ, latent UCB, EI on the success probability,
Thompson sampling and the Maximally Uncertain Challenge.

Binary Bayesian optimisation observes ``c ∈ {0, 1}`` with ``P(c = 1 | f) = Φ(f(x))``; with a
Gaussian posterior ``f(x) ~ N(μ, σ²)`` (a probit GP classifier) the closed forms of Fauvel &
Chalk (*Efficient Exploration in Binary and Preferential Bayesian Optimization*, arXiv
preprint, 2021) are, with ``h = μ / sqrt(1 + σ²)`` and ``a = 1 / sqrt(1 + 2σ²)``:

* the success probability ``μ_c = E[Φ(f)] = Φ(h)`` (eq. 3);
* the epistemic variance ``V[Φ(f)] = μ_c (1 - μ_c) - 2 T(h, a)`` (eq. 9), with Owen's ``T``;
* the aleatoric variance ``E[Φ(f)(1 - Φ(f))] = 2 T(h, a)`` (eq. 10); the two add up to the
  Bernoulli variance ``μ_c (1 - μ_c)`` (eq. 7).

Every closed form comes with its derivatives with respect to ``μ`` and ``σ²``, which the
acquisitions chain with the model's input gradients (``predict_latent_with_grad``). Owen's
``T(h, a) = (1/2π) ∫_0^a exp(-h²(1 + x²)/2) / (1 + x²) dx`` has
``∂T/∂a = exp(-h²(1 + a²)/2) / (2π (1 + a²))`` (the integrand at ``a``) and
``∂T/∂h = -φ(h) (Φ(a h) - 1/2)`` (differentiate under the integral and substitute ``y = h x``).

Eq. 9 is a difference of two nearly equal numbers wherever the epistemic variance is small next
to the Bernoulli variance (small ``σ²``, or ``|h|`` beyond about 5, where it loses every digit).
Since ``T(h, 1) = Φ(h) Φ(-h) / 2``, it equals
``2 (T(h, 1) - T(h, a)) = (1/π) ∫_a^1 exp(-h²(1 + x²)/2) / (1 + x²) dx``, a positive integrand
that Gauss-Legendre quadrature evaluates to near machine precision (the range is cut where the
integrand has dropped by ``e^-50``); that is how it is computed here.

Preferential BO observes duels with ``P(x ≻ x') = Φ(f(x) - f(x'))`` (eq. 4); the Maximally
Uncertain Challenge (section 4.2, eq. 16) picks the challenger that maximises the epistemic
variance of its duel against the champion, from the *joint* posterior of the two utilities, and
its batch version (section 4.3, eq. 20) sums that variance over the pairs a new member forms.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf, ndtr, ndtri, owens_t

from bore_samplers.acquisitions.base import Acquisition
from bore_samplers.models.gp_classification import LaplaceGP, LatentSamplePath
from bore_samplers.models.preference import PreferenceGP

__all__ = [
    "DEFAULT_UCB_PHI_BETA",
    "BatchUncertainChallenge",
    "BinaryExpectedImprovement",
    "MaximallyUncertainChallenge",
    "ThompsonSample",
    "UCBLatent",
    "UCBPhi",
    "aleatoric_variance",
    "best_success_probability",
    "binary_expected_improvement",
    "epistemic_variance",
    "owens_t_derivatives",
    "success_probability",
    "thompson_sample",
]

#: ``β = Φ⁻¹(0.99)`` of UCB_Φ, the value of the paper's experiments (section 5).
DEFAULT_UCB_PHI_BETA = float(ndtri(0.99))
#: Floor of the latent variance inside the acquisitions: keeps the square roots and the
#: derivatives of EI (which grow like 1/σ) finite; below it the variance gradient is dropped.
LATENT_VARIANCE_FLOOR = 1e-12

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(32)
# The epistemic integrand is cut where it has dropped below e^-50 of its largest value.
_CUTOFF = 50.0


def _graded_nodes(levels_low: int, levels_high: int, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on ``[0, 1]``, on intervals graded geometrically towards
    both ends: ``[2^-(k+1), 2^-k]`` for ``1 <= k <= levels_low`` (and ``[0, 2^-(levels_low+1)]``)
    and their mirror images towards 1, so that features of any width at either end are
    resolved with ``order`` nodes each."""
    x, w = np.polynomial.legendre.leggauss(order)
    edges = [0.0] + [2.0**-k for k in range(levels_low + 1, 0, -1)]
    edges += [1.0 - 2.0**-k for k in range(2, levels_high + 2)] + [1.0]
    nodes, weights = [], []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        nodes.append(lo + (hi - lo) * (x + 1.0) / 2.0)
        weights.append((hi - lo) / 2.0 * w)
    return np.concatenate(nodes), np.concatenate(weights)


_EI_NODES, _EI_WEIGHTS = _graded_nodes(levels_low=30, levels_high=16, order=8)


def _phi(x: np.ndarray) -> np.ndarray:
    return _INV_SQRT_2PI * np.exp(-0.5 * np.square(x))


# ----------------------------------------------------------------------------- closed forms
def owens_t_derivatives(h: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Partial derivatives of Owen's ``T(h, a)`` (``scipy.special.owens_t``).

    ``∂T/∂h = -φ(h) (Φ(a h) - 1/2) = -φ(h) erf(a h / √2) / 2`` and
    ``∂T/∂a = exp(-h²(1 + a²)/2) / (2π (1 + a²))``.
    """
    h = np.asarray(h, dtype=float)
    a = np.asarray(a, dtype=float)
    d_h = -0.5 * _phi(h) * erf(a * h / math.sqrt(2.0))
    d_a = np.exp(-0.5 * h * h * (1.0 + a * a)) / (2.0 * math.pi * (1.0 + a * a))
    return d_h, d_a


def _standardise(
    mean: np.ndarray, var: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``h = μ / sqrt(1 + σ²)``, ``a = 1 / sqrt(1 + 2σ²)``, ``sqrt(1 + σ²)`` and ``σ²``."""
    var = np.maximum(np.asarray(var, dtype=float), 0.0)
    scale = np.sqrt(1.0 + var)
    return np.asarray(mean, dtype=float) / scale, 1.0 / np.sqrt(1.0 + 2.0 * var), scale, var


def success_probability(
    mean: np.ndarray, var: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``μ_c = E[Φ(f)] = Φ(μ / sqrt(1 + σ²))`` (Fauvel & Chalk, eq. 3) and its derivatives.

    Parameters
    ----------
    mean, var
        Posterior mean ``μ`` and variance ``σ²`` of the latent, shape ``(n,)``.

    Returns
    -------
    value, d_mean, d_var
        ``μ_c`` and its derivatives with respect to ``μ`` and ``σ²``.
    """
    h, _, scale, var = _standardise(mean, var)
    density = _phi(h)
    return ndtr(h), density / scale, -density * h / (2.0 * (1.0 + var))


def _epistemic(
    h: np.ndarray, a: np.ndarray, var: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``V = (1/π) ∫_a^1 exp(-h²(1 + x²)/2) / (1 + x²) dx``, ``∂V/∂h`` and ``∂V/∂a``.

    ``∂V/∂h = -(h/π) ∫_a^1 exp(-h²(1 + x²)/2) dx`` by the same quadrature (the closed form
    ``2 φ(h) (Φ(a h) - Φ(h))`` cancels when ``a`` is near 1); ``∂V/∂a`` is minus the integrand
    at ``a``. After factoring out ``exp(-h²(1 + a²)/2)`` the integrand is
    ``exp(-h² (x - a)(x + a)/2)``, which on the range cut at ``e^-50`` 32 Gauss-Legendre nodes
    integrate to about 1e-14 relative error for every ``h`` and ``a``.
    """
    h2 = h * h
    root = np.sqrt(1.0 + 2.0 * var)
    one_minus_a2 = 2.0 * var / (1.0 + 2.0 * var)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        cut = np.sqrt(a * a + 2.0 * _CUTOFF / h2)
        # The width of the range, free of the cancellation in 1 - a or cut - a for a near 1.
        width = np.where(
            h2 * one_minus_a2 > 2.0 * _CUTOFF,
            2.0 * _CUTOFF / h2 / (cut + a),
            2.0 * var / (root * (1.0 + root)),
        )
    half = 0.5 * width
    offset = half[..., None] * (_GL_NODES + 1.0)  # x - a
    x = a[..., None] + offset
    decay = np.exp(-0.5 * h2[..., None] * offset * (x + a[..., None]))
    peak = np.exp(-0.5 * h2 * (1.0 + a * a)) / math.pi
    value = peak * half * ((decay / (1.0 + x * x)) @ _GL_WEIGHTS)
    d_h = -h * peak * half * (decay @ _GL_WEIGHTS)
    d_a = -peak / (1.0 + a * a)
    return value, d_h, d_a


def epistemic_variance(
    mean: np.ndarray, var: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Epistemic variance ``V[Φ(f)] = μ_c (1 - μ_c) - 2 T(h, a)`` and its derivatives.

    Fauvel & Chalk, eq. 9, with ``h = μ / sqrt(1 + σ²)`` and ``a = 1 / sqrt(1 + 2σ²)``; the
    variance of the success probability over the posterior of ``f``, which observing ``c``
    can reduce. Evaluated as the integral ``2 (T(h, 1) - T(h, a))`` (see the module notes), so
    it keeps its relative accuracy where eq. 9 cancels; it is 0 at ``σ² = 0`` and underflows
    to 0 only beyond ``|h| ≈ 27`` (small ``σ²``) to 38 (large ``σ²``).

    Returns
    -------
    value, d_mean, d_var
        ``V`` and its derivatives with respect to ``μ`` and ``σ²``, shape ``(n,)`` each.
    """
    h, a, scale, var = _standardise(mean, var)
    value, d_h, d_a = _epistemic(h, a, var)
    # dh/dμ = 1/sqrt(1+σ²), dh/dσ² = -h / (2(1+σ²)), da/dσ² = -a³.
    return value, d_h / scale, -d_h * h / (2.0 * (1.0 + var)) - d_a * a**3


def aleatoric_variance(
    mean: np.ndarray, var: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Aleatoric variance ``E[Φ(f)(1 - Φ(f))] = 2 T(h, a)`` (Fauvel & Chalk, eq. 10).

    The part of the Bernoulli variance that stays when ``f`` is known; with
    :func:`epistemic_variance` it adds up to ``μ_c (1 - μ_c)``.

    Returns
    -------
    value, d_mean, d_var
        The variance and its derivatives with respect to ``μ`` and ``σ²``.
    """
    h, a, scale, var = _standardise(mean, var)
    dT_dh, dT_da = owens_t_derivatives(h, a)
    return (
        2.0 * owens_t(h, a),
        2.0 * dT_dh / scale,
        -2.0 * dT_dh * h / (2.0 * (1.0 + var)) - 2.0 * dT_da * a**3,
    )


def _normal_mass(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``max(Φ(upper) - Φ(lower), 0)``, from the tail on the side of the interval."""
    right = lower > 0.0
    mass = np.where(right, ndtr(-lower) - ndtr(-upper), ndtr(upper) - ndtr(lower))
    return np.maximum(mass, 0.0)


def binary_expected_improvement(
    mean: np.ndarray, var: np.ndarray, incumbent: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Expected improvement of the success probability, ``E[max(Φ(f) - p*, 0)]``.

    With ``f ~ N(μ, σ²)``, ``τ = Φ⁻¹(p*)`` and ``h = μ / sqrt(1 + σ²)``, integration by parts
    gives ``∫_τ^∞ φ(z) Φ((μ - z)/σ) dz = P(Z > τ, Z < f)``, the bivariate normal probability
    ``Φ₂(-τ, h; -1/sqrt(1 + σ²))``. Plackett's identity ``∂Φ₂/∂ρ = φ₂`` integrated from
    ``ρ = -1`` splits it into two non-negative terms (no cancellation),

    ``EI = max(Φ(h) - p*, 0) + (1/2π) ∫_0^θ exp(-(τ² - 2τh cos t + h²) / (2 sin² t)) dt``,
    ``θ = arctan σ``,

    the first the improvement of the posterior mean, the second the value of uncertainty. This
    is the integral over the correlation behind the bivariate normal algorithms of Drezner &
    Wesolowsky (*On the computation of the bivariate normal integral*, J. Stat. Comput. Simul.,
    1990) and Genz (*Numerical computation of rectangular bivariate and trivariate normal and t
    probabilities*, Statistics and Computing, 2004), taken from ``ρ = -1``. Its integrand can
    switch on sharply near ``t = 0`` (``μ_c`` near ``p*``) or near ``t = θ`` (small ``σ``), so
    the Gauss-Legendre rule is graded geometrically towards both ends; against high-precision
    quadrature its relative error is below 1e-8 down to values of 1e-240 (and the absolute
    error below 1e-15). The derivatives are closed forms:
    ``∂EI/∂μ = φ(h) Φ(κ) / sqrt(1 + σ²)`` with ``κ = (μ - (1 + σ²) τ) / sqrt(σ² (1 + σ²))``,
    and ``∂EI/∂σ² = -φ(h) Φ(κ) h / (2 (1 + σ²)) + exp(-E(θ)) / (4π (1 + σ²) σ)``, ``E(θ)``
    the exponent above at ``t = θ``.

    Parameters
    ----------
    mean, var
        Posterior mean and variance of the latent, shape ``(n,)``.
    incumbent
        ``p* ∈ (0, 1)``, the success probability to improve on (e.g.
        :func:`best_success_probability`).

    Returns
    -------
    value, d_mean, d_var
    """
    if not 0.0 < incumbent < 1.0:
        raise ValueError(f"incumbent must lie in (0, 1), got {incumbent}.")
    tau = float(ndtri(incumbent))
    h, _, scale, var = _standardise(mean, var)
    var = np.maximum(var, 1e-300)  # σ = 0 is the limit of the formulas below
    sd = np.sqrt(var)
    theta = np.arctan(sd)
    t = theta[..., None] * _EI_NODES
    cos_t = np.cos(t)
    sin2_t = np.square(np.sin(t))
    x, y = -tau, h[..., None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # (x² + 2xy cos t + y²) / (2 sin² t) without cancellation for small t.
        exponent = np.square(x + y) / (2.0 * sin2_t) - x * y / (1.0 + cos_t)
        exponent = np.where(sin2_t > 0.0, exponent, np.inf)
        # The same exponent at t = θ, where sin² θ = σ² / (1 + σ²) and cos θ = 1 / sqrt(1 + σ²).
        exponent_end = 0.5 * np.square(x + h) * (1.0 + 1.0 / var) - x * h / (1.0 + 1.0 / scale)
    integral = theta / (2.0 * math.pi) * (np.exp(-exponent) @ _EI_WEIGHTS)
    value = _normal_mass(-h, np.full_like(h, -tau)) + integral
    kappa = (np.asarray(mean, dtype=float) - (1.0 + var) * tau) / (sd * scale)
    slope = _phi(h) * ndtr(kappa)
    d_mean = slope / scale
    # exp(-E(θ)) / (4π (1 + σ²) σ), in logs so that no factor overflows.
    uncertainty = np.exp(
        -exponent_end - math.log(4.0 * math.pi) - np.log1p(var) - 0.5 * np.log(var)
    )
    d_var = -slope * h / (2.0 * (1.0 + var)) + uncertainty
    return value, d_mean, d_var


# ----------------------------------------------------------------------------- helpers
def _latent(
    model: LaplaceGP, X: np.ndarray, with_grad: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Latent mean and (floored) variance at ``X`` and, with ``with_grad``, their gradients."""
    if with_grad:
        mean, var, mean_grad, var_grad = model.predict_latent_with_grad(X)
        var_grad = np.where((var <= LATENT_VARIANCE_FLOOR)[:, None], 0.0, var_grad)
    else:
        (mean, var), mean_grad, var_grad = model.predict_latent(X), None, None
    return mean, np.maximum(var, LATENT_VARIANCE_FLOOR), mean_grad, var_grad


def _chain(
    d_mean: np.ndarray, d_var: np.ndarray, mean_grad: np.ndarray, var_grad: np.ndarray
) -> np.ndarray:
    return d_mean[:, None] * mean_grad + d_var[:, None] * var_grad


def _require_probit(model: LaplaceGP) -> None:
    if model.likelihood != "probit":
        raise ValueError(
            f"The closed forms assume P(c = 1 | f) = Phi(f); got a {model.likelihood!r} model."
        )


def best_success_probability(model: LaplaceGP, X: np.ndarray) -> float:
    """The incumbent of :class:`BinaryExpectedImprovement`: the largest inferred success
    probability ``μ_c`` over the rows of ``X`` (the observed points)."""
    _require_probit(model)
    mean, var = model.predict_latent(X)
    return float(np.max(success_probability(mean, var)[0]))


# ----------------------------------------------------------------------------- acquisitions
class UCBPhi(Acquisition):
    """``UCB_Φ(x) = μ_c(x) + β sqrt(V[Φ(f(x))])`` (Fauvel & Chalk, eq. 14), with its gradient.

    Optimism in the space of outcomes: the exploration bonus is the *epistemic* standard
    deviation of the success probability, which vanishes where the outcome is certain either
    way, unlike that of ``f``. The gradient of the square root, ``V' / (2 sqrt(V))``, is
    finite wherever ``V > 0`` (it is, up to underflow, whenever ``σ² > 0``) and set to 0 where
    ``V`` underflows.

    Parameters
    ----------
    model
        A probit GP classifier (or any :class:`~bore_samplers.models.gp_classification.
        LaplaceGP` with the probit link).
    beta
        ``β >= 0``; the default is the paper's ``Φ⁻¹(0.99)``.
    """

    def __init__(self, model: LaplaceGP, beta: float = DEFAULT_UCB_PHI_BETA) -> None:
        _require_probit(model)
        self.model = model
        self.beta = beta

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        mean, var, mean_grad, var_grad = _latent(self.model, X, with_grad)
        prob, prob_mean, prob_var = success_probability(mean, var)
        variance, var_mean, var_var = epistemic_variance(mean, var)
        std = np.sqrt(variance)
        values = prob + self.beta * std
        if mean_grad is None or var_grad is None:
            return values, None
        positive = std > 0.0
        factor = np.where(positive, self.beta / (2.0 * np.where(positive, std, 1.0)), 0.0)
        return values, _chain(
            prob_mean + factor * var_mean, prob_var + factor * var_var, mean_grad, var_grad
        )


class UCBLatent(Acquisition):
    """``μ_f(x) + β σ_f(x)``, the upper confidence bound of the latent ("ucb_f"), with its
    gradient (Fauvel & Chalk, eq. 13, as their baseline). The variance is floored at
    ``LATENT_VARIANCE_FLOOR``, where its gradient is dropped.

    Parameters
    ----------
    model
        Any fitted :class:`~bore_samplers.models.gp_classification.LaplaceGP` (classifier or
        preference GP).
    beta
        ``β >= 0``.
    """

    def __init__(self, model: LaplaceGP, beta: float = 1.0) -> None:
        self.model = model
        self.beta = beta

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        mean, var, mean_grad, var_grad = _latent(self.model, X, with_grad)
        std = np.sqrt(var)
        values = mean + self.beta * std
        if mean_grad is None or var_grad is None:
            return values, None
        return values, mean_grad + (self.beta / (2.0 * std))[:, None] * var_grad


class BinaryExpectedImprovement(Acquisition):
    """``E[max(Φ(f(x)) - p*, 0)]``: expected improvement of the success probability over
    ``p*`` (:func:`binary_expected_improvement`), with its gradient.

    Parameters
    ----------
    model
        A probit GP classifier.
    incumbent
        ``p* ∈ (0, 1)``; :func:`best_success_probability` of the observed points is the usual
        choice.
    """

    def __init__(self, model: LaplaceGP, incumbent: float) -> None:
        _require_probit(model)
        if not 0.0 < incumbent < 1.0:
            raise ValueError(f"incumbent must lie in (0, 1), got {incumbent}.")
        self.model = model
        self.incumbent = incumbent

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        mean, var, mean_grad, var_grad = _latent(self.model, X, with_grad)
        values, d_mean, d_var = binary_expected_improvement(mean, var, self.incumbent)
        if mean_grad is None or var_grad is None:
            return values, None
        return values, _chain(d_mean, d_var, mean_grad, var_grad)


class ThompsonSample(Acquisition):
    """One posterior sample path of the latent as an acquisition (Thompson sampling).

    The path (:meth:`~bore_samplers.models.gp_classification.LaplaceGP.sample_latent_path`)
    is a fixed function, so its maximiser is a Thompson sample of the argmax of ``f``; since
    ``Φ`` is increasing this is also the argmax of the sampled success probability.
    """

    def __init__(self, path: LatentSamplePath) -> None:
        self.path = path

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        return self.path.evaluate(X, with_grad)


def thompson_sample(
    model: LaplaceGP, rng: np.random.Generator | int | None = None, n_features: int = 1024
) -> ThompsonSample:
    """Draw one posterior function of ``model``'s latent and return it as an acquisition."""
    return ThompsonSample(model.sample_latent_path(rng, n_features))


class BatchUncertainChallenge(Acquisition):
    """``Σ_j V[Φ(f(x_j) - f(x))]`` over the fixed members ``x_j`` of a batch, with its
    gradient w.r.t. the new member ``x`` (Fauvel & Chalk, eq. 20).

    Each term is the epistemic variance (eq. 9) of the duel between ``x`` and ``x_j``, from
    the joint posterior of ``(f(x_j), f(x))``: mean ``μ_j - μ(x)``, variance
    ``σ_j² + σ(x)² - 2 cov(x_j, x)``. With the champion and the challengers chosen so far as
    the fixed members, maximising it adds the challenger that completes eq. 20's sum over
    pairs greedily, one at a time. The variance is symmetric in the duel's orientation.

    Parameters
    ----------
    model
        A fitted :class:`~bore_samplers.models.preference.PreferenceGP`.
    fixed_features
        Features of the members already in the batch, shape ``(k, d)``; the champion first.
    """

    def __init__(self, model: PreferenceGP, fixed_features: np.ndarray) -> None:
        fixed = np.atleast_2d(np.asarray(fixed_features, dtype=float))
        if len(fixed) == 0:
            raise ValueError("Need at least one fixed member (the champion).")
        self.model = model
        self.fixed_features = fixed

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        values = np.zeros(len(X))
        grad = np.zeros_like(X, dtype=float) if with_grad else None
        for member in self.fixed_features:
            if grad is None:
                mean, var = self.model.predict_duel(member, X)
                values += epistemic_variance(mean, var)[0]
                continue
            mean, var, mean_grad, var_grad = self.model.predict_duel_with_grad(member, X)
            variance, d_mean, d_var = epistemic_variance(mean, var)
            values += variance
            grad += _chain(d_mean, d_var, mean_grad, var_grad)
        return values, grad


class MaximallyUncertainChallenge(BatchUncertainChallenge):
    """The Maximally Uncertain Challenge (Fauvel & Chalk, section 4.2, eq. 16).

    ``V[Φ(f(x₁) - f(x))]``, the epistemic variance of the duel between the champion ``x₁``
    (``argmax μ_f``, eq. 15) and the challenger ``x``, from the joint posterior of
    ``(f(x₁), f(x))``; it is 0 at ``x = x₁``, a duel that tells nothing.

    Parameters
    ----------
    model
        A fitted :class:`~bore_samplers.models.preference.PreferenceGP`.
    champion_features
        Features of the champion, shape ``(d,)`` or ``(1, d)``.
    """

    def __init__(self, model: PreferenceGP, champion_features: np.ndarray) -> None:
        champion = np.atleast_2d(np.asarray(champion_features, dtype=float))
        if len(champion) != 1:
            raise ValueError(f"Need one champion, got {len(champion)} rows.")
        super().__init__(model, champion)
