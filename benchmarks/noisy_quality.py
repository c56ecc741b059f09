"""Quality on noisy objectives: noisy EI / PI against the plug-in incumbent, side by side.

Usage (from the repository root)::

    python -m benchmarks.noisy_quality                     # 3 problems x 10 seeds x 100 trials
    python -m benchmarks.noisy_quality --problems noisy-branin --samplers gp-ei tpe \\
        --seeds 2 --trials 15 --out /tmp/noisy_smoke

Each objective returns a standard test function plus Gaussian noise, drawn from a generator
seeded by the run's seed (the same noise sequence for every sampler of a seed). A run is
judged as a user would use it: by the noise-free value of ``study.best_trial``, the trial
with the best *observed* value, minus the known optimum (simple regret). Samplers are ranked
per problem and seed by that regret (ties share the average rank) and the ranks averaged;
the table also gives the median regret and each sampler's wins against its plug-in twin
(``gp-noisy-ei`` against ``gp-ei``, ``portfolio-noisy`` against ``portfolio``), paired by
seed.

Writes ``<out>/noisy.md`` and ``<out>/noisy.json`` (every run's record).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats

from benchmarks.harness import (
    atomic_write_text,
    configure_quiet_logging,
    limit_threads,
    make_sampler,
    mean_se,
)
from benchmarks.problems import get_problem

DEFAULT_SAMPLERS = ("gp-noisy-ei", "gp-ei", "portfolio-noisy", "portfolio", "tpe")
#: Each sampler with noisy EI / PI -> its twin with the plug-in incumbent.
TWINS = {"gp-noisy-ei": "gp-ei", "portfolio-noisy": "portfolio"}


@dataclass(frozen=True)
class NoisyProblem:
    """A synthetic problem of :mod:`benchmarks.problems` on the unit cube (its box mapped
    linearly) plus ``N(0, noise_sd²)`` observation noise."""

    base: str
    noise_sd: float


PROBLEMS: dict[str, NoisyProblem] = {
    # Noise of about 1 % of the range of values: the near-optimal values differ by less.
    "noisy-branin": NoisyProblem("branin", 2.0),
    "noisy-hartmann3": NoisyProblem("hartmann3", 0.05),
    "noisy-hartmann6": NoisyProblem("hartmann6", 0.1),
}


def run_one(spec: tuple[str, str, int, int]) -> dict[str, Any]:
    """One study; the record of :func:`main`'s JSON."""
    problem_name, sampler_name, seed, n_trials = spec
    limit_threads(1)
    configure_quiet_logging()
    import optuna

    noisy = PROBLEMS[problem_name]
    problem = get_problem(noisy.base)
    assert problem.optimum is not None
    noise = np.random.default_rng(10_000 + seed)
    true_values: dict[int, float] = {}

    def objective(trial: optuna.Trial) -> float:
        params = {
            name: box.low + (box.high - box.low) * trial.suggest_float(name, 0.0, 1.0)
            for name, box in problem.space.items()
        }
        true_values[trial.number] = problem.function(params)
        return true_values[trial.number] + noisy.noise_sd * float(noise.standard_normal())

    start = time.perf_counter()
    study = optuna.create_study(sampler=make_sampler(sampler_name, seed))
    study.optimize(objective, n_trials=n_trials)
    return {
        "problem": problem_name,
        "sampler": sampler_name,
        "seed": seed,
        "regret": true_values[study.best_trial.number] - problem.optimum,
        "seconds": time.perf_counter() - start,
    }


def report(records: Sequence[dict[str, Any]], samplers: Sequence[str], command: str) -> str:
    """The markdown tables of the records."""
    problems = list(dict.fromkeys(r["problem"] for r in records))
    regret = {(r["problem"], r["sampler"], r["seed"]): r["regret"] for r in records}
    seeds = sorted({r["seed"] for r in records})
    ranks: dict[str, list[float]] = {s: [] for s in samplers}
    ranks_by_problem: dict[tuple[str, str], list[float]] = {}
    for problem in problems:
        for seed in seeds:
            values = [regret[(problem, s, seed)] for s in samplers]
            for sampler, rank in zip(samplers, scipy.stats.rankdata(values), strict=True):
                ranks[sampler].append(float(rank))
                ranks_by_problem.setdefault((problem, sampler), []).append(float(rank))
    lines = [
        "# Noisy objectives: noisy EI / PI against the plug-in incumbent",
        "",
        f"- Command: `{command}`",
        f"- Problems: {', '.join(problems)}; seeds {seeds[0]}..{seeds[-1]}; "
        f"{len(samplers)} samplers.",
        "- Regret: the noise-free value of `study.best_trial` (best observed value) minus the "
        "optimum. Ranks per problem and seed (1 = best), mean ± standard error.",
        "",
        "| sampler | mean rank | "
        + " | ".join(f"rank on {p} | median regret on {p}" for p in problems)
        + " |",
        "| --- | --- | " + " | ".join("--- | ---" for _ in problems) + " |",
    ]
    for sampler in sorted(samplers, key=lambda s: np.mean(ranks[s])):
        mean, se = mean_se(ranks[sampler])
        cells = [f"{mean:.2f} ± {se:.2f}"]
        for problem in problems:
            cells.append(f"{np.mean(ranks_by_problem[(problem, sampler)]):.2f}")
            cells.append(f"{np.median([regret[(problem, sampler, k)] for k in seeds]):.3g}")
        lines.append(f"| {sampler} | " + " | ".join(cells) + " |")
    pairs = [(noisy, plain) for noisy, plain in TWINS.items() if {noisy, plain} <= set(samplers)]
    if pairs:
        lines += [
            "",
            "Paired by seed against the twin with the plug-in incumbent (lower regret wins; "
            "mean difference of log10 regret, floored at 1e-12, ± standard error):",
            "",
            "| sampler | twin | problem | wins | losses | mean Δ log10 regret |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for noisy, plain in pairs:
            for problem in [*problems, "all"]:
                chosen = problems if problem == "all" else [problem]
                a = np.array([regret[(p, noisy, k)] for p in chosen for k in seeds])
                b = np.array([regret[(p, plain, k)] for p in chosen for k in seeds])
                delta = np.log10(np.maximum(a, 1e-12)) - np.log10(np.maximum(b, 1e-12))
                mean, se = mean_se(delta)
                lines.append(
                    f"| {noisy} | {plain} | {problem} | {int(np.sum(a < b))} | "
                    f"{int(np.sum(a > b))} | {mean:+.2f} ± {se:.2f} |"
                )
    seconds = {s: np.mean([r["seconds"] for r in records if r["sampler"] == s]) for s in samplers}
    lines += [
        "",
        "Mean wall time per run (s, sampler and objective, one thread): "
        + ", ".join(f"{s} {seconds[s]:.1f}" for s in samplers)
        + ".",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    parser.add_argument("--samplers", nargs="+", default=list(DEFAULT_SAMPLERS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/noisy"))
    args = parser.parse_args(argv)
    specs = [
        (problem, sampler, seed, args.trials)
        for problem in args.problems
        for seed in range(args.seeds)
        for sampler in args.samplers
    ]
    records: list[dict[str, Any]] = []
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for record in pool.imap_unordered(run_one, specs):
            records.append(record)
            print(f"[{len(records)}/{len(specs)}] {record}", file=sys.stderr, flush=True)
    records.sort(key=lambda r: (r["problem"], r["sampler"], r["seed"]))
    atomic_write_text(args.out / "noisy.json", json.dumps(records, indent=1))
    command = "python -m benchmarks.noisy_quality " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    atomic_write_text(args.out / "noisy.md", report(records, args.samplers, command.strip()))
    print((args.out / "noisy.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
