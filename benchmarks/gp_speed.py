"""Cost of one GP-based proposal at N finished trials in 10-D: ours against Optuna's GPSampler.

Usage (from the repository root)::

    python -m benchmarks.gp_speed                     # N = 200, 10-D, 5 timed asks per sampler
    python -m benchmarks.gp_speed --sizes 50 200 --repeats 3

N completed trials with uniform random parameters on ``[0, 1]^10`` are injected with
``study.add_trials``, each with the value of a 10-D Rosenbrock-like function and, in the
*constrained* setting, one real-valued constraint ``sum(x) - 5`` (``trial.constraints``, which
GPSampler, cEI and cMES all read). One ask = ``study.ask()`` plus the 10 ``suggest_float``
calls; it is timed, then told with the true value (and constraint) so each sampler fits its
models on what it has proposed, as in a real study. The first ask per (sampler, N) is an
untimed warm-up (GPSampler and our samplers both warm-start GP hyperparameters from the
previous fit). Everything runs in this process with one BLAS/OpenMP/torch thread, which is
what both samplers use in their fits. Writes ``<out>/gp_speed.md`` and ``gp_speed.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import (
    atomic_write_text,
    configure_quiet_logging,
    environment_lines,
    limit_threads,
    load_average,
    make_sampler,
    markdown_table,
    write_json,
)

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
DIM = 10


def _objective(x):  # type: ignore[no-untyped-def]
    import numpy as np

    z = 4.0 * np.asarray(x) - 2.0
    return float(np.sum(100.0 * (z[1:] - z[:-1] ** 2) ** 2 + (1.0 - z[:-1]) ** 2))


def _constraint(x) -> float:  # type: ignore[no-untyped-def]
    return float(sum(x) - 5.0)


def _trials(n: int, seed: int, constrained: bool) -> list:
    import numpy as np
    import optuna
    from optuna.distributions import FloatDistribution

    space = {f"x{i}": FloatDistribution(0.0, 1.0) for i in range(DIM)}
    xs = np.random.default_rng(seed).random((n, DIM))
    return [
        optuna.trial.create_trial(
            params={f"x{i}": float(v) for i, v in enumerate(x)},
            distributions=space,
            value=_objective(x),
            constraints={"c": _constraint(x)} if constrained else None,
        )
        for x in xs
    ]


def _timed_ask(study, constrained: bool) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    trial = study.ask()
    x = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(DIM)]
    elapsed = time.perf_counter() - start
    if constrained:
        trial.set_constraint("c", _constraint(x))
    study.tell(trial, _objective(x))
    return elapsed


def measure(samplers: list[str], n: int, repeats: int, constrained: bool, seed: int) -> list[dict]:
    """Warm-up and timed asks of every sampler with ``n`` injected trials, interleaved.

    Round ``r`` times the ``r``-th ask of every sampler in turn, so that a slow spell of the
    machine (other processes, frequency changes) touches every sampler alike instead of the
    one that happened to run then: GPSampler's median ask (unconstrained, 200 trials) was
    164, 184-206 and 286 ms in runs on one VM that timed each sampler's asks in one block.
    """
    import optuna

    studies = {}
    for sampler in samplers:
        study = optuna.create_study(sampler=make_sampler(sampler, seed))
        study.add_trials(_trials(n, seed, constrained))
        studies[sampler] = study
    warmup = {sampler: _timed_ask(study, constrained) for sampler, study in studies.items()}
    times: dict[str, list[float]] = {sampler: [] for sampler in samplers}
    for _ in range(repeats):
        for sampler, study in studies.items():
            times[sampler].append(_timed_ask(study, constrained))
    return [
        {
            "sampler": sampler,
            "n_trials": n,
            "constrained": constrained,
            "warmup_s": warmup[sampler],
            "times_s": times[sampler],
            "median_s": statistics.median(times[sampler]),
            "mean_s": statistics.fmean(times[sampler]),
        }
        for sampler in samplers
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--samplers", nargs="+", default=["gp", "cmes", "cei", "ap"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    limit_threads(1)
    configure_quiet_logging()
    load_before = load_average()

    results = []
    for constrained in (False, True):
        for n in args.sizes:
            for result in measure(args.samplers, n, args.repeats, constrained, args.seed):
                results.append(result)
                print(
                    f"{result['sampler']:>8} N={n} constrained={constrained}: "
                    f"median {1e3 * result['median_s']:.0f} ms, "
                    f"mean {1e3 * result['mean_s']:.0f} ms",
                    file=sys.stderr,
                    flush=True,
                )

    def statistic(s: str, n: int, c: bool, key: str) -> float:
        return next(
            r[key] for r in results if (r["sampler"], r["n_trials"], r["constrained"]) == (s, n, c)
        )

    rows = []
    for constrained in (False, True):
        for n in args.sizes:
            for s in args.samplers:
                row: list[Any] = ["one constraint" if constrained else "none", n, s]
                for key in ("median_s", "mean_s"):
                    value = statistic(s, n, constrained, key)
                    gp = statistic("gp", n, constrained, key) if "gp" in args.samplers else None
                    ratio = f"{value / gp:.2f}" if gp else "n/a"
                    row += [f"{1e3 * value:.0f} ms", ratio]
                rows.append(row)
    lines = [
        "# Cost of one GP-based proposal (10-D)",
        "",
        *environment_lines("benchmarks.gp_speed", sys.argv[1:] if argv is None else argv),
        f"- Load average (1, 5, 15 min) at start: {load_before}; at end: {load_average()}; "
        f"nproc = {os.cpu_count()}.",
        "",
        f"{args.repeats} timed asks per sampler after one warm-up ask, one thread, the "
        "samplers' asks interleaved (round r times every sampler's r-th ask). Ratio = the "
        "sampler's statistic / GPSampler's in the same setting (target for cMES and the "
        "portfolio: <= 0.5).",
        "",
        markdown_table(
            [
                "constraints",
                "N finished trials",
                "sampler",
                "median ask",
                "ratio (median)",
                "mean ask",
                "ratio (mean)",
            ],
            rows,
        ),
        "",
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out / "gp_speed.md", "\n".join(lines))
    write_json(args.out / "gp_speed.json", {"results": results})
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
