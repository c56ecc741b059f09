"""Cost of GP hyperparameter marginalisation (slice sampling) per proposal, on one core.

Usage (from the repository root)::

    python -m benchmarks.marginalization_cost
    python -m benchmarks.marginalization_cost --sizes 100 --dims 5 --repeats 5

For every dimension ``d`` and number of observations ``N``, a GP
(:class:`~bore_samplers.models.gp_regression.GaussianProcessRegressor`, defaults) is fitted to
``N`` uniform random points of ``[0, 1]^d`` with a smooth test function plus a little noise, and
then :func:`~bore_samplers.models.hyperparameter_sampling.sample_hyperparameter_models` runs with
its defaults (10 samples, thin 1):

* *cold*: the chain starts at the MAP with the cold burn-in (first proposal of a study);
* *warm*: the chain continues from the last sample of a previous call (``initial_theta``) with
  the short warm burn-in, as a sampler does from one proposal to the next.

Printed per setting: the median wall time over ``--repeats`` runs, the number of log-posterior
evaluations (one Cholesky factorisation of ``N x N`` each), the time per evaluation, and the
time of the MAP fit for scale. BLAS and OpenMP are limited to one thread before numpy loads.
"""

from __future__ import annotations

import os

# One thread, set before numpy is imported (BLAS reads these once, at load time).
for _variable in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402

import numpy as np  # noqa: E402

from bore_samplers.models.gp_regression import GaussianProcessRegressor  # noqa: E402
from bore_samplers.models.hyperparameter_sampling import (  # noqa: E402
    COLD_BURN_IN,
    WARM_BURN_IN,
    sample_hyperparameter_models,
)


def _test_function(X: np.ndarray) -> np.ndarray:
    # Anisotropic and smooth, so the lengthscale posteriors differ between dimensions.
    weights = 1.0 / np.arange(1, X.shape[1] + 1)
    return np.sin(3.0 * X) @ weights + (X[:, 0] - 0.5) ** 2


def _fitted_gp(n: int, dim: int, seed: int) -> tuple[GaussianProcessRegressor, float]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, dim))
    y = _test_function(X) + 0.01 * rng.standard_normal(n)
    start = time.perf_counter()
    gp = GaussianProcessRegressor(seed=seed).fit(X, y)
    return gp, time.perf_counter() - start


def _timed_sampling(
    gp: GaussianProcessRegressor, initial_theta: np.ndarray | None, seed: int
) -> tuple[float, int, np.ndarray]:
    """Wall time, log-posterior evaluations and last sample of one default call."""
    evaluations = 0
    log_posterior = gp.log_posterior

    def counting_log_posterior(theta: np.ndarray, eval_gradient: bool = True):  # type: ignore[no-untyped-def]
        nonlocal evaluations
        evaluations += 1
        return log_posterior(theta, eval_gradient=eval_gradient)

    gp.log_posterior = counting_log_posterior  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        models = sample_hyperparameter_models(gp, rng=seed, initial_theta=initial_theta)
        elapsed = time.perf_counter() - start
    finally:
        del gp.log_posterior  # back to the class method
    return elapsed, evaluations, models[-1].theta_


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--dims", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    print(
        f"sample_hyperparameter_models defaults: 10 samples, thin 1, burn-in {COLD_BURN_IN} "
        f"(cold, from the MAP) / {WARM_BURN_IN} (warm, initial_theta); one thread; "
        f"median of {args.repeats} runs"
    )
    header = "| d | N | start | time [s] | log-posterior evals | ms / eval | MAP fit [s] |"
    print(header)
    print("|---" * 7 + "|")
    for dim in args.dims:
        for n in args.sizes:
            gp, fit_time = _fitted_gp(n, dim, seed=0)
            previous_theta = _timed_sampling(gp, None, seed=100)[2]
            for label, initial_theta in (("cold", None), ("warm", previous_theta)):
                runs = [_timed_sampling(gp, initial_theta, seed) for seed in range(args.repeats)]
                elapsed = statistics.median(run[0] for run in runs)
                evaluations = int(statistics.median(run[1] for run in runs))
                print(
                    f"| {dim} | {n} | {label} | {elapsed:.3f} | {evaluations} | "
                    f"{1e3 * elapsed / evaluations:.2f} | {fit_time:.3f} |"
                )


if __name__ == "__main__":
    main()
