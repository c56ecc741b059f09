"""Quality at equal trial count: 4 asynchronous parallel workers against one sequential worker.

Usage (from the repository root)::

    python -m benchmarks.parallel_quality                    # 10 seeds x 50 trials, ~10 min
    python -m benchmarks.parallel_quality --problems branin --samplers tpe --seeds 2 \\
        --trials 15 --out /tmp/parallel_smoke

Each run is one in-memory study with one sampler object (as ``n_jobs`` threads share one)
driven through ``ask``/``tell`` with ``--parallel`` trials in flight: the first ``k`` trials
are asked at once, then each time the oldest trial is evaluated and told a new one is asked,
so that every proposal after the first ``k`` is made while ``k - 1`` other trials are still
running, as it is for ``k`` workers with equal evaluation times. ``k = 1`` is the sequential
run. The objective is evaluated when its trial is told, after the later asks: nothing of a
pending trial leaks into a proposal except what a real worker would see (its RUNNING state and
published proposal). This simulation is deterministic for a seed, unlike threads racing each
other, and needs no sleeping objective to keep trials pending.

Reported per (problem, sampler, mode): the final simple regret (best value - known optimum)
after ``--trials`` trials, mean ± standard error over seeds ``0 .. S-1`` (the same seeds in
both modes), the ratio of the means parallel / sequential, and the mean over seeds of the
paired difference of log10 regrets (parallel - sequential; regrets are floored at 1e-12),
which does not let one seed dominate. The stated margin: the parallel run is within the
margin when its mean regret is at most ``--margin`` (default 2) times the sequential one, or
its mean log10 regret is at most ``log10(margin)`` above the sequential one. Every run also
counts duplicated configurations and ``ModelFallbackWarning``\\ s (both should be 0).

Writes ``<out>/parallel.md`` and ``<out>/parallel.json`` (every run's record).
"""

from __future__ import annotations

import argparse
import collections
import math
import multiprocessing
import sys
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import optuna

from benchmarks.harness import (
    atomic_write_text,
    configure_quiet_logging,
    environment_lines,
    limit_threads,
    make_sampler,
    markdown_table,
    mean_se,
    warn_unavailable_samplers,
    write_json,
)
from benchmarks.problems import get_problem, suggest_params

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "parallel"
DEFAULT_PROBLEMS: tuple[str, ...] = ("branin", "hartmann6")
DEFAULT_SAMPLERS: tuple[str, ...] = ("bore-xgb", "cmes", "portfolio", "tpe", "gp")
REGRET_FLOOR = 1e-12


@dataclass
class Run:
    """One study: a problem, a sampler, a seed and the number of trials in flight."""

    problem: str
    sampler: str
    seed: int
    n_trials: int
    parallel: int
    final_regret: float = math.nan
    best_so_far: list[float] = field(default_factory=list)
    duplicates: int = 0
    fallbacks: int = 0
    wall_time_s: float = math.nan


def run_one(problem_name: str, sampler: str, seed: int, n_trials: int, parallel: int) -> Run:
    """Optimise ``problem_name`` with ``parallel`` trials in flight (see the module docstring).

    Parameters
    ----------
    problem_name
        A synthetic problem of :mod:`benchmarks.problems` (its optimum is known).
    sampler
        A name accepted by :func:`benchmarks.harness.make_sampler`.
    seed
        Sampler seed.
    n_trials
        Trials in total.
    parallel
        Trials in flight; 1 is the sequential run.

    Returns
    -------
    Run
        The run with its results.
    """
    from bore_samplers.proposers.base import ModelFallbackWarning

    configure_quiet_logging()
    problem = get_problem(problem_name)
    assert problem.optimum is not None, f"{problem_name} has no known optimum"
    study = optuna.create_study(sampler=make_sampler(sampler, seed))
    run = Run(problem_name, sampler, seed, n_trials, parallel)
    in_flight: collections.deque[tuple[optuna.Trial, dict[str, Any]]] = collections.deque()
    asked, best, start = 0, math.inf, time.perf_counter()

    def ask() -> None:
        nonlocal asked
        trial = study.ask()
        in_flight.append((trial, suggest_params(trial, problem.space)))
        asked += 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelFallbackWarning)
        while asked < min(parallel, n_trials):
            ask()
        while in_flight:
            trial, params = in_flight.popleft()
            value = problem.function(params)
            study.tell(trial, value)
            best = min(best, value)
            run.best_so_far.append(max(best - problem.optimum, 0.0))
            if asked < n_trials:
                ask()
    run.wall_time_s = time.perf_counter() - start
    run.final_regret = run.best_so_far[-1]
    run.fallbacks = sum(issubclass(w.category, ModelFallbackWarning) for w in caught)
    configurations = [tuple(sorted(t.params.items())) for t in study.trials]
    run.duplicates = len(configurations) - len(set(configurations))
    return run


def _run_spec(spec: tuple[str, str, int, int, int]) -> Run:
    limit_threads(1)
    return run_one(*spec)


# ------------------------------------------------------------------------------ report
def _format(mean: float, se: float) -> str:
    return f"{mean:.3g} ± {se:.2g}" if math.isfinite(se) else f"{mean:.3g}"


def summarise(runs: Sequence[Run], margin: float) -> list[dict[str, Any]]:
    """One row per (problem, sampler): both modes, their ratio and the paired log difference."""
    by_key: dict[tuple[str, str, int], dict[int, Run]] = collections.defaultdict(dict)
    for run in runs:
        by_key[(run.problem, run.sampler, run.parallel)][run.seed] = run
    rows = []
    pairs = sorted({(p, s) for p, s, _ in by_key}, key=lambda k: (k[0], k[1]))
    for problem, sampler in pairs:
        modes = sorted(k for (p, s, k) in by_key if (p, s) == (problem, sampler))
        if len(modes) != 2:
            continue
        sequential, parallel = (
            by_key[(problem, sampler, modes[0])],
            by_key[(problem, sampler, modes[1])],
        )
        seeds = sorted(set(sequential) & set(parallel))
        seq = np.array([sequential[s].final_regret for s in seeds])
        par = np.array([parallel[s].final_regret for s in seeds])
        log_diff = np.log10(np.maximum(par, REGRET_FLOOR)) - np.log10(
            np.maximum(seq, REGRET_FLOOR)
        )
        seq_mean, seq_se = mean_se(seq)
        par_mean, par_se = mean_se(par)
        diff_mean, diff_se = mean_se(log_diff)
        ratio = par_mean / seq_mean if seq_mean > 0 else math.inf
        rows.append(
            {
                "problem": problem,
                "sampler": sampler,
                "parallel": modes[1],
                "seeds": len(seeds),
                "sequential": (seq_mean, seq_se),
                "parallel_regret": (par_mean, par_se),
                "ratio": ratio,
                "log10_diff": (diff_mean, diff_se),
                "within_margin": bool(ratio <= margin or diff_mean <= math.log10(margin)),
                "duplicates": int(
                    sum(r.duplicates for r in (*sequential.values(), *parallel.values()))
                ),
                "fallbacks": int(
                    sum(r.fallbacks for r in (*sequential.values(), *parallel.values()))
                ),
                "time_s": (
                    float(np.mean([sequential[s].wall_time_s for s in seeds])),
                    float(np.mean([parallel[s].wall_time_s for s in seeds])),
                ),
            }
        )
    return rows


def write_report(
    out: Path,
    runs: Sequence[Run],
    rows: Sequence[dict[str, Any]],
    header: Sequence[str],
    margin: float,
) -> Path:
    """Write ``parallel.md`` and ``parallel.json`` to ``out``."""
    table = markdown_table(
        [
            "problem",
            "sampler",
            "sequential regret",
            f"{rows[0]['parallel'] if rows else 4} workers regret",
            "ratio par/seq",
            "Δ log10 regret (par - seq)",
            f"within {margin:g}x",
            "duplicates",
            "fallbacks",
            "s/run seq, par",
        ],
        [
            [
                r["problem"],
                r["sampler"],
                _format(*r["sequential"]),
                _format(*r["parallel_regret"]),
                f"{r['ratio']:.2f}",
                _format(*r["log10_diff"]),
                "yes" if r["within_margin"] else "**no**",
                r["duplicates"],
                r["fallbacks"],
                f"{r['time_s'][0]:.1f}, {r['time_s'][1]:.1f}",
            ]
            for r in rows
        ],
    )
    lines = [
        "# Parallel workers against the sequential run, at equal trial count",
        "",
        *header,
        "",
        "## Final simple regret (mean ± s.e. over seeds)",
        "",
        table,
    ]
    path = out / "parallel.md"
    atomic_write_text(path, "\n".join(lines))
    write_json(out / "parallel.json", {"summary": list(rows), "runs": [asdict(r) for r in runs]})
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", nargs="+", default=list(DEFAULT_PROBLEMS))
    parser.add_argument("--samplers", nargs="+", default=list(DEFAULT_SAMPLERS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--parallel", type=int, default=4, help="trials in flight (workers)")
    parser.add_argument("--margin", type=float, default=2.0)
    parser.add_argument(
        "--jobs", type=int, default=1, help="benchmark processes (one thread each)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    limit_threads(1)  # inherited by the spawned processes
    configure_quiet_logging()
    samplers = [s for s in args.samplers if s not in warn_unavailable_samplers(args.samplers)]
    specs = [
        (problem, sampler, seed, args.trials, parallel)
        for problem in args.problems
        for sampler in samplers
        for seed in range(args.seeds)
        for parallel in (1, args.parallel)
    ]
    start = time.perf_counter()
    runs: list[Run] = []
    if args.jobs == 1:
        iterator = map(_run_spec, specs)
        executor = None
    else:
        executor = ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn"))
        iterator = executor.map(_run_spec, specs)
    try:
        for i, run in enumerate(iterator, 1):
            runs.append(run)
            print(
                f"[{i}/{len(specs)}] {run.problem} {run.sampler} seed={run.seed} "
                f"k={run.parallel}: regret {run.final_regret:.3g} ({run.wall_time_s:.1f} s)",
                flush=True,
            )
    finally:
        if executor is not None:
            executor.shutdown()
    total = time.perf_counter() - start
    rows = summarise(runs, args.margin)
    header = [
        *environment_lines(
            "benchmarks.parallel_quality", argv if argv is not None else sys.argv[1:]
        ),
        f"- {args.seeds} seeds x {args.trials} trials per run, in-memory studies; sequential "
        f"(1 trial in flight) against {args.parallel} asynchronous workers ({args.parallel} "
        "trials in flight: each proposal after the first ones sees "
        f"{args.parallel - 1} pending trials), simulated with ask/tell (see the module "
        "docstring); samplers with their defaults; one thread; "
        f"{args.jobs} process(es); total {total / 60:.1f} min.",
        f"- Margin: parallel is within {args.margin:g}x when its mean final regret is at most "
        f"{args.margin:g} times the sequential one, or its mean log10 regret at most "
        f"log10({args.margin:g}) = {math.log10(args.margin):.2f} above (paired by seed).",
    ]
    path = write_report(args.out, runs, rows, header, args.margin)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
