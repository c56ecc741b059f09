"""Constrained benchmark: every (problem, feedback mode, sampler, seed), with a report.

Usage (from the repository root)::

    python -m benchmarks.run_constrained          # everything, 10 seeds x 50 trials
    python -m benchmarks.run_constrained --problems toy-quadratics --samplers tpe random gp \\
        --seeds 2 --trials 15 --workers 1 --out /tmp/cbench_smoke

Problems and feedback modes are described in :mod:`benchmarks.constrained_problems`. In
``real`` mode the objective sets ``trial.set_constraint(name, g - threshold)``; in
``binary`` mode infeasible configurations raise, the trial is ``FAIL`` and nothing is
observed (``study.optimize(..., catch=(InfeasibleError,))``).

Samplers: ``cmes``, ``cmes-meanfield``, ``cei``, ``ap`` (``CMESSampler`` with the keyword
arguments of :data:`benchmarks.harness.CMES_SAMPLERS`, otherwise defaults; the ablations
``cmes-p0.5`` and ``cmes-p0.9`` on request), ``gp``, ``tpe``, ``random`` (Optuna's
samplers with their defaults; GP and TPE read ``trial.constraints``).
Unavailable samplers are skipped with a message; a run that raises (e.g. a sampler that
rejects trials without constraints) is recorded with its reason, listed in ``results.md``
and retried on the next invocation.

Per run, the record (cached as ``<out>/runs/<problem>__<mode>__<sampler>__seed<k>__t<n>.json``,
reused on resume) holds per trial the objective (``null`` when the trial failed), the
constraint measure ``g`` (``null`` when unobserved), feasibility, the best FEASIBLE value so
far (``null``, i.e. +inf, until the first feasible trial), the infeasible fraction (failed
or constraint-violating evaluations) and the wall, sampler and evaluation times (the same
accounting as :mod:`benchmarks.run_benchmark`).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna

from benchmarks.constrained_problems import (
    CONSTRAINED_PROBLEMS,
    MODES,
    ConstrainedProblem,
    InfeasibleError,
    get_constrained_problem,
)
from benchmarks.harness import (
    CMES_SAMPLERS,
    CONSTRAINED_SAMPLER_NAMES,
    CachedRunSpec,
    SamplerUnavailableError,
    add_name_list_argument,
    configure_quiet_logging,
    environment_lines,
    limit_threads,
    make_sampler,
    run_argument_parser,
    run_arguments,
    warn_unavailable_samplers,
)
from benchmarks.report import write_constrained_report
from benchmarks.run_benchmark import TimedObjective, run_all

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "constrained"
Record = dict[str, Any]


@dataclass(frozen=True)
class ConstrainedRunSpec(CachedRunSpec):
    """One run: a problem in a feedback mode optimised by a sampler with a seed."""

    problem: str
    mode: str
    sampler: str
    seed: int
    n_trials: int

    @property
    def filename(self) -> str:
        """Cache file name of this run."""
        return (
            f"{self.problem}__{self.mode}__{self.sampler}__seed{self.seed}__t{self.n_trials}.json"
        )

    @property
    def label(self) -> str:
        """Short description for progress lines."""
        return f"{self.problem} {self.mode} {self.sampler} seed={self.seed}"


class ConstrainedTimedObjective(TimedObjective):
    """:class:`TimedObjective` for a constrained problem in one feedback mode.

    Besides the timing it logs, per trial number, the objective and the constraint measure
    (the log is the runner's; samplers only see what the feedback mode reveals).
    """

    def __init__(self, problem: ConstrainedProblem, mode: str) -> None:
        super().__init__(problem)  # type: ignore[arg-type]
        self.mode = mode
        self.log: dict[int, tuple[float, float]] = {}

    def evaluate(self, trial: optuna.Trial, params: dict[str, Any]) -> float:
        """Evaluate, then set the constraint (real) or raise when infeasible (binary)."""

        def observe(value: float, g: float) -> None:
            self.log[trial.number] = (value, g)

        problem: ConstrainedProblem = self.problem  # type: ignore[assignment]
        return problem.evaluate(trial, params, self.mode, observe)


def _best_feasible_so_far(values: Sequence[float | None], feasible: Sequence[bool]) -> list:
    best: float | None = None
    out: list[float | None] = []
    for value, ok in zip(values, feasible, strict=True):
        if ok and value is not None and (best is None or value < best):
            best = value
        out.append(best)
    return out


def run_constrained_one(spec: ConstrainedRunSpec) -> Record:
    """Execute one run and return its record (never raises for a failing sampler).

    Parameters
    ----------
    spec : ConstrainedRunSpec
        What to run.

    Returns
    -------
    Record
        ``status`` ``"ok"`` (with per-trial values, constraint measures, feasibility, best
        feasible value so far, infeasible fraction, timings), ``"skipped"`` or ``"error"``
        (with a ``message``).
    """
    limit_threads()
    configure_quiet_logging()
    # Failed (infeasible) trials would each log a warning.
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem = get_constrained_problem(spec.problem)
    try:
        sampler = make_sampler(spec.sampler, spec.seed)
        study = optuna.create_study(direction="minimize", sampler=sampler)
        objective = ConstrainedTimedObjective(problem, spec.mode)
        start = time.perf_counter()
        objective.start()
        study.optimize(objective, n_trials=spec.n_trials, catch=(InfeasibleError,))
        objective.finish()
        wall = time.perf_counter() - start
    except SamplerUnavailableError as exc:
        return spec.record("skipped", message=str(exc))
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"{type(exc).__name__}: {exc} (at {Path(where.filename).name}:{where.lineno})"
        return spec.record("error", message=message)
    trials = study.trials
    complete = [t.state == optuna.trial.TrialState.COMPLETE for t in trials]
    values = [t.value if ok else None for t, ok in zip(trials, complete, strict=True)]
    measures = [
        objective.log[t.number][1] if ok else None for t, ok in zip(trials, complete, strict=True)
    ]
    feasible = [g is not None and problem.is_feasible(g) for g in measures]
    best = _best_feasible_so_far(values, feasible)
    best_trial = None
    if best[-1] is not None:
        best_trial = next(
            t for t, v, ok in zip(trials, values, feasible, strict=True) if ok and v == best[-1]
        )
    n_infeasible = sum(not ok for ok in feasible)
    return spec.record(
        "ok",
        values=values,
        constraint_measures=measures,
        feasible=feasible,
        best_so_far=best,
        best_params=best_trial.params if best_trial is not None else None,
        first_feasible_trial=next((i for i, ok in enumerate(feasible) if ok), None),
        n_failed=sum(not ok for ok in complete),
        n_infeasible=n_infeasible,
        infeasible_fraction=n_infeasible / max(len(trials), 1),
        wall_time_s=wall,
        sampler_time_s=objective.sampler_time,
        eval_time_s=objective.eval_time,
    )


def _describe(rec: Record) -> str:
    best = rec["best_so_far"][-1]
    best_text = "none feasible" if best is None else f"{best:.6g}"
    return (
        f"best feasible={best_text} infeasible={rec['infeasible_fraction']:.0%} "
        f"wall={rec['wall_time_s']:.1f}s sampler={rec['sampler_time_s']:.1f}s "
        f"eval={rec['eval_time_s']:.1f}s"
    )


def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = run_argument_parser(
        "python -m benchmarks.run_constrained",
        "Constrained benchmark: cMES/cEI/AP against Optuna's samplers.",
        problems=CONSTRAINED_PROBLEMS,
        samplers=CONSTRAINED_SAMPLER_NAMES,
        sampler_choices=list(dict.fromkeys((*CONSTRAINED_SAMPLER_NAMES, *CMES_SAMPLERS))),
    )
    add_name_list_argument(parser, "modes", MODES, "feedback modes (default: real binary)")
    return run_arguments(
        parser,
        argv,
        seeds=10,
        trials=50,
        out=DEFAULT_OUT,
        out_label="benchmarks/results/constrained",
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
        ConstrainedRunSpec(problem, mode, sampler, seed, args.trials)
        for seed in seeds
        for problem in args.problems
        for mode in args.modes
        for sampler in args.samplers
    ]
    start = time.perf_counter()
    records = run_all(
        specs, args.runs, args.workers, run_fn=run_constrained_one, describe=_describe
    )
    header = [
        *environment_lines("benchmarks.run_constrained", argv),
        f"- Problems: {', '.join(args.problems)}; feedback modes: {', '.join(args.modes)}",
        f"- Samplers: {', '.join(args.samplers)}",
        f"- Seeds: {', '.join(map(str, seeds))}; trials per run: {args.trials}; "
        f"workers: {args.workers} (one thread each)",
        f"- This invocation took {time.perf_counter() - start:.0f} s; runs are cached in "
        "`runs/` and reused.",
        "- Values are minimised. *real*: the objective is always observed and the constraint "
        "value `g - threshold` is set with `trial.set_constraint`; *binary*: infeasible "
        "configurations raise, the trial fails and nothing is observed. Final best feasible "
        "value (and simple regret for the toy) as mean ± standard error over the runs that "
        "found a feasible point. Sampler time per trial covers ask, sampling, tell and "
        "Optuna's bookkeeping, not the objective.",
    ]
    problems = [get_constrained_problem(name) for name in args.problems]
    path = write_constrained_report(
        args.out, records, problems, args.modes, args.samplers, seeds, header
    )
    print(f"wrote {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
