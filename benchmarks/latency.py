"""Suggestion latency of BORE, TPE and GP as the number of finished trials grows.

Usage (from the repository root)::

    python -m benchmarks.latency                          # N = 100, 1000, 10000
    python -m benchmarks.latency --sizes 100 --repeats 3 --out /tmp/latency_smoke

For every N, N completed trials with uniform random parameters on a 10-D float space
``[-5, 5]^10`` and sphere values are built once with :func:`optuna.trial.create_trial` and
injected into a fresh in-memory study per sampler with ``study.add_trials``. One
suggestion = ``study.ask()`` followed by ``trial.suggest_float`` for all 10 parameters (the
samplers do their work there); it is timed, then the trial is told as ``FAIL`` so the next
suggestion sees the same N completed trials (BORE counts a failed trial as "bad", a
negligible change for N >= 100). The first suggestion per (sampler, N) is an untimed
warm-up; the median over ``--repeats`` timed suggestions is reported.

GP is O(N^3): it is not run above ``--gp-max-n`` (default 1000), and any sampler whose
warm-up suggestion takes longer than ``--time-limit`` seconds is reported with that single
time and not run at larger N. Everything runs in this process with one BLAS/OpenMP/torch
thread. Writes ``<out>/latency.md`` and ``<out>/latency.json``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import optuna
from optuna.distributions import FloatDistribution

from benchmarks.harness import (
    BORE_CLASSIFIERS,
    OPTUNA_SAMPLERS,
    atomic_write_text,
    configure_quiet_logging,
    environment_lines,
    limit_threads,
    make_sampler,
    markdown_table,
    warn_unavailable_samplers,
    write_json,
)
from benchmarks.problems import suggest_params

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
DEFAULT_SAMPLERS: tuple[str, ...] = (*BORE_CLASSIFIERS, "tpe", "gp")
DIM = 10
SPACE = {f"x{i}": FloatDistribution(-5.0, 5.0) for i in range(DIM)}


@dataclass
class Measurement:
    """Latency of one sampler at one number of finished trials."""

    sampler: str
    n_trials: int
    times_s: list[float] = field(default_factory=list)
    warmup_s: float | None = None
    note: str = ""

    @property
    def median_s(self) -> float:
        """Median of the timed suggestions (the warm-up if it was the only one)."""
        if self.times_s:
            return statistics.median(self.times_s)
        return math.nan if self.warmup_s is None else self.warmup_s


def make_trials(n: int, seed: int) -> list[optuna.trial.FrozenTrial]:
    """``n`` completed trials with uniform random parameters and sphere values.

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
    xs = rng.uniform(-5.0, 5.0, size=(n, DIM))
    return [
        optuna.trial.create_trial(
            params={f"x{i}": float(v) for i, v in enumerate(x)},
            distributions=SPACE,
            value=float(np.sum(x**2)),
        )
        for x in xs
    ]


def _timed_suggestion(study: optuna.Study) -> float:
    start = time.perf_counter()
    trial = study.ask()
    suggest_params(trial, SPACE)
    elapsed = time.perf_counter() - start
    study.tell(trial, state=optuna.trial.TrialState.FAIL)
    return elapsed


def measure(
    sampler_name: str,
    trials: Sequence[optuna.trial.FrozenTrial],
    repeats: int,
    seed: int,
    time_limit: float = math.inf,
) -> Measurement:
    """Time ``repeats`` suggestions (after a warm-up) with ``len(trials)`` finished trials.

    Parameters
    ----------
    sampler_name : str
        A name accepted by :func:`benchmarks.harness.make_sampler`.
    trials : Sequence[optuna.trial.FrozenTrial]
        Completed trials injected into the study.
    repeats : int
        Timed suggestions.
    seed : int
        Sampler seed.
    time_limit : float
        If the warm-up takes longer (seconds), return it alone, noted ``"warm-up only"``.

    Returns
    -------
    Measurement
        The warm-up and the timed suggestions, in seconds.
    """
    study = optuna.create_study(direction="minimize", sampler=make_sampler(sampler_name, seed))
    study.add_trials(trials)
    result = Measurement(sampler_name, len(trials))
    result.warmup_s = _timed_suggestion(study)
    if result.warmup_s > time_limit:
        result.note = "warm-up only"
    else:
        result.times_s = [_timed_suggestion(study) for _ in range(repeats)]
    return result


def _fmt_seconds(m: Measurement | None) -> str:
    if m is None:
        return "–"
    if math.isnan(m.median_s):
        return f"skipped ({m.note})"
    text = f"{1e3 * m.median_s:.1f} ms" if m.median_s < 1.0 else f"{m.median_s:.2f} s"
    return f"{text} ({m.note})" if m.note else text


def _ratio(num: Measurement | None, den: Measurement | None) -> str:
    if num is None or den is None or math.isnan(num.median_s) or math.isnan(den.median_s):
        return "–"
    return f"{num.median_s / den.median_s:.3g}"


def write_latency_report(
    out: Path,
    results: Sequence[Measurement],
    sizes: Sequence[int],
    samplers: Sequence[str],
    header_lines: Sequence[str],
) -> Path:
    """Write ``<out>/latency.md`` (medians and ratios) and ``<out>/latency.json`` (raw).

    Parameters
    ----------
    out : pathlib.Path
        Output folder.
    results : Sequence[Measurement]
        All measurements (including skipped ones).
    sizes : Sequence[int]
        Numbers of finished trials, in table order.
    samplers : Sequence[str]
        Samplers, in column order.
    header_lines : Sequence[str]
        Markdown lines for the top of the report.

    Returns
    -------
    pathlib.Path
        The path of ``latency.md``.
    """
    by_key = {(m.sampler, m.n_trials): m for m in results}
    median_table = markdown_table(
        ["N finished trials", *samplers],
        [[n, *(_fmt_seconds(by_key.get((s, n))) for s in samplers)] for n in sizes],
    )
    bores = [s for s in samplers if s in BORE_CLASSIFIERS]
    refs = [s for s in ("gp", "tpe") if s in samplers]
    ratio_headers = [f"{b} / {r}" for b in bores for r in refs]
    sections = [
        "# Suggestion latency\n\n" + "\n".join(header_lines) + "\n",
        "## Median time of one suggestion (ask + 10 suggest_float)\n\n" + median_table,
    ]
    if ratio_headers:
        ratio_rows = [
            [n, *(_ratio(by_key.get((b, n)), by_key.get((r, n))) for b in bores for r in refs)]
            for n in sizes
        ]
        sections.append(
            "## Ratios of medians (below 1: BORE is faster)\n\n"
            + markdown_table(["N finished trials", *ratio_headers], ratio_rows)
        )
    path = out / "latency.md"
    atomic_write_text(path, "\n".join(sections))
    write_json(out / "latency.json", {"measurements": [asdict(m) for m in results]})
    return path


def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.latency",
        description="Median suggestion latency vs number of finished trials.",
    )
    parser.add_argument(
        "--sizes", nargs="+", type=int, default=[100, 1000, 10000], help="numbers of trials N"
    )
    parser.add_argument(
        "--samplers",
        nargs="+",
        default=list(DEFAULT_SAMPLERS),
        choices=list(OPTUNA_SAMPLERS),
        metavar="SAMPLER",
        help=f"samplers (default: {' '.join(DEFAULT_SAMPLERS)})",
    )
    parser.add_argument("--repeats", type=int, default=5, help="timed suggestions per N")
    parser.add_argument(
        "--gp-max-n", type=int, default=1000, help="largest N for the GP sampler (default: 1000)"
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=60.0,
        help="seconds: a slower warm-up suggestion stops that sampler (default: 60)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of trials and samplers")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="output folder (default: benchmarks/results)"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1 or min(args.sizes) < 1:
        parser.error("--repeats and --sizes must be positive")
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
    args = _parse_args(argv)
    limit_threads()
    configure_quiet_logging()
    results: list[Measurement] = []
    stopped = dict.fromkeys(warn_unavailable_samplers(args.samplers), "unavailable")
    for n in args.sizes:
        trials = make_trials(n, args.seed)
        for sampler in args.samplers:
            if sampler in stopped:
                results.append(Measurement(sampler, n, note=stopped[sampler]))
                continue
            if sampler == "gp" and n > args.gp_max_n:
                results.append(Measurement(sampler, n, note=f"O(N^3), N > {args.gp_max_n}"))
                continue
            m = measure(sampler, trials, args.repeats, args.seed, args.time_limit)
            if not m.times_s:
                stopped[sampler] = f"warm-up > {args.time_limit:g} s at smaller N"
            results.append(m)
            print(f"N={n:>6} {sampler:<9} {_fmt_seconds(m)}", flush=True)
    header = [
        *environment_lines("benchmarks.latency", argv),
        f"- {DIM}-D float space [-5, 5]^{DIM}; N completed trials with random parameters "
        "and sphere values injected with `study.add_trials`; one warm-up, then the median "
        f"of {args.repeats} timed suggestions, each told as FAIL; one thread; "
        f"seed {args.seed}.",
    ]
    path = write_latency_report(args.out, results, args.sizes, args.samplers, header)
    print(f"wrote {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
