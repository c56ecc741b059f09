"""Run every (problem, sampler, seed) combination and write a markdown report with plots.

Usage (from the repository root)::

    python -m benchmarks.run_benchmark                       # everything, 5 seeds x 100 trials
    python -m benchmarks.run_benchmark --problems forrester branin --samplers tpe random \\
        --seeds 2 --trials 15 --workers 1 --out /tmp/bench_smoke

Each run is one Optuna study (in-memory storage) with its own sampler and seed; seeds
``0 .. S-1`` are shared by all samplers. A finished run is cached as
``<out>/runs/<problem>__<sampler>__seed<k>__t<trials>.json`` and reused, so an interrupted
benchmark resumes where it stopped. Runs that cannot start (``bore_samplers`` not
importable) or that fail are not cached: they are listed in ``results.md`` and retried next
time.

Timing, per run: ``wall_time_s`` is the whole ``optimize`` loop; ``eval_time_s`` is the time
inside the problem's function; ``sampler_time_s`` is everything else, i.e. for every trial
the time from the end of the previous evaluation to the end of the ``suggest_*`` calls (ask,
sampling, tell and Optuna's bookkeeping), plus the final tell. Every process uses one
BLAS/OpenMP/torch thread, so concurrent workers do not compete.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna

from benchmarks.harness import (
    SAMPLER_NAMES,
    CachedRunSpec,
    SamplerUnavailableError,
    configure_quiet_logging,
    environment_lines,
    limit_threads,
    make_sampler,
    run_argument_parser,
    run_arguments,
    run_cached,
    sampler_unavailable_reason,
    warn_unavailable_samplers,
)
from benchmarks.problems import HOLDOUT_PROBLEMS, PROBLEMS, Problem, get_problem, suggest_params
from benchmarks.report import write_report

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
Record = dict[str, Any]


@dataclass(frozen=True)
class RunSpec(CachedRunSpec):
    """One benchmark run: a problem optimised by a sampler with a seed for some trials."""

    problem: str
    sampler: str
    seed: int
    n_trials: int

    @property
    def filename(self) -> str:
        """Cache file name of this run."""
        return f"{self.problem}__{self.sampler}__seed{self.seed}__t{self.n_trials}.json"

    @property
    def label(self) -> str:
        """Short description for progress lines."""
        return f"{self.problem} {self.sampler} seed={self.seed}"


class TimedObjective:
    """The problem's objective, split into a timed sampling part and a timed evaluation.

    Parameters
    ----------
    problem : Problem
        The problem to evaluate.
    """

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.sampler_time = 0.0
        self.eval_time = 0.0
        self._last_end = time.perf_counter()

    def start(self) -> None:
        """Mark the start of the optimisation loop."""
        self._last_end = time.perf_counter()

    def finish(self) -> None:
        """Count the time after the last evaluation (the last tell) as sampler time."""
        self.sampler_time += time.perf_counter() - self._last_end

    def evaluate(self, trial: optuna.Trial, params: dict[str, Any]) -> float:
        """Evaluate the suggested ``params`` (subclasses may set constraints or raise)."""
        return self.problem.function(params)

    def __call__(self, trial: optuna.Trial) -> float:
        """Suggest the parameters, evaluate the problem, and account the time of both.

        The time is accounted even when :meth:`evaluate` raises (a failed trial).
        """
        start = time.perf_counter()
        params = suggest_params(trial, self.problem.space)
        mid = time.perf_counter()
        self.sampler_time += mid - self._last_end
        try:
            return self.evaluate(trial, params)
        finally:
            self._last_end = time.perf_counter()
            self.eval_time += self._last_end - mid
            trial.set_user_attr("suggest_time_s", mid - start)


def _best_so_far(values: Sequence[float | None]) -> list[float | None]:
    best: float | None = None
    out: list[float | None] = []
    for value in values:
        if value is not None and (best is None or value < best):
            best = value
        out.append(best)
    return out


def run_one(spec: RunSpec) -> Record:
    """Execute one run and return its record (never raises for a failing sampler).

    Parameters
    ----------
    spec : RunSpec
        What to run.

    Returns
    -------
    Record
        ``status`` is ``"ok"`` (with ``values``, ``best_so_far`` and timings), ``"skipped"``
        (sampler unavailable) or ``"error"``; the last two carry a ``message``.
    """
    limit_threads()
    configure_quiet_logging()
    problem = get_problem(spec.problem)
    try:
        if spec.sampler == "synetune-bore":
            reason = sampler_unavailable_reason(spec.sampler)
            if reason is not None:
                raise SamplerUnavailableError(reason)
            # Every trial is enqueued, so this sampler never chooses a value.
            sampler: optuna.samplers.BaseSampler = optuna.samplers.RandomSampler(seed=spec.seed)
        else:
            sampler = make_sampler(spec.sampler, spec.seed)
        study = optuna.create_study(direction="minimize", sampler=sampler)
        objective = TimedObjective(problem)
        start = time.perf_counter()
        objective.start()
        if spec.sampler == "synetune-bore":
            from benchmarks.synetune_bore import run_synetune_bore

            run_synetune_bore(study, objective, problem.space, spec.n_trials, spec.seed)
        else:
            study.optimize(objective, n_trials=spec.n_trials)
        objective.finish()
        wall = time.perf_counter() - start
    except SamplerUnavailableError as exc:
        return spec.record("skipped", message=str(exc))
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"{type(exc).__name__}: {exc} (at {Path(where.filename).name}:{where.lineno})"
        return spec.record("error", message=message)
    values = [
        t.value if t.state == optuna.trial.TrialState.COMPLETE else None for t in study.trials
    ]
    best = study.best_trial if any(v is not None for v in values) else None
    return spec.record(
        "ok",
        values=values,
        best_so_far=_best_so_far(values),
        best_params=best.params if best is not None else None,
        n_failed=sum(v is None for v in values),
        wall_time_s=wall,
        sampler_time_s=objective.sampler_time,
        eval_time_s=objective.eval_time,
    )


def _has_all_trials(rec: Record, spec: Any) -> bool:
    """Whether a cached record ran every trial of ``spec`` (else it is run again)."""
    return len(rec.get("best_so_far", ())) == spec.n_trials


def _unavailable(spec: Any) -> str | None:
    return sampler_unavailable_reason(spec.sampler)


def _describe(rec: Record) -> str:
    best = rec["best_so_far"][-1]
    return (
        f"best={best:.6g} wall={rec['wall_time_s']:.1f}s "
        f"sampler={rec['sampler_time_s']:.1f}s eval={rec['eval_time_s']:.1f}s"
    )


def run_all(
    specs: Sequence[Any],
    runs_dir: Path,
    workers: int,
    run_fn: Callable[[Any], Record] | None = None,
    describe: Callable[[Record], str] | None = None,
) -> list[Record]:
    """Run ``specs`` (using the cache in ``runs_dir``) and return their records in order.

    :func:`benchmarks.harness.run_cached`, with cached records that ran fewer than
    ``spec.n_trials`` trials run again and samplers that cannot run here skipped.

    Parameters
    ----------
    specs : Sequence
        Runs to perform: :class:`RunSpec` or another frozen dataclass with ``sampler``,
        ``n_trials``, ``filename``, ``label`` and ``record(status, **fields)``.
    runs_dir : pathlib.Path
        Cache folder; successful runs are written there as soon as they finish.
    workers : int
        Worker processes; 1 runs everything in this process.
    run_fn : Callable or None
        Module-level function executing one spec (default :func:`run_one`); it must be
        importable by the spawned workers.
    describe : Callable or None
        One-line summary of a successful record for the progress output (default: best
        value and timings).

    Returns
    -------
    list[Record]
        One record per spec.
    """
    return run_cached(
        specs,
        runs_dir,
        workers,
        run_one if run_fn is None else run_fn,
        _describe if describe is None else describe,
        is_complete=_has_all_trials,
        unavailable=_unavailable,
    )


def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = run_argument_parser(
        "python -m benchmarks.run_benchmark",
        "Benchmark BORE samplers against Optuna's samplers and Syne Tune's BORE.",
        problems=PROBLEMS,
        samplers=SAMPLER_NAMES,
        problem_choices=[*PROBLEMS, *HOLDOUT_PROBLEMS],
    )
    return run_arguments(
        parser, argv, seeds=5, trials=100, out=DEFAULT_OUT, out_label="benchmarks/results"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status.

    Parameters
    ----------
    argv : Sequence[str] or None
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when the report was written.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parse_args(argv)
    limit_threads()  # inherited by the spawned workers
    configure_quiet_logging()
    warn_unavailable_samplers(args.samplers)
    seeds = list(range(args.seeds))
    specs = [
        RunSpec(problem, sampler, seed, args.trials)
        for seed in seeds
        for problem in args.problems
        for sampler in args.samplers
    ]
    start = time.perf_counter()
    records = run_all(specs, args.runs, args.workers)
    header = [
        *environment_lines("benchmarks.run_benchmark", argv),
        f"- Problems: {', '.join(args.problems)}",
        f"- Samplers: {', '.join(args.samplers)}",
        f"- Seeds: {', '.join(map(str, seeds))}; trials per run: {args.trials}; "
        f"workers: {args.workers} (one thread each)",
        f"- This invocation took {time.perf_counter() - start:.0f} s; runs are cached in "
        "`runs/` and reused.",
        "- Values are minimised. Final best value and simple regret (best - optimum) are "
        "given as mean ± standard error over seeds. Sampler time per trial covers ask, "
        "sampling, tell and Optuna's bookkeeping, not the objective.",
    ]
    problems = [get_problem(name) for name in args.problems]
    path = write_report(args.out, records, problems, args.samplers, seeds, header)
    print(f"wrote {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
