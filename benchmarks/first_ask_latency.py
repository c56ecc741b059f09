"""First-ask latency of a fresh process on a large mixed-space study, BORE against TPE.

Usage (from the repository root)::

    python -m benchmarks.first_ask_latency                 # N = 10 000, bore-xgb and tpe
    python -m benchmarks.first_ask_latency --sizes 200 --repeats 1 --out /tmp/first_ask_smoke

:mod:`benchmarks.latency` measures the steady state (repeated asks in one warm process);
this measures what the latency issue reports: the first ask of a new process, where lazy
imports, compilation and caches built on first use are paid.

For every N (``--sizes``, default 10 000), N COMPLETE trials on a 10-D mixed space
(:data:`MIXED_SPACE`: four uniform and two log-scaled floats, an integer and a stepped
integer, two categoricals; uniform random parameters, values from the cheap
:func:`mixed_value`) are written once with ``study.add_trials`` into a
:class:`~optuna.storages.JournalStorage` file in a temporary folder. (SQLite through the
public ``add_trials`` commits every parameter separately: minutes for 10 000 trials, see
:mod:`benchmarks.storage_latency`; the journal takes one append a trial.)

Then, ``--repeats`` times (default 3), every sampler (default ``bore-xgb tpe``; any name of
:func:`benchmarks.harness.make_sampler`, e.g. ``bore-rf bore-mlp gp``) runs in a fresh
``python -c`` subprocess on its own copy of that file, in the same order in every repeat
(A B A B ...), so a busy machine slows all samplers alike. The child times, with
``time.perf_counter`` from its first statement (interpreter start-up excluded):

import
    ``numpy``, ``optuna``, this module (and ``bore_samplers`` for our samplers);
build sampler
    :func:`benchmarks.harness.make_sampler`;
load
    opening the journal (which replays it), ``optuna.load_study`` and reading the trials;
    by default (``--storage memory``) also copying them into an in-memory study with
    ``add_trials``, on which the asks run;
first ask
    the first ``study.ask()`` followed by the 10 ``trial.suggest_*`` calls; the report also
    gives the part of it that Python's cyclic garbage collector ran (a full collection after
    loading 10 000 trials scans some 400 000 objects, and whichever ask allocates enough first
    pays for it);
steady
    the median of the next ``--asks`` (default 5) suggestions in the same process.

Storage: Optuna's journal file fsyncs every append, about 12 a suggestion (new trial, 10
parameters, state); in a smoke run on a busy 2-core VM that added about 0.1 s to every ask
of either sampler, enough to dominate the steady state and shrink the ratio to TPE. So by
default the asks run on the in-memory copy (the README's steady-state numbers are
in-memory too); ``--storage journal`` runs them on the journal file, writes included.

Every suggestion is told ``FAIL`` (untimed), as in :mod:`benchmarks.latency`, so all see
the same N completed trials; the private copies keep the template file unchanged. The
report gives, per N and sampler, the medians over the repeats of each phase (the steady
value is the median of the per-process medians), every run's first ask, the ratio to TPE's
first ask, and whether the targets of the latency issue are met: first ask at most
:data:`TARGET_FIRST_RATIO` times TPE's and at most :data:`TARGET_FIRST_S` seconds, steady
state at most :data:`TARGET_STEADY_S` seconds. GP is skipped above ``--gp-max-n``; a
sampler whose process fails or exceeds ``--child-timeout`` is not run again at that N.

Threads: unlike :mod:`benchmarks.latency` (one thread), no thread limit is set by default,
so every sampler runs with its libraries' defaults, as in a user's process: our samplers
pin XGBoost, BLAS/OpenMP and torch to one thread themselves; TPE uses NumPy's defaults.
``--threads K`` sets ``OMP_NUM_THREADS`` and friends to K for the children (``--threads 1``
matches :mod:`benchmarks.latency`). The load average before and after is in the header.
Writes ``<out>/first_ask_latency.md`` and ``<out>/first_ask_latency.json``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from benchmarks.harness import (
    OPTUNA_SAMPLERS,
    atomic_write_text,
    configure_quiet_logging,
    environment_lines,
    limit_threads,
    load_average,
    make_sampler,
    markdown_table,
    warn_unavailable_samplers,
    write_json,
)
from benchmarks.problems import suggest_params

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
DEFAULT_SAMPLERS: tuple[str, ...] = ("bore-xgb", "tpe")
#: The 10-D mixed space.
MIXED_SPACE: dict[str, BaseDistribution] = {
    **{f"x{i}": FloatDistribution(-5.0, 5.0) for i in range(4)},
    "lr": FloatDistribution(1e-5, 1e-1, log=True),
    "scale": FloatDistribution(1e-3, 1e3, log=True),
    "width": IntDistribution(1, 64),
    "steps": IntDistribution(0, 100, step=5),
    "activation": CategoricalDistribution(("relu", "tanh", "gelu")),
    "optimizer": CategoricalDistribution(("adam", "sgd", "rmsprop", "adagrad", "lbfgs")),
}
#: Targets of the latency issue: first ask <= 2x TPE's and <= 1 s, steady state <= 0.25 s.
TARGET_FIRST_RATIO = 2.0
TARGET_FIRST_S = 1.0
TARGET_STEADY_S = 0.25
STUDY_NAME = "first-ask-latency"
_REPO_ROOT = Path(__file__).resolve().parent.parent
_OPTUNA_ONLY = ("tpe", "gp", "random")  # samplers that need no ``bore_samplers`` import


def _format_s(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds):
        return "–"
    return f"{1e3 * seconds:.1f} ms" if seconds < 1.0 else f"{seconds:.2f} s"


def _timed_suggestion(study: optuna.Study) -> float:
    """Seconds of ``study.ask()`` and the suggestions of :data:`MIXED_SPACE`; told FAIL."""
    start = time.perf_counter()
    trial = study.ask()
    suggest_params(trial, MIXED_SPACE)
    elapsed = time.perf_counter() - start
    study.tell(trial, state=optuna.trial.TrialState.FAIL)
    return elapsed


def mixed_value(params: Mapping[str, Any]) -> float:
    """Cheap objective on :data:`MIXED_SPACE` (minimum 0 at an interior point).

    Parameters
    ----------
    params : Mapping[str, Any]
        One value per parameter of :data:`MIXED_SPACE`.

    Returns
    -------
    float
        Sphere in the uniform floats plus squared distances of the log floats (in decades)
        and integers (scaled) from their optima, plus an offset per category.
    """
    value = sum(float(params[f"x{i}"]) ** 2 for i in range(4))
    value += (math.log10(params["lr"]) + 3.0) ** 2 + math.log10(params["scale"]) ** 2
    value += ((params["width"] - 32) / 16) ** 2 + ((params["steps"] - 50) / 25) ** 2
    value += 0.5 * MIXED_SPACE["activation"].choices.index(params["activation"])
    value += 0.25 * MIXED_SPACE["optimizer"].choices.index(params["optimizer"])
    return float(value)


def make_mixed_trials(n: int, seed: int) -> list[optuna.trial.FrozenTrial]:
    """``n`` completed trials with uniform random parameters on :data:`MIXED_SPACE`.

    Log-scaled floats are drawn log-uniformly; values come from :func:`mixed_value`.

    Parameters
    ----------
    n : int
        Number of trials.
    seed : int
        Seed of the parameter generator.

    Returns
    -------
    list[optuna.trial.FrozenTrial]
        Trials ready for ``study.add_trials``.
    """
    rng = np.random.default_rng(seed)
    columns: dict[str, list[Any]] = {}
    for name, dist in MIXED_SPACE.items():
        if isinstance(dist, FloatDistribution) and dist.log:
            draws = np.exp(rng.uniform(math.log(dist.low), math.log(dist.high), n))
            columns[name] = np.clip(draws, dist.low, dist.high).tolist()
        elif isinstance(dist, FloatDistribution):
            columns[name] = rng.uniform(dist.low, dist.high, n).tolist()
        elif isinstance(dist, IntDistribution):
            grid = np.arange(dist.low, dist.high + 1, dist.step)
            columns[name] = [int(v) for v in rng.choice(grid, n)]
        elif isinstance(dist, CategoricalDistribution):
            columns[name] = [dist.choices[i] for i in rng.integers(len(dist.choices), size=n)]
        else:  # pragma: no cover - MIXED_SPACE has only these
            raise TypeError(f"unsupported distribution for {name!r}: {dist!r}")
    trials = []
    for i in range(n):
        params = {name: column[i] for name, column in columns.items()}
        trials.append(
            optuna.trial.create_trial(
                params=params, distributions=MIXED_SPACE, value=mixed_value(params)
            )
        )
    return trials


def write_journal_study(path: Path, trials: Sequence[optuna.trial.FrozenTrial]) -> None:
    """Create study :data:`STUDY_NAME` in a new journal file and add ``trials`` to it.

    Parameters
    ----------
    path : pathlib.Path
        Journal file to create.
    trials : Sequence[optuna.trial.FrozenTrial]
        Finished trials, written with ``study.add_trials``.
    """
    storage = JournalStorage(JournalFileBackend(str(path)))
    study = optuna.create_study(storage=storage, study_name=STUDY_NAME, direction="minimize")
    study.add_trials(trials)


@dataclass
class FirstAskRun:
    """One fresh process: its phases in seconds (``nan`` and ``error`` when it failed)."""

    sampler: str
    n_trials: int
    repeat: int
    seed: int
    loaded_trials: int = 0
    import_s: float = math.nan
    sampler_s: float = math.nan
    load_s: float = math.nan
    first_ask_s: float = math.nan
    first_ask_gc_s: float = math.nan
    steady_s: list[float] = field(default_factory=list)
    process_s: float = math.nan
    error: str = ""


def first_ask_child(config: Mapping[str, Any], start: float) -> dict[str, Any]:
    """Body of a fresh measuring process: load the study, time its first and next asks.

    Parameters
    ----------
    config : Mapping[str, Any]
        ``journal`` (path), ``sampler``, ``seed``, ``asks`` and ``storage`` (``"journal"``
        or ``"memory"``).
    start : float
        ``time.perf_counter()`` at the child's first statement, before its imports.

    Returns
    -------
    dict[str, Any]
        The fields of :class:`FirstAskRun` measured here.
    """
    if config["sampler"] not in _OPTUNA_ONLY:
        importlib.import_module("bore_samplers")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.simplefilter("ignore")
    imported = time.perf_counter()
    sampler = make_sampler(config["sampler"], config["seed"])
    built = time.perf_counter()
    storage = JournalStorage(JournalFileBackend(config["journal"]))
    study = optuna.load_study(study_name=STUDY_NAME, storage=storage, sampler=sampler)
    trials = study.get_trials(deepcopy=False)
    if config["storage"] == "memory":
        study = optuna.create_study(direction="minimize", sampler=sampler)
        study.add_trials(trials)
    loaded = time.perf_counter()
    with _GarbageCollectionTimer() as collections:
        first = _timed_suggestion(study)
    steady = [_timed_suggestion(study) for _ in range(config["asks"])]
    return {
        "loaded_trials": len(trials),
        "import_s": imported - start,
        "sampler_s": built - imported,
        "load_s": loaded - built,
        "first_ask_s": first,
        "first_ask_gc_s": collections.seconds,
        "steady_s": steady,
    }


class _GarbageCollectionTimer:
    """Seconds Python's cyclic garbage collector ran inside a ``with`` block (``gc.callbacks``).

    A full collection scans every tracked object, about 0.2 s after a 10 000-trial study is
    loaded; it runs in whichever ask allocates enough first, so the report shows it apart.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def _callback(self, phase: str, info: Mapping[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started

    def __enter__(self) -> _GarbageCollectionTimer:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc_info: object) -> None:
        gc.callbacks.remove(self._callback)


_CHILD_CODE = (
    "import time; _start = time.perf_counter()\n"
    "import json, sys\n"
    "from benchmarks.first_ask_latency import first_ask_child\n"
    "print(json.dumps(first_ask_child(json.loads(sys.argv[1]), _start)))\n"
)


def run_fresh_process(
    template: Path,
    workdir: Path,
    sampler: str,
    n_trials: int,
    repeat: int,
    seed: int,
    asks: int,
    storage: str,
    timeout: float,
) -> FirstAskRun:
    """Run :func:`first_ask_child` in a new interpreter on a private copy of ``template``.

    Parameters
    ----------
    template : pathlib.Path
        Journal file holding the study (left unchanged).
    workdir : pathlib.Path
        Folder for the copy, removed afterwards.
    sampler : str
        A name accepted by :func:`benchmarks.harness.make_sampler`.
    n_trials : int
        Finished trials in the study (for the record).
    repeat : int
        Index of the repeat (for the record).
    seed : int
        Sampler seed.
    asks : int
        Suggestions timed after the first one.
    storage : str
        ``"journal"`` or ``"memory"``, see :func:`first_ask_child`.
    timeout : float
        Seconds before the child is killed and the run recorded as failed.

    Returns
    -------
    FirstAskRun
        The child's timings, ``process_s`` (whole subprocess, start-up included) or an error.
    """
    run = FirstAskRun(sampler, n_trials, repeat, seed)
    journal = workdir / f"run-{sampler}-{repeat}.log"
    shutil.copyfile(template, journal)
    config = {
        "journal": str(journal),
        "sampler": sampler,
        "seed": seed,
        "asks": asks,
        "storage": storage,
    }
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD_CODE, json.dumps(config)],
            cwd=_REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        run.error = f"timed out after {timeout:g} s"
        return run
    finally:
        for path in workdir.glob(f"{journal.name}*"):  # the copy and any lock file
            path.unlink(missing_ok=True)
    run.process_s = time.perf_counter() - start
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = " ".join(done.stderr.strip().splitlines()[-3:])
        run.error = f"exit status {done.returncode}: {tail}"[-500:]
        return run
    for key, value in json.loads(lines[-1]).items():
        setattr(run, key, value)
    return run


@dataclass
class FirstAskSummary:
    """Medians over the fresh processes of one sampler at one N, with the target checks."""

    sampler: str
    n_trials: int
    runs: int
    first_ask_s: float | None
    first_ask_gc_s: float | None
    steady_s: float | None
    import_s: float | None
    sampler_s: float | None
    load_s: float | None
    process_s: float | None
    first_ask_all_s: list[float]
    ratio_to_tpe: float | None
    first_within_ratio: bool | None
    first_within_s: bool | None
    steady_within_s: bool | None
    note: str = ""


def _median(values: Sequence[float]) -> float | None:
    finite = [v for v in values if not math.isnan(v)]
    return statistics.median(finite) if finite else None


def summarize_first_ask(
    runs: Sequence[FirstAskRun], sizes: Sequence[int], samplers: Sequence[str]
) -> list[FirstAskSummary]:
    """Median per (N, sampler) over successful runs, the ratio to TPE and the target checks.

    Parameters
    ----------
    runs : Sequence[FirstAskRun]
        All runs (failed ones carry ``error``; they only add a note).
    sizes : Sequence[int]
        Numbers of finished trials, in report order.
    samplers : Sequence[str]
        Samplers, in report order.

    Returns
    -------
    list[FirstAskSummary]
        One entry per (N, sampler), N-major. The steady value is the median of the
        per-process medians; ``ratio_to_tpe`` is ``None`` without a TPE measurement and
        ``first_within_ratio`` is ``None`` for TPE itself.
    """
    summaries = []
    for n in sizes:
        tpe = _median([r.first_ask_s for r in runs if r.n_trials == n and r.sampler == "tpe"])
        for sampler in samplers:
            mine = [r for r in runs if r.n_trials == n and r.sampler == sampler]
            good = [r for r in mine if not r.error]
            errors = list(dict.fromkeys(r.error for r in mine if r.error))
            first = _median([r.first_ask_s for r in good])
            steady = _median([statistics.median(r.steady_s) for r in good if r.steady_s])
            ratio = first / tpe if first is not None and tpe else None
            summaries.append(
                FirstAskSummary(
                    sampler=sampler,
                    n_trials=n,
                    runs=len(good),
                    first_ask_s=first,
                    first_ask_gc_s=_median([r.first_ask_gc_s for r in good]),
                    steady_s=steady,
                    import_s=_median([r.import_s for r in good]),
                    sampler_s=_median([r.sampler_s for r in good]),
                    load_s=_median([r.load_s for r in good]),
                    process_s=_median([r.process_s for r in good]),
                    first_ask_all_s=[r.first_ask_s for r in good],
                    ratio_to_tpe=ratio,
                    first_within_ratio=(
                        None if ratio is None or sampler == "tpe" else ratio <= TARGET_FIRST_RATIO
                    ),
                    first_within_s=None if first is None else first <= TARGET_FIRST_S,
                    steady_within_s=None if steady is None else steady <= TARGET_STEADY_S,
                    note="; ".join(errors) if errors else ("" if mine else "not run"),
                )
            )
    return summaries


def _verdict(ok: bool | None) -> str:
    return "–" if ok is None else ("yes" if ok else "**NO**")


def _verdict_line(s: FirstAskSummary, tpe_first: float | None) -> str:
    head = f"- {s.sampler}, N = {s.n_trials}: "
    if s.first_ask_s is None:
        return head + f"no measurement ({s.note or 'not run'})."
    checks = []
    if s.sampler != "tpe":
        if s.ratio_to_tpe is None:
            checks.append(f"≤ {TARGET_FIRST_RATIO:g}× TPE's first ask: not measured (no TPE)")
        else:
            checks.append(
                f"first ask {s.ratio_to_tpe:.2f}× TPE's {_format_s(tpe_first)} "
                + ("meets" if s.first_within_ratio else "MISSES")
                + f" ≤ {TARGET_FIRST_RATIO:g}× TPE"
            )
    checks.append(
        f"first ask {_format_s(s.first_ask_s)} "
        + ("meets" if s.first_within_s else "MISSES")
        + f" ≤ {TARGET_FIRST_S:g} s"
    )
    if s.steady_s is not None:
        checks.append(
            f"steady {_format_s(s.steady_s)} "
            + ("meets" if s.steady_within_s else "MISSES")
            + f" ≤ {TARGET_STEADY_S:g} s"
        )
    met = [s.first_within_ratio, s.first_within_s, s.steady_within_s]
    overall = "all targets met" if all(ok is not False for ok in met) else "TARGETS MISSED"
    return head + "; ".join(checks) + f". {overall}."


def write_first_ask_report(
    out: Path,
    summaries: Sequence[FirstAskSummary],
    runs: Sequence[FirstAskRun],
    header_lines: Sequence[str],
    settings: Mapping[str, Any],
) -> Path:
    """Write ``<out>/first_ask_latency.md`` (medians, targets) and ``.json`` (also raw runs).

    Parameters
    ----------
    out : pathlib.Path
        Output folder.
    summaries : Sequence[FirstAskSummary]
        From :func:`summarize_first_ask`.
    runs : Sequence[FirstAskRun]
        Every fresh process, for the JSON file.
    header_lines : Sequence[str]
        Markdown lines for the top of the report.
    settings : Mapping[str, Any]
        Command-line settings, for the JSON file.

    Returns
    -------
    pathlib.Path
        The path of ``first_ask_latency.md``.
    """
    tpe_first = {s.n_trials: s.first_ask_s for s in summaries if s.sampler == "tpe"}
    rows = [
        [
            s.n_trials,
            s.sampler,
            s.runs,
            _format_s(s.import_s),
            _format_s(s.sampler_s),
            _format_s(s.load_s),
            _format_s(s.process_s),
            _format_s(s.first_ask_s),
            _format_s(s.first_ask_gc_s),
            ", ".join(_format_s(v) for v in s.first_ask_all_s) or "–",
            "–" if s.ratio_to_tpe is None else f"{s.ratio_to_tpe:.2f}",
            _format_s(s.steady_s),
            _verdict(s.first_within_ratio),
            _verdict(s.first_within_s),
            _verdict(s.steady_within_s),
            s.note,
        ]
        for s in summaries
    ]
    table = markdown_table(
        [
            "N finished trials",
            "sampler",
            "runs",
            "import",
            "build sampler",
            "load",
            "process",
            "first ask (median)",
            "of which garbage collection (median)",
            "first ask (each run)",
            "first / TPE first",
            "steady (median)",
            f"first ≤ {TARGET_FIRST_RATIO:g}× TPE",
            f"first ≤ {TARGET_FIRST_S:g} s",
            f"steady ≤ {TARGET_STEADY_S:g} s",
            "note",
        ],
        rows,
    )
    verdicts = [_verdict_line(s, tpe_first.get(s.n_trials)) for s in summaries]
    text = "\n".join(
        [
            "# First-ask latency of a fresh process\n",
            *header_lines,
            "",
            "## Targets\n",
            *verdicts,
            "",
            "## Medians over the fresh processes\n",
            "Columns: import, build sampler, load = phases before the first ask "
            "(interpreter start-up excluded); process = the whole subprocess, start-up "
            "included; first ask = ask + 10 suggest calls, garbage collection included (the "
            "next column: time Python's cyclic collector ran inside it); steady = median of the "
            "per-process medians of the next asks. See the module docstring of "
            "`benchmarks/first_ask_latency.py`.\n",
            table,
        ]
    )
    path = out / "first_ask_latency.md"
    atomic_write_text(path, text)
    write_json(
        out / "first_ask_latency.json",
        {
            "settings": dict(settings),
            "targets": {
                "first_ask_ratio_to_tpe": TARGET_FIRST_RATIO,
                "first_ask_s": TARGET_FIRST_S,
                "steady_s": TARGET_STEADY_S,
            },
            "summary": [asdict(s) for s in summaries],
            "runs": [
                {
                    k: None if isinstance(v, float) and math.isnan(v) else v
                    for k, v in asdict(r).items()
                }
                for r in runs
            ],
        },
    )
    return path


def run_first_ask(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """Build the studies, run the fresh processes, write the report.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments (see :func:`_parse_args`).
    argv : Sequence[str]
        The command-line arguments, for the report header.

    Returns
    -------
    int
        0 when the report was written.
    """
    if args.threads is not None:
        limit_threads(args.threads)  # environment variables, inherited by the children
    configure_quiet_logging()
    load_before = load_average()
    unavailable = set(warn_unavailable_samplers(args.samplers))
    runs: list[FirstAskRun] = []
    notes: dict[tuple[int, str], str] = {}
    with tempfile.TemporaryDirectory(prefix="bore-first-ask-") as tmp:
        workdir = Path(tmp)
        for n in args.sizes:
            start = time.perf_counter()
            template = workdir / f"study-{n}.log"
            write_journal_study(template, make_mixed_trials(n, args.seed))
            print(f"N={n:>6} study written in {time.perf_counter() - start:.1f} s", flush=True)
            active = []
            for sampler in args.samplers:
                if sampler in unavailable:
                    notes[(n, sampler)] = "unavailable"
                elif sampler == "gp" and n > args.gp_max_n:
                    notes[(n, sampler)] = f"O(N^3), N > {args.gp_max_n}"
                else:
                    active.append(sampler)
            failed: set[str] = set()
            for repeat in range(args.repeats):
                for sampler in [s for s in active if s not in failed]:
                    run = run_fresh_process(
                        template,
                        workdir,
                        sampler,
                        n,
                        repeat,
                        args.seed + repeat,
                        args.asks,
                        args.storage,
                        args.child_timeout,
                    )
                    runs.append(run)
                    if run.error:
                        failed.add(sampler)  # do not repeat a crash or a time-out
                        print(f"N={n:>6} {sampler:<9} #{repeat}: {run.error}", flush=True)
                        continue
                    steady = statistics.median(run.steady_s) if run.steady_s else math.nan
                    print(
                        f"N={n:>6} {sampler:<9} #{repeat}: first ask "
                        f"{_format_s(run.first_ask_s)}, steady {_format_s(steady)} "
                        f"(import {_format_s(run.import_s)}, load {_format_s(run.load_s)}, "
                        f"process {_format_s(run.process_s)})",
                        flush=True,
                    )
    summaries = summarize_first_ask(runs, args.sizes, args.samplers)
    for s in summaries:
        if (s.n_trials, s.sampler) in notes:
            s.note = notes[(s.n_trials, s.sampler)]
    if args.threads is None:
        inherited = os.environ.get("OMP_NUM_THREADS")
        threads = "library defaults, no limit set here" + (
            f" (OMP_NUM_THREADS={inherited} inherited)" if inherited else ""
        )
    else:
        threads = f"{args.threads} (OMP_NUM_THREADS and friends)"
    asks_on = "an in-memory copy of the trials" if args.storage == "memory" else "the journal"
    header = [
        *environment_lines("benchmarks.first_ask_latency", argv),
        "- 10-D mixed space (4 uniform + 2 log floats, an int, a stepped int, "
        "2 categoricals); N COMPLETE trials with random parameters written once per N to a "
        "journal file with `study.add_trials`; each sampler in a fresh `python -c` process "
        f"that loads a copy of it; asks on {asks_on}; {args.repeats} repeat(s) in A B A B "
        f"order; steady = next {args.asks} asks, each told FAIL; threads: {threads}; "
        f"seed {args.seed} (trials), {args.seed} + repeat (samplers).",
        f"- Load average (1, 5, 15 min) at start: {load_before}; at end: {load_average()}; "
        f"nproc = {os.cpu_count()}.",
    ]
    settings = {
        key: (str(value) if isinstance(value, Path) else value)
        for key, value in vars(args).items()
    }
    path = write_first_ask_report(args.out, summaries, runs, header, settings)
    tpe_first = {s.n_trials: s.first_ask_s for s in summaries if s.sampler == "tpe"}
    for s in summaries:
        print(_verdict_line(s, tpe_first.get(s.n_trials)), flush=True)
    print(f"wrote {path}", flush=True)
    return 0


def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.first_ask_latency",
        description="Latency of the first ask of fresh processes on a large mixed-space "
        "study, against TPE's, and of the asks that follow.",
    )
    parser.add_argument(
        "--sizes",
        nargs="+",
        type=int,
        default=[10000],
        help="numbers of trials N (default: 10000)",
    )
    parser.add_argument(
        "--samplers",
        nargs="+",
        default=list(DEFAULT_SAMPLERS),
        choices=list(OPTUNA_SAMPLERS),
        metavar="SAMPLER",
        help=f"samplers (default: {' '.join(DEFAULT_SAMPLERS)}); include tpe for the ratios",
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="fresh processes per sampler and N (default: 3)"
    )
    parser.add_argument(
        "--asks", type=int, default=5, help="steady-state asks after the first (default: 5)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="thread limit for the fresh processes (default: none, the libraries' defaults)",
    )
    parser.add_argument(
        "--storage",
        choices=("memory", "journal"),
        default="memory",
        help="storage during the asks: an in-memory copy of the loaded trials, or the journal "
        "file itself, fsync per write (default: memory)",
    )
    parser.add_argument(
        "--gp-max-n", type=int, default=1000, help="largest N for the GP sampler (default: 1000)"
    )
    parser.add_argument(
        "--child-timeout",
        type=float,
        default=600.0,
        help="seconds before a fresh process is killed (default: 600)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the trials; samplers get seed + repeat"
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="output folder (default: benchmarks/results)"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.asks < 1 or min(args.sizes) < 1:
        parser.error("--repeats, --asks and --sizes must be positive")
    if args.child_timeout <= 0 or (args.threads is not None and args.threads < 1):
        parser.error("--child-timeout and --threads must be positive")
    args.sizes = sorted(set(args.sizes))
    args.samplers = list(dict.fromkeys(args.samplers))
    return args


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
    return run_first_ask(_parse_args(argv), argv)


if __name__ == "__main__":
    sys.exit(main())
