"""Multi-objective benchmark: hypervolume of our samplers against Optuna's, with a report.

Usage (from the repository root)::

    python -m benchmarks.multi_objective --seeds 10 --trials 100 --workers 2 \\
        --out benchmarks/results/multi_objective
    python -m benchmarks.multi_objective --seeds 2 --trials 20 --problems zdt1 bnh \\
        --workers 1 --out /tmp/mo_smoke                    # a smoke run

Problems (every objective minimised; the reference point of the hypervolume is fixed per
problem, :data:`PROBLEMS`):

* ``zdt1``, ``zdt2``: Zitzler, Deb & Thiele, *Comparison of Multiobjective Evolutionary
  Algorithms: Empirical Results*, Evolutionary Computation 8(2), 2000, on 6 variables
  (convex and concave fronts).
* ``dtlz2``: Deb, Thiele, Laumanns & Zitzler, *Scalable Test Problems for Evolutionary
  Multiobjective Optimization*, 2005, 3 objectives on 6 variables (a spherical front).
* ``bnh``: Binh & Korn's constrained two-objective problem (*MOBES: A Multiobjective
  Evolution Strategy for Constrained Optimization Problems*, Mendel 1997), its two
  constraints set with ``trial.set_constraint``; only feasible trials count in the
  hypervolume.
* ``rf-digits``: a scikit-learn ``RandomForestClassifier`` on ``load_digits`` (4 parameters),
  3-fold cross-validated error against log10 of the forest's number of tree nodes.
* ``gbm-cancer``: a ``GradientBoostingClassifier`` on ``load_breast_cancer`` (4 parameters),
  3-fold cross-validated error against log10 of the number of tree nodes.

The model sizes are the node counts of the trees fitted in the three folds (``random_state=0``),
averaged: deterministic, unlike wall time.

Samplers: ``bore``, ``cmes``, ``portfolio`` (ours, defaults), ``tpe``
(``TPESampler(multivariate=True, constant_liar=True)``), ``gp`` (``GPSampler``), ``nsga2``
(``NSGAIISampler``) and ``random``; all seeded, all read ``trial.set_constraint``.

Each run is cached as ``<runs>/<problem>__<sampler>__seed<N>__t<T>.json`` (reused on resume)
with every trial's values and feasibility, the hypervolume after every trial and the sampler
time. The report (``<out>/README.md``, ``<out>/summary.json`` and ``<out>/hypervolume.png``
when matplotlib is installed) gives, at half the trials and at all of them, the mean
hypervolume per problem, each sampler's mean rank over (problem, seed) ± its standard error,
its paired wins / ties / losses against TPE, and the mean sampler time per trial.
"""

from __future__ import annotations

import functools
import math
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import optuna

from benchmarks.harness import (
    StudyRunSpec,
    atomic_write_text,
    configure_quiet_logging,
    environment_lines,
    limit_threads,
    markdown_table,
    mean_se,
    run_argument_parser,
    run_arguments,
    run_cached,
    write_json,
)
from benchmarks.harness import (
    make_sampler as harness_make_sampler,
)
from bore_samplers.multi_objective import hypervolume

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "multi_objective"
Record = dict[str, Any]
Params = dict[str, Any]


# ---------------------------------------------------------------------------- problems
@dataclass(frozen=True)
class Problem:
    """A multi-objective problem: suggest parameters, evaluate them to values (minimised)."""

    name: str
    reference: tuple[float, ...]
    suggest: Callable[[optuna.Trial], Params]
    evaluate: Callable[[Params], tuple[tuple[float, ...], dict[str, float]]]

    @property
    def n_objectives(self) -> int:
        """Number of objectives."""
        return len(self.reference)


def _unit_params(d: int) -> Callable[[optuna.Trial], Params]:
    def suggest(trial: optuna.Trial) -> Params:
        return {f"x{i}": trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(d)}

    return suggest


def _zdt(params: Params, concave: bool) -> tuple[tuple[float, ...], dict[str, float]]:
    x = [params[f"x{i}"] for i in range(len(params))]
    g = 1.0 + 9.0 * sum(x[1:]) / (len(x) - 1)
    ratio = x[0] / g
    h = 1.0 - (ratio**2 if concave else math.sqrt(ratio))
    return (x[0], g * h), {}


def _dtlz2(params: Params) -> tuple[tuple[float, ...], dict[str, float]]:
    x = [params[f"x{i}"] for i in range(len(params))]
    g = sum((xi - 0.5) ** 2 for xi in x[2:])
    a, b = x[0] * math.pi / 2, x[1] * math.pi / 2
    return (
        (1 + g) * math.cos(a) * math.cos(b),
        (1 + g) * math.cos(a) * math.sin(b),
        (1 + g) * math.sin(a),
    ), {}


def _bnh_suggest(trial: optuna.Trial) -> Params:
    return {"x0": trial.suggest_float("x0", 0.0, 5.0), "x1": trial.suggest_float("x1", 0.0, 3.0)}


def _bnh(params: Params) -> tuple[tuple[float, ...], dict[str, float]]:
    x0, x1 = params["x0"], params["x1"]
    values = (4 * x0**2 + 4 * x1**2, (x0 - 5) ** 2 + (x1 - 5) ** 2)
    constraints = {
        "c1": (x0 - 5) ** 2 + x1**2 - 25.0,
        "c2": 7.7 - (x0 - 8) ** 2 - (x1 + 3) ** 2,
    }
    return values, constraints


@functools.cache
def _dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    loader = {"digits": datasets.load_digits, "cancer": datasets.load_breast_cancer}[name]
    return loader(return_X_y=True)


def _cv_error_and_size(model: Any, data: str) -> tuple[tuple[float, ...], dict[str, float]]:
    """3-fold CV error and log10 of the mean node count of the three fitted models."""
    from sklearn.model_selection import cross_validate

    x, y = _dataset(data)
    result = cross_validate(model, x, y, cv=3, n_jobs=1, return_estimator=True)
    nodes = [
        sum(int(tree.tree_.node_count) for tree in np.ravel(fitted.estimators_))
        for fitted in result["estimator"]
    ]
    return (1.0 - float(np.mean(result["test_score"])), math.log10(max(np.mean(nodes), 1.0))), {}


def _rf_suggest(trial: optuna.Trial) -> Params:
    return {
        "n_estimators": trial.suggest_int("n_estimators", 1, 32, log=True),
        "max_depth": trial.suggest_int("max_depth", 1, 16),
        "max_features": trial.suggest_float("max_features", 0.05, 0.5),
        "min_samples_leaf": trial.suggest_int("min_samples_leaf", 1, 32, log=True),
    }


def _rf(params: Params) -> tuple[tuple[float, ...], dict[str, float]]:
    from sklearn.ensemble import RandomForestClassifier

    return _cv_error_and_size(RandomForestClassifier(**params, random_state=0, n_jobs=1), "digits")


def _gbm_suggest(trial: optuna.Trial) -> Params:
    return {
        "n_estimators": trial.suggest_int("n_estimators", 1, 100, log=True),
        "max_depth": trial.suggest_int("max_depth", 1, 4),
        "learning_rate": trial.suggest_float("learning_rate", 1e-3, 1.0, log=True),
        "subsample": trial.suggest_float("subsample", 0.5, 1.0),
    }


def _gbm(params: Params) -> tuple[tuple[float, ...], dict[str, float]]:
    from sklearn.ensemble import GradientBoostingClassifier

    return _cv_error_and_size(GradientBoostingClassifier(**params, random_state=0), "cancer")


#: Problem name -> problem. Reference points: just beyond the worst value an objective takes
#: over the space (ZDT: g <= 10; DTLZ2: radius <= 2; BNH: f1 <= 136, f2 <= 50; the models:
#: error <= 1, at most 32 trees of <= 2 * 1198 nodes and 100 trees of <= 31 nodes).
PROBLEMS: dict[str, Problem] = {
    "zdt1": Problem("zdt1", (1.1, 11.0), _unit_params(6), functools.partial(_zdt, concave=False)),
    "zdt2": Problem("zdt2", (1.1, 11.0), _unit_params(6), functools.partial(_zdt, concave=True)),
    "dtlz2": Problem("dtlz2", (2.2, 2.2, 2.2), _unit_params(6), _dtlz2),
    "bnh": Problem("bnh", (140.0, 55.0), _bnh_suggest, _bnh),
    "rf-digits": Problem("rf-digits", (1.0, 5.0), _rf_suggest, _rf),
    "gbm-cancer": Problem("gbm-cancer", (1.0, 3.6), _gbm_suggest, _gbm),
}


# ---------------------------------------------------------------------------- samplers
SAMPLERS = ("auto", "bore", "cmes", "portfolio", "tpe", "gp", "nsga2", "random")


def make_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    """The sampler called ``name`` (see the module docstring), seeded.

    ``tpe`` is multivariate here: Optuna's default TPE samples each parameter on its own in
    multi-objective studies. Every other name comes from the harness's registry.
    """
    if name == "tpe":
        return optuna.samplers.TPESampler(multivariate=True, constant_liar=True, seed=seed)
    if name not in SAMPLERS:
        raise ValueError(f"Unknown sampler {name!r}; choose from {SAMPLERS}.")
    return harness_make_sampler(name, seed)


# --------------------------------------------------------------------------------- runs
class _TimedObjective:
    """Suggests (timed as sampler time, with the tell before it) and evaluates (timed apart)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.sampler_time = 0.0
        self.eval_time = 0.0
        self._last_end = time.perf_counter()

    def __call__(self, trial: optuna.Trial) -> tuple[float, ...]:
        params = self.problem.suggest(trial)
        mid = time.perf_counter()
        self.sampler_time += mid - self._last_end
        try:
            values, constraints = self.problem.evaluate(params)
            for name, value in constraints.items():
                trial.set_constraint(name, value)
            return values
        finally:
            self._last_end = time.perf_counter()
            self.eval_time += self._last_end - mid


def hypervolume_curve(
    values: Sequence[Sequence[float] | None], feasible: Sequence[bool], reference: Sequence[float]
) -> list[float]:
    """The hypervolume of the feasible trials so far, after each trial."""
    reference = np.asarray(reference, dtype=float)
    front = np.empty((0, len(reference)))
    curve, current = [], 0.0
    for value, ok in zip(values, feasible, strict=True):
        if ok and value is not None and np.all(np.asarray(value) < reference):
            point = np.asarray(value, dtype=float)[None, :]
            dominated = np.any(np.all(front <= point, axis=1))
            if not dominated:
                front = np.vstack([front[~np.all(point <= front, axis=1)], point])
                current = hypervolume(front, reference)
        curve.append(current)
    return curve


def run_one(spec: StudyRunSpec) -> Record:
    """Execute one run and return its record (never raises for a failing sampler)."""
    limit_threads()
    configure_quiet_logging()
    problem = PROBLEMS[spec.problem]
    directions = ["minimize"] * problem.n_objectives
    try:
        study = optuna.create_study(
            directions=directions, sampler=make_sampler(spec.sampler, spec.seed)
        )
        objective = _TimedObjective(problem)
        start = time.perf_counter()
        objective._last_end = start
        study.optimize(objective, n_trials=spec.trials)
        objective.sampler_time += time.perf_counter() - objective._last_end
        wall = time.perf_counter() - start
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"{type(exc).__name__}: {exc} (at {Path(where.filename).name}:{where.lineno})"
        return spec.record("error", message=message)
    trials = study.trials
    values = [
        list(t.values) if t.state == optuna.trial.TrialState.COMPLETE else None for t in trials
    ]
    feasible = [
        v is not None and all(c <= 0 for c in t.constraints.values())
        for t, v in zip(trials, values, strict=True)
    ]
    return spec.record(
        "ok",
        values=values,
        feasible=feasible,
        hypervolume=hypervolume_curve(values, feasible, problem.reference),
        n_failed=sum(v is None for v in values),
        n_infeasible=sum(not ok for ok in feasible),
        wall_time_s=wall,
        sampler_time_s=objective.sampler_time,
        eval_time_s=objective.eval_time,
    )


def _describe(rec: Record) -> str:
    return (
        f"hv={rec['hypervolume'][-1]:.5g} infeasible={rec['n_infeasible']} "
        f"sampler={rec['sampler_time_s']:.1f}s eval={rec['eval_time_s']:.1f}s"
    )


def _is_complete(rec: Record, spec: StudyRunSpec) -> bool:
    return len(rec.get("hypervolume", [])) == spec.trials


# ------------------------------------------------------------------------------- report
def summarize(
    records: Sequence[Record], problems: Sequence[str], samplers: Sequence[str], n_trials: int
) -> dict[str, Any]:
    """Aggregates at half the trials and at all of them (see the module docstring)."""
    from scipy.stats import rankdata

    ok = {(r["problem"], r["sampler"], r["seed"]): r for r in records if r["status"] == "ok"}
    seeds = sorted({r["seed"] for r in records})
    checkpoints = sorted({max(n_trials // 2, 1), n_trials})
    summary: dict[str, Any] = {
        "checkpoints": checkpoints,
        "problems": list(problems),
        "samplers": list(samplers),
        "seeds": seeds,
    }
    for checkpoint in checkpoints:
        at = str(checkpoint)
        per_problem: dict[str, dict[str, list[float]]] = {}
        ranks: dict[str, list[float]] = {s: [] for s in samplers}
        versus_tpe: dict[str, list[int]] = {s: [0, 0, 0] for s in samplers}
        for problem in problems:
            per_problem[problem] = {}
            for sampler in samplers:
                per_problem[problem][sampler] = [
                    ok[problem, sampler, seed]["hypervolume"][checkpoint - 1]
                    for seed in seeds
                    if (problem, sampler, seed) in ok
                ]
            for seed in seeds:
                if not all((problem, s, seed) in ok for s in samplers):
                    continue  # ranks over complete (problem, seed) blocks only
                hv = [ok[problem, s, seed]["hypervolume"][checkpoint - 1] for s in samplers]
                for sampler, rank in zip(samplers, rankdata(-np.asarray(hv)), strict=True):
                    ranks[sampler].append(float(rank))
                if "tpe" in samplers:
                    tpe = ok[problem, "tpe", seed]["hypervolume"][checkpoint - 1]
                    for sampler, value in zip(samplers, hv, strict=True):
                        versus_tpe[sampler][0 if value > tpe else 1 if value == tpe else 2] += 1
        summary[at] = {
            "hypervolume": {
                p: {s: mean_se(v) for s, v in per_problem[p].items()} for p in problems
            },
            "mean_rank": {s: mean_se(r) for s, r in ranks.items()},
            "versus_tpe_wins_ties_losses": versus_tpe if "tpe" in samplers else None,
        }
    summary["sampler_time_per_trial_s"] = {
        s: mean_se([r["sampler_time_s"] / r["trials"] for k, r in ok.items() if k[1] == s])
        for s in samplers
    }
    summary["n_runs"] = len(ok)
    return summary


def _plot(
    records: Sequence[Record], problems: Sequence[str], samplers: Sequence[str], path: Path
) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    columns = min(3, len(problems))
    rows = math.ceil(len(problems) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.5 * columns, 3.4 * rows), squeeze=False)
    for ax, problem in zip(axes.ravel(), problems, strict=False):
        for sampler in samplers:
            curves = [
                r["hypervolume"]
                for r in records
                if r["status"] == "ok" and r["problem"] == problem and r["sampler"] == sampler
            ]
            if curves:
                ax.plot(np.arange(1, len(curves[0]) + 1), np.mean(curves, axis=0), label=sampler)
        ax.set_title(problem)
        ax.set_xlabel("trials")
        ax.set_ylabel("hypervolume (mean over seeds)")
    for ax in axes.ravel()[len(problems) :]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(
    records: Sequence[Record],
    problems: Sequence[str],
    samplers: Sequence[str],
    n_trials: int,
    out: Path,
    argv: Sequence[str],
) -> dict[str, Any]:
    """Write ``README.md``, ``summary.json`` and ``hypervolume.png`` into ``out``."""
    summary = summarize(records, problems, samplers, n_trials)
    write_json(out / "summary.json", summary)
    lines = [
        "# Multi-objective benchmark",
        "",
        *environment_lines("benchmarks.multi_objective", argv),
        "",
        "Hypervolume of the feasible trials (higher is better; fixed reference point per "
        "problem, see `benchmarks/multi_objective.py`), mean ± standard error over seeds. "
        "Mean rank: over every (problem, seed), 1 = largest hypervolume. Against TPE: paired "
        "wins / ties / losses over (problem, seed).",
        "",
    ]
    for checkpoint in summary["checkpoints"]:
        at = summary[str(checkpoint)]
        lines += [f"## After {checkpoint} trials", ""]
        headers = ["sampler", *problems, "mean rank", "vs TPE (W/T/L)"]
        rows = []
        for sampler in samplers:
            row = [sampler]
            for problem in problems:
                mean, se = at["hypervolume"][problem][sampler]
                row.append("–" if math.isnan(mean) else f"{mean:.4g} ± {se:.2g}")
            mean, se = at["mean_rank"][sampler]
            row.append("–" if math.isnan(mean) else f"{mean:.2f} ± {se:.2f}")
            wtl = (at["versus_tpe_wins_ties_losses"] or {}).get(sampler)
            row.append("–" if wtl is None else "/".join(map(str, wtl)))
            rows.append(row)
        lines += [markdown_table(headers, rows)]
    lines += ["## Sampler time per trial (s)", ""]
    lines += [
        markdown_table(
            ["sampler", "mean ± SE over runs"],
            [
                [s, "{:.3f} ± {:.2g}".format(*summary["sampler_time_per_trial_s"][s])]
                for s in samplers
            ],
        )
    ]
    failed = [r for r in records if r["status"] != "ok"]
    if failed:
        lines += ["## Runs that did not finish", ""]
        lines += [
            f"- {r['problem']} {r['sampler']} seed {r['seed']}: {r['message']}" for r in failed
        ]
        lines.append("")
    if _plot(records, problems, samplers, out / "hypervolume.png"):
        lines += ["![hypervolume](hypervolume.png)", ""]
    atomic_write_text(out / "README.md", "\n".join(lines))
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and write the report; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = run_argument_parser(
        "python -m benchmarks.multi_objective",
        "Multi-objective benchmark (hypervolume).",
        problems=list(PROBLEMS),
        samplers=list(SAMPLERS),
    )
    args = run_arguments(
        parser,
        argv,
        seeds=10,
        trials=100,
        out=DEFAULT_OUT,
        out_label="benchmarks/results/multi_objective",
    )
    specs = [
        StudyRunSpec(problem, sampler, seed, args.trials)
        for problem in args.problems
        for seed in range(args.seeds)
        for sampler in args.samplers
    ]
    records = run_cached(
        specs, args.runs, args.workers, run_one, _describe, is_complete=_is_complete
    )
    write_report(records, args.problems, args.samplers, args.trials, args.out, argv)
    print(f"Report: {args.out / 'README.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
