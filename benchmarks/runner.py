"""The runner: every cell (problem x sampler x seed) in a worker process, cached, resumable.

A cell's record is one JSON file, ``<out>/runs/<cell>.json`` (git ignores ``runs/``), written
as soon as the cell finishes; a second invocation runs only the cells without a record, so an
interrupted benchmark resumes where it stopped. Cells run in a pool of spawned processes, one
thread each (a fresh process per cell where studies are preloaded, so that each cell's
memory and first ask are its own); progress goes to stderr.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import resource
import sys
import time
import traceback
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import optuna

__all__ = ["Cell", "default_workers", "load_records", "run_cell", "run_cells"]

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass(frozen=True)
class Cell:
    """One study: ``problem`` optimised by ``sampler`` with ``seed`` for ``trials`` trials, on
    ``jobs`` threads of ``study.optimize``, after ``preload`` random finished trials; or, with
    ``batch`` B, in ``trials / B`` synchronous rounds of B trials (see :func:`_rounds`), their
    trials told all at once or, ``interleaved``, each told just before the next ask."""

    problem: str
    sampler: str
    seed: int
    trials: int
    jobs: int = 1
    preload: int = 0
    batch: int = 0
    interleaved: bool = False

    @property
    def filename(self) -> str:
        extra = (f"__j{self.jobs}" if self.jobs > 1 else "") + (
            f"__p{self.preload}" if self.preload else ""
        )
        extra += f"__b{self.batch}" if self.batch else ""
        extra += "i" if self.batch and self.interleaved else ""
        return f"{self.problem}__{self.sampler}__s{self.seed}__t{self.trials}{extra}.json"

    @property
    def label(self) -> str:
        return f"{self.problem} / {self.sampler} / seed {self.seed}"


def default_workers() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def _quiet() -> None:
    for variable in _THREAD_VARIABLES:
        os.environ[variable] = "1"
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore")


def _random_params(space: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name, dist in space.items():
        if isinstance(dist, optuna.distributions.CategoricalDistribution):
            params[name] = dist.choices[int(rng.integers(len(dist.choices)))]
        elif isinstance(dist, optuna.distributions.IntDistribution):
            params[name] = int(rng.integers(dist.low, dist.high + 1))
        else:
            params[name] = float(rng.uniform(dist.low, dist.high))
    return params


def _preload(study: optuna.Study, problem: Any, count: int, seed: int) -> None:
    """``count`` random finished trials (a long study to ask into), values from the objective."""
    if problem.space is None:
        raise ValueError(f"{problem.name} has no flat space: it cannot be preloaded")
    rng = np.random.default_rng([seed, count])
    trials = []
    for _ in range(count):
        params = _random_params(problem.space, rng)
        value = problem.objective(optuna.trial.FixedTrial(params))
        trials.append(
            optuna.trial.create_trial(params=params, distributions=problem.space, value=value)
        )
    study.add_trials(trials)


def _optimize(study: optuna.Study, problem: Any, cell: Cell, crash: type) -> list[float]:
    """Optimise; per trial, the seconds spent outside the problem's function: the sampler's
    proposal and Optuna's bookkeeping (with several workers, the time between trials' ends)."""
    from benchmarks.problems import EVALUATION_SECONDS

    EVALUATION_SECONDS.clear()
    ends: list[tuple[float, int]] = []
    start = time.perf_counter()
    study.optimize(
        problem.objective,
        n_trials=cell.trials,
        n_jobs=cell.jobs,
        catch=(crash,),
        callbacks=[lambda study, trial: ends.append((time.perf_counter(), trial.number))],
    )
    previous = [start, *(end for end, _ in ends[:-1])]
    return [
        end - before - EVALUATION_SECONDS.get(number, 0.0)
        for (end, number), before in zip(ends, previous, strict=True)
    ]


def _rounds(study: optuna.Study, problem: Any, cell: Cell, crash: type) -> list[float]:
    """Rounds of ``cell.batch`` trials, each asked and evaluated in turn and all told at the
    round's end: each ask sees the round's earlier trials running with their parameters, as
    B processes that ask at once on one storage do. ``cell.interleaved``: from the second
    round on, each of the last round's trials is told just before the ask that takes its
    slot, as Ray Tune's driver does (one event, then the searcher fills the free slot). Per
    trial, the sampler's seconds (ask, suggestions and tell)."""
    from benchmarks.problems import EVALUATION_SECONDS

    EVALUATION_SECONDS.clear()
    seconds: list[float] = []
    previous: list[tuple] = []

    def tell(trial, value, state, spent) -> None:
        start = time.perf_counter()
        study.tell(trial, value, state=state)
        seconds.append(spent + time.perf_counter() - start)

    for _ in range(cell.trials // cell.batch):
        round_ = []
        for slot in range(cell.batch):
            if cell.interleaved and previous:
                tell(*previous[slot])
            start = time.perf_counter()
            trial = study.ask()
            try:
                value, state = problem.objective(trial), None
            except crash:
                value, state = None, optuna.trial.TrialState.FAIL
            spent = time.perf_counter() - start - EVALUATION_SECONDS.get(trial.number, 0.0)
            round_.append((trial, value, state, spent))
        if cell.interleaved:
            previous = round_
        else:
            for told in round_:
                tell(*told)
    for told in previous:
        tell(*told)
    return seconds


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run one cell; its record (``status`` ``"ok"``, or ``"error"`` with the traceback)."""
    from benchmarks.problems import CrashError, best_so_far, feasible, get_problem
    from benchmarks.samplers import make_sampler

    _quiet()
    record: dict[str, Any] = {**asdict(cell)}
    try:
        problem = get_problem(cell.problem)
        sampler = make_sampler(cell.sampler, cell.seed)
        start = time.perf_counter()
        if problem.drive is not None:
            study, trial_seconds = problem.drive(sampler, cell.seed, cell.trials)
        else:
            study = optuna.create_study(directions=list(problem.directions), sampler=sampler)
            study.set_user_attr("seed", cell.seed)
            if cell.preload:
                _preload(study, problem, cell.preload, cell.seed)
            run = _rounds if cell.batch else _optimize
            trial_seconds = run(study, problem, cell, CrashError)
        seconds = time.perf_counter() - start
        trials = study.trials[cell.preload :]
        curve, final = (problem.judge or best_so_far)(study)
        configurations = [json.dumps(t.params, sort_keys=True, default=str) for t in trials]
        record.update(
            status="ok",
            kind=problem.kind,
            curve=curve[cell.preload :],
            final=None if math.isinf(final) else final,
            seconds=seconds,
            trial_seconds=trial_seconds,
            failed=sum(t.state == optuna.trial.TrialState.FAIL for t in trials),
            infeasible=sum(not feasible(t) for t in trials),
            duplicates=len(configurations) - len(set(configurations)),
            max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        )
    except Exception as error:  # a sampler that crashes is a result, not the end of the run
        record.update(status="error", message=f"{type(error).__name__}: {error}")
        record["traceback"] = traceback.format_exc(limit=8)
    return record


def _load(path: Path, cell: Cell) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    defaults = {f.name: f.default for f in fields(Cell)}  # records from before a field
    same = all(record.get(key, defaults[key]) == value for key, value in asdict(cell).items())
    return record if same and record.get("status") == "ok" else None


def load_records(cells: Sequence[Cell], runs: Path) -> list[dict[str, Any]]:
    """The cached records of ``cells`` that exist (for a report without running)."""
    return [r for cell in cells if (r := _load(runs / cell.filename, cell)) is not None]


def _write(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    os.replace(temporary, path)


def run_cells(cells: Sequence[Cell], runs: Path, workers: int) -> list[dict[str, Any]]:
    """Run every cell without a cached record (``workers`` processes); all records, in order.

    Raises
    ------
    ValueError
        If ``workers`` is below 1.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    records = {cell: _load(runs / cell.filename, cell) for cell in cells}
    pending = [cell for cell in cells if records[cell] is None]
    print(
        f"{len(cells)} cells: {len(cells) - len(pending)} cached, {len(pending)} to run "
        f"on {workers} worker(s)",
        file=sys.stderr,
        flush=True,
    )
    for variable in _THREAD_VARIABLES:  # inherited by the spawned workers
        os.environ[variable] = "1"
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    # A fresh process per cell where studies are preloaded (their first ask and memory are
    # measured) or a variant patches the process; elsewhere workers are reused, which saves a
    # second of imports per cell.
    from benchmarks.samplers import SAMPLERS

    isolated = any(cell.preload or SAMPLERS[cell.sampler].patches_process for cell in pending)
    fresh = 1 if isolated else None
    with ProcessPoolExecutor(workers, mp_context=context, max_tasks_per_child=fresh) as pool:
        futures = {pool.submit(run_cell, cell): cell for cell in pending}
        try:
            for done, future in enumerate(as_completed(futures), 1):
                cell = futures[future]
                try:
                    record = future.result()
                except Exception as error:  # the worker died (out of memory, say)
                    record = {**asdict(cell), "status": "error", "message": repr(error)}
                records[cell] = record
                if record["status"] == "ok":
                    _write(runs / cell.filename, record)
                    what = f"final {record['final']} in {record['seconds']:.1f} s"
                else:
                    what = f"ERROR {record['message']}"
                elapsed = time.perf_counter() - start
                left = elapsed / done * (len(pending) - done)
                print(
                    f"[{done}/{len(pending)} {elapsed:.0f} s, about {math.ceil(left)} s left] "
                    f"{cell.label}: {what}",
                    file=sys.stderr,
                    flush=True,
                )
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return [records[cell] for cell in cells if records[cell] is not None]
