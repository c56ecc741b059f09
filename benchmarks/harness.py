"""Helpers shared by the benchmark scripts: thread limits, sampler factory, report utilities."""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import importlib
import json
import math
import multiprocessing
import os
import platform
import shlex
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import optuna

from bore_samplers.optimizers import ParzenSearch
from bore_samplers.proposers.portfolio import ExpectedImprovement, ProbabilityOfImprovement

__all__ = [
    "BORE_CLASSIFIERS",
    "CachedRunSpec",
    "BORE_VARIANTS",
    "GP_SAMPLERS",
    "GP_SUITE",
    "CMES_SAMPLERS",
    "CONSTRAINED_SAMPLER_NAMES",
    "OPTUNA_SAMPLERS",
    "OTHER_SAMPLERS",
    "StudyRunSpec",
    "SAMPLER_NAMES",
    "SamplerUnavailableError",
    "atomic_write_text",
    "configure_quiet_logging",
    "environment_lines",
    "format_mean_se",
    "limit_threads",
    "make_sampler",
    "markdown_table",
    "mean_se",
    "sampler_unavailable_reason",
    "warn_unavailable_samplers",
]

#: BORE sampler names on the command line -> ``classifier`` argument of ``BORESampler``.
BORE_CLASSIFIERS: dict[str, str] = {"bore-xgb": "xgboost", "bore-rf": "rf", "bore-mlp": "mlp"}
#: BORE variants of the ablation -> keyword arguments of ``BORESampler`` (besides ``seed``):
#: each classifier with the BORE paper's weighting (``bore-xgb``: the default until the
#: random forest with LFBO's EI weighting, ``bore-rf-ei``, replaced it), with LFBO's EI
#: weighting, the BORE paper's settings (γ = 1/3, 500 uniform candidates), and the MLP with
#: the paper's multi-start L-BFGS (from Parzen candidates) instead of Parzen candidates alone.
#: Every variant names its classifier and weighting, so that a change of the sampler's
#: defaults leaves the meaning of a name (and its cached runs) alone.
_XGB_PI: dict[str, Any] = {"classifier": "xgboost", "weighting": "pi"}
BORE_VARIANTS: dict[str, dict[str, Any]] = {
    **{name: {"classifier": c, "weighting": "pi"} for name, c in BORE_CLASSIFIERS.items()},
    **{f"{name}-ei": {"classifier": c, "weighting": "ei"} for name, c in BORE_CLASSIFIERS.items()},
    "bore-xgb-paper": {**_XGB_PI, "gamma": 1 / 3, "acquisition_optimizer": "random"},
    "bore-xgb-uniform": {**_XGB_PI, "acquisition_optimizer": "random"},
    "bore-xgb-gamma-third": {**_XGB_PI, "gamma": 1 / 3},
    "bore-mlp-lbfgs": {"classifier": "mlp", "weighting": "pi", "acquisition_optimizer": "lbfgs"},
    # Half the Parzen candidates drawn coordinate by coordinate, as univariate TPE draws them.
    "bore-rf-ei-x50": {
        "classifier": "rf",
        "weighting": "ei",
        "acquisition_optimizer": ParzenSearch(per_coordinate=0.5),
    },
}
_LAZY: dict[str, Any] = {"reoptimize_growth": 1.05, "reoptimize_after": 0}
_EAGER: dict[str, Any] = {"reoptimize_growth": 1.0}
#: Our GP samplers of the unconstrained benchmark -> (class name, keyword arguments).
GP_SAMPLERS: dict[str, tuple[str, dict[str, Any]]] = {
    "gp-ei": ("PortfolioSampler", {"portfolio": ["ei"]}),
    "gp-lcb": ("PortfolioSampler", {"portfolio": ["lcb"]}),
    "portfolio": ("PortfolioSampler", {}),
    # The Entropy Search Portfolio: the nominee with the largest MES information gain.
    "portfolio-esp": ("PortfolioSampler", {"selection": "entropy"}),
    "cmes-unc": ("CMESSampler", {}),  # cMES without a constraint: MES
    # Noisy EI and PI (Letham et al., 2019) in place of the plug-in incumbent: for noisy
    # objectives (benchmarks.noisy_quality), not in GP_SUITE.
    "gp-noisy-ei": ("PortfolioSampler", {"portfolio": ["noisy_ei"]}),
    "portfolio-noisy": ("PortfolioSampler", {"portfolio": ["noisy_pi", "noisy_ei", "lcb"]}),
    # Ablations, not in GP_SUITE: hyperparameters optimised again only every 5 % more data
    # from the start (-lazy), or at every proposal (-eager; the default does so below 100
    # observations and every 5 % more from there).
    "portfolio-lazy": ("PortfolioSampler", _LAZY),
    "cmes-unc-lazy": ("CMESSampler", _LAZY),
    "portfolio-eager": ("PortfolioSampler", _EAGER),
    "cmes-unc-eager": ("CMESSampler", _EAGER),
    # Ablations of the pending-trial treatment (benchmarks.parallel_quality), not in GP_SUITE:
    # PI and EI averaged over Monte Carlo fantasies of the pending outcomes instead of letting
    # the believed outcomes count for the incumbent (Kriging believer, the default).
    "portfolio-fantasies": (
        "PortfolioSampler",
        {
            "portfolio": [
                ProbabilityOfImprovement(fantasize=True),
                ExpectedImprovement(fantasize=True),
                "lcb",
            ]
        },
    ),
    "gp-ei-fantasies": ("PortfolioSampler", {"portfolio": [ExpectedImprovement(fantasize=True)]}),
}


def _ours(class_name: str, **options: Any) -> Callable[[int | None], optuna.samplers.BaseSampler]:
    def build(seed: int | None) -> optuna.samplers.BaseSampler:
        return getattr(importlib.import_module("bore_samplers"), class_name)(seed=seed, **options)

    return build


#: The other samplers the runners compare, each with its defaults: name -> seeded factory.
OTHER_SAMPLERS: dict[str, Callable[[int | None], optuna.samplers.BaseSampler]] = {
    "auto": _ours("AutoSampler"),
    "bore": _ours("BORESampler"),
    # CMESSampler's constrained-EI acquisition (Gardner et al., 2014); "cei" in run_constrained.
    "cmes-cei": _ours("CMESSampler", acquisition="cei"),
    # Optuna 5's TPE defaults are multivariate with a constant liar; group=True adds groups of
    # parameters that occur together (conditional spaces).
    "tpe-group": lambda seed: optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True),
    "cmaes": lambda seed: optuna.samplers.CmaEsSampler(seed=seed),
    "nsga2": lambda seed: optuna.samplers.NSGAIISampler(seed=seed),
}
#: Samplers that are plain Optuna samplers (built by :func:`make_sampler`).
OPTUNA_SAMPLERS: tuple[str, ...] = (*BORE_VARIANTS, *GP_SAMPLERS, "tpe", "gp", "random")
#: Every sampler the benchmark knows, in report order.
SAMPLER_NAMES: tuple[str, ...] = (*OPTUNA_SAMPLERS, "synetune-bore")
#: The samplers of the GP comparison (our GP samplers against Optuna's), in report order.
GP_SUITE: tuple[str, ...] = (
    *(name for name in GP_SAMPLERS if not name.endswith(("-lazy", "-eager", "-fantasies"))),
    "gp",
    "tpe",
    "random",
)
#: CMESSampler names of the constrained benchmark -> its keyword arguments (besides ``seed``).
CMES_SAMPLERS: dict[str, dict[str, Any]] = {
    "cmes": {"acquisition": "cmes"},
    "cmes-meanfield": {"acquisition": "cmes", "y_star_sampler": "mean_field"},
    "cei": {"acquisition": "cei"},
    "ap": {"acquisition": "ap"},
    # Ablations, not in the default list: the binary-feedback confidence p = sigma(delta).
    "cmes-p0.5": {"acquisition": "cmes", "binary_confidence": 0.5},
    "cmes-p0.9": {"acquisition": "cmes", "binary_confidence": 0.9},
    # Ablations: hyperparameters optimised again only every 5 % more observations from the
    # start, or at every proposal (see GP_SAMPLERS).
    "cmes-lazy": {"acquisition": "cmes", **_LAZY},
    "cmes-eager": {"acquisition": "cmes", **_EAGER},
}
#: Samplers of the constrained benchmark (``benchmarks.run_constrained``), in report order.
CONSTRAINED_SAMPLER_NAMES: tuple[str, ...] = (
    "cmes",
    "cmes-meanfield",
    "cei",
    "ap",
    "gp",
    "tpe",
    "random",
)

_THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


class SamplerUnavailableError(RuntimeError):
    """Raised when a sampler cannot be built in this environment (e.g. missing package)."""


def limit_threads(n_threads: int = 1) -> None:
    """Make numerical libraries use ``n_threads`` threads in this process and its children.

    Sets the usual environment variables (read by libraries imported later and inherited by
    spawned worker processes), limits already loaded BLAS/OpenMP pools with threadpoolctl,
    and sets torch's intra-op threads if torch is already imported.

    Parameters
    ----------
    n_threads : int
        Threads per process; 1 keeps concurrent benchmark workers from competing.
    """
    for var in _THREAD_ENV_VARS:
        os.environ[var] = str(n_threads)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n_threads)
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n_threads)


def configure_quiet_logging() -> None:
    """Set Optuna logging to WARNING and silence warnings that would flood the output."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    try:
        from sklearn.exceptions import ConvergenceWarning

        warnings.filterwarnings("ignore", category=ConvergenceWarning)
    except ImportError:  # pragma: no cover
        pass


@functools.cache
def _sampler_import_error(class_name: str) -> str | None:
    """Why ``from bore_samplers import <class_name>`` fails here, or ``None`` if it works."""
    try:
        getattr(importlib.import_module("bore_samplers"), class_name)
    except Exception as exc:  # any failure means "not usable here"
        return (
            f"`from bore_samplers import {class_name}` failed ({type(exc).__name__}: {exc}); "
            "install the library, e.g. `pip install -e .` from the repository root"
        )
    return None


@functools.lru_cache(maxsize=1)
def _synetune_import_error() -> str | None:
    try:
        from syne_tune.optimizer.schedulers.searchers.bore import Bore  # noqa: F401
    except Exception as exc:
        return f"importing Syne Tune's Bore searcher failed ({type(exc).__name__}: {exc})"
    return None


def sampler_unavailable_reason(name: str) -> str | None:
    """Say why sampler ``name`` cannot run here, or return ``None`` if it can.

    Parameters
    ----------
    name : str
        One of :data:`SAMPLER_NAMES`.

    Returns
    -------
    str or None
        A human-readable reason, or ``None``.
    """
    if name in GP_SAMPLERS:
        return _sampler_import_error(GP_SAMPLERS[name][0])
    if name not in SAMPLER_NAMES and name not in CMES_SAMPLERS:
        known = list(dict.fromkeys((*SAMPLER_NAMES, *CONSTRAINED_SAMPLER_NAMES)))
        return f"unknown sampler {name!r}; choose from {known}"
    if name in BORE_VARIANTS:
        return _sampler_import_error("BORESampler")
    if name in CMES_SAMPLERS:
        return _sampler_import_error("CMESSampler")
    if name == "synetune-bore":
        return _synetune_import_error()
    return None


def warn_unavailable_samplers(samplers: Sequence[str]) -> list[str]:
    """Print a warning for every sampler that cannot run here and return their names.

    Parameters
    ----------
    samplers : Sequence[str]
        Sampler names from the command line.

    Returns
    -------
    list[str]
        The names of the unavailable samplers, in order.
    """
    unavailable = []
    for sampler in samplers:
        reason = sampler_unavailable_reason(sampler)
        if reason is not None:
            print(f"WARNING: skipping {sampler}: {reason}", file=sys.stderr, flush=True)
            unavailable.append(sampler)
    return unavailable


def make_sampler(name: str, seed: int | None) -> optuna.samplers.BaseSampler:
    """Build the Optuna sampler called ``name``.

    Parameters
    ----------
    name : str
        One of :data:`OPTUNA_SAMPLERS`: ``bore-xgb``, ``bore-rf``, ``bore-mlp``
        (``BORESampler`` with that classifier), their ``-ei`` variants (LFBO's weighting), the
        ablations ``bore-xgb-paper`` (γ = 1/3 and uniform candidates), ``bore-xgb-uniform``
        and ``bore-xgb-gamma-third`` (see :data:`BORE_VARIANTS`), ``tpe``, ``gp`` or ``random``
        (Optuna's own samplers with their defaults), or one of :data:`CMES_SAMPLERS`:
        ``cmes``, ``cei``, ``ap`` (``CMESSampler(acquisition=name, seed=seed)``, otherwise
        defaults),
        ``cmes-meanfield`` (``cmes`` with mean-field y* sampling) and the ablations
        ``cmes-p0.5`` / ``cmes-p0.9`` (binary-feedback confidence).
    seed : int or None
        Seed passed to the sampler.

    Returns
    -------
    optuna.samplers.BaseSampler
        A fresh sampler.

    Raises
    ------
    SamplerUnavailableError
        If the sampler cannot be built here (``bore_samplers`` or ``CMESSampler`` not
        importable, no mean-field option).
    ValueError
        If ``name`` is not an Optuna sampler of this benchmark.
    """
    if name in BORE_VARIANTS:
        reason = sampler_unavailable_reason(name)
        if reason is not None:
            raise SamplerUnavailableError(reason)
        from bore_samplers import BORESampler

        return BORESampler(**BORE_VARIANTS[name], seed=seed)
    if name in CMES_SAMPLERS:
        reason = sampler_unavailable_reason(name)
        if reason is not None:
            raise SamplerUnavailableError(reason)
        from bore_samplers import CMESSampler

        return CMESSampler(**CMES_SAMPLERS[name], seed=seed)
    if name in GP_SAMPLERS:
        reason = sampler_unavailable_reason(name)
        if reason is not None:
            raise SamplerUnavailableError(reason)
        class_name, options = GP_SAMPLERS[name]
        return _ours(class_name, **options)(seed)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name in OTHER_SAMPLERS:
        return OTHER_SAMPLERS[name](seed)
    known = list(dict.fromkeys((*OPTUNA_SAMPLERS, *CMES_SAMPLERS, *OTHER_SAMPLERS)))
    raise ValueError(f"{name!r} is not an Optuna sampler; choose from {known}")


def _package_version(module: str) -> str:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        return "not installed"


def load_average() -> str:
    """The 1, 5 and 15 minute load averages as ``"a / b / c"`` (``"unknown"`` if unavailable)."""
    try:
        return " / ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:  # pragma: no cover - not available on every platform
        return "unknown"


def environment_lines(script: str, argv: Sequence[str]) -> list[str]:
    """Markdown bullet lines describing how and where a report was produced.

    Parameters
    ----------
    script : str
        Module name, e.g. ``benchmarks.run_benchmark``.
    argv : Sequence[str]
        The command-line arguments (without the program name).

    Returns
    -------
    list[str]
        Bullet lines: command, date, machine, versions.
    """
    command = shlex.join(["python", "-m", script, *argv])
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    versions = ", ".join(
        f"{pkg} {_package_version(pkg)}"
        for pkg in ("bore-samplers", "optuna", "syne-tune", "xgboost", "scikit-learn", "torch")
    )
    return [
        f"- Command: `{command}` (from the repository root)",
        f"- Date: {now}",
        f"- Machine: {platform.node() or 'unknown'}, {platform.machine()}, "
        f"nproc = {os.cpu_count()}, {platform.processor() or platform.system()}",
        f"- Python {platform.python_version()}; {versions}",
    ]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Render a GitHub-flavoured markdown table.

    Parameters
    ----------
    headers : Sequence[str]
        Column titles.
    rows : Sequence[Sequence[Any]]
        Cells, converted with ``str``.

    Returns
    -------
    str
        The table, ending with a newline.
    """
    lines = [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join("---" for _ in headers) + " |",
    ]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def mean_se(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Mean and standard error of the mean (``nan`` SE for a single value).

    Parameters
    ----------
    values : Sequence[float] or numpy.ndarray
        Samples.

    Returns
    -------
    tuple[float, float]
        ``(mean, standard error)``.
    """
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return math.nan, math.nan
    se = float(arr.std(ddof=1) / math.sqrt(arr.size)) if arr.size > 1 else math.nan
    return float(arr.mean()), se


def format_mean_se(
    values: Sequence[float] | np.ndarray, fmt: str = ".4g", se_fmt: str = ".2g"
) -> str:
    """Format ``mean ± SE`` of ``values``.

    Parameters
    ----------
    values : Sequence[float] or numpy.ndarray
        Samples.
    fmt : str
        Format spec of the mean.
    se_fmt : str
        Format spec of the standard error.

    Returns
    -------
    str
        E.g. ``"0.3981 ± 0.00021"``; ``"–"`` when there are no values.
    """
    mean, se = mean_se(values)
    if math.isnan(mean):
        return "–"
    if math.isnan(se):
        return f"{mean:{fmt}}"
    return f"{mean:{fmt}} ± {se:{se_fmt}}"


def borda_scores(
    final: dict[str, Sequence[float]],
    area: dict[str, Sequence[float]],
    alpha: float = 5e-4,
) -> dict[str, int]:
    """Borda scores of the samplers on one problem, by the stratified comparison of Dewancker
    et al. (*A Strategy for Ranking Optimization Methods using Multiple Criteria*, ICML
    AutoML workshop 2016) as Fauvel & Chalk use it (section 5; higher values are better).

    Each pair of samplers is compared by a two-sided Mann-Whitney U test at level ``alpha`` on
    the ``final`` values over seeds; the sampler whose values are significantly larger wins.
    Samplers with the same number of wins are then compared among themselves the same way on
    ``area`` (the area under the curve: how fast they got there). A sampler's score is the
    number of samplers ranked strictly below it.

    Parameters
    ----------
    final, area
        Per sampler, one value per seed (the same samplers in both).
    alpha
        Significance level of each test (the paper's ``5e-4``).
    """
    from scipy.stats import mannwhitneyu

    samplers = list(final)

    def wins(values: dict[str, Sequence[float]], group: Sequence[str]) -> dict[str, int]:
        count = dict.fromkeys(group, 0)
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                x, y = np.asarray(values[a], float), np.asarray(values[b], float)
                if not len(x) or not len(y) or np.ptp(np.concatenate([x, y])) == 0.0:
                    continue  # identical values (e.g. two samplers that both always hit)
                result = mannwhitneyu(x, y, alternative="two-sided")
                if result.pvalue < alpha:
                    # U counts the pairs in which x is larger (ties count one half).
                    count[a if result.statistic > len(x) * len(y) / 2 else b] += 1
        return count

    primary = wins(final, samplers)
    secondary: dict[str, int] = {}
    for level in set(primary.values()):
        tied = [s for s in samplers if primary[s] == level]
        secondary.update(wins(area, tied))
    key = {s: (primary[s], secondary[s]) for s in samplers}
    return {s: sum(key[o] < key[s] for o in samplers) for s in samplers}


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file, so readers never see half a file.

    Parameters
    ----------
    path : pathlib.Path
        Destination; parent folders are created.
    text : str
        Content.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Atomically write ``payload`` as indented JSON.

    Parameters
    ----------
    path : pathlib.Path
        Destination.
    payload : dict[str, Any]
        JSON-serialisable content.
    """
    atomic_write_text(path, json.dumps(payload, indent=1) + "\n")


def add_name_list_argument(
    parser: argparse.ArgumentParser,
    name: str,
    names: Sequence[str],
    help_text: str,
    choices: Sequence[str] | None = None,
) -> None:
    """``--<name> A B ...``: one or more of ``choices`` (default ``names``), all by default."""
    parser.add_argument(
        f"--{name}",
        nargs="+",
        default=list(names),
        choices=list(names if choices is None else choices),
        metavar=name.rstrip("s").upper(),
        help=help_text,
    )


def run_argument_parser(
    prog: str,
    description: str,
    *,
    problems: Sequence[str],
    samplers: Sequence[str],
    sampler_choices: Sequence[str] | None = None,
    problem_choices: Sequence[str] | None = None,
) -> argparse.ArgumentParser:
    """A runner's parser with ``--problems`` and ``--samplers``; finish with run_arguments."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    extra = [name for name in problem_choices or () if name not in problems]
    add_name_list_argument(
        parser,
        "problems",
        problems,
        f"problems to run (default: all): {', '.join(problems)}"
        + (f"; also: {', '.join(extra)}" if extra else ""),
        problem_choices,
    )
    add_name_list_argument(
        parser,
        "samplers",
        samplers,
        f"samplers to compare (default: all): {', '.join(samplers)}",
        sampler_choices,
    )
    return parser


def run_arguments(
    parser: argparse.ArgumentParser,
    argv: Sequence[str],
    *,
    seeds: int,
    trials: int,
    out: Path,
    out_label: str,
) -> argparse.Namespace:
    """Add ``--seeds/--trials/--workers/--out``, parse ``argv``, check sizes, drop repeats.

    Every name-list option (``nargs="+"``) keeps its first occurrence of each name.
    """
    parser.add_argument(
        "--seeds", type=int, default=seeds, help=f"seeds 0..S-1 (default: {seeds})"
    )
    parser.add_argument(
        "--trials", type=int, default=trials, help=f"trials per run (default: {trials})"
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default: 2)")
    parser.add_argument(
        "--out", type=Path, default=out, help=f"output folder (default: {out_label})"
    )
    parser.add_argument(
        "--runs",
        type=Path,
        default=None,
        help="cache folder of finished runs, shared between reports (default: OUT/runs)",
    )
    args = parser.parse_args(argv)
    if args.runs is None:
        args.runs = args.out / "runs"
    for name in ("seeds", "trials", "workers"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    for action in parser._actions:
        if action.nargs == "+":
            setattr(args, action.dest, list(dict.fromkeys(getattr(args, action.dest))))
    return args


class CachedRunSpec:
    """Base of the frozen dataclasses that :func:`run_cached` runs: subclasses add their fields,
    ``filename`` and ``label``; the record of a run is its fields, its status and its results.
    """

    def record(self, status: str, **fields: Any) -> dict[str, Any]:
        """A run record with this run's identity, ``status`` and extra ``fields``."""
        return {**asdict(self), "status": status, **fields}


@dataclass(frozen=True)
class StudyRunSpec(CachedRunSpec):
    """One study: ``problem`` optimised by ``sampler`` with ``seed`` for ``trials`` trials."""

    problem: str
    sampler: str
    seed: int
    trials: int

    @property
    def filename(self) -> str:
        """Cache file name of this run."""
        return f"{self.problem}__{self.sampler}__seed{self.seed}__t{self.trials}.json"

    @property
    def label(self) -> str:
        """Short description for progress lines."""
        return f"{self.problem} / {self.sampler} / seed {self.seed}"


def load_cached_run(
    path: Path,
    spec: Any,
    is_complete: Callable[[dict[str, Any], Any], bool] | None = None,
) -> dict[str, Any] | None:
    """The cached record of the run ``spec`` (a dataclass), or ``None``.

    ``None`` when the file is absent or unreadable, when its record failed, when it was made
    with other settings (any field of ``spec`` differs), or when ``is_complete(record, spec)``
    says it stopped short.
    """
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    same = all(rec.get(k) == v for k, v in asdict(spec).items())
    if not (same and rec.get("status") == "ok"):
        return None
    return rec if is_complete is None or is_complete(rec, spec) else None


def run_cached(
    specs: Sequence[Any],
    runs_dir: Path,
    jobs: int,
    run_one: Callable[[Any], dict[str, Any]],
    describe: Callable[[dict[str, Any]], str],
    *,
    is_complete: Callable[[dict[str, Any], Any], bool] | None = None,
    unavailable: Callable[[Any], str | None] | None = None,
) -> list[dict[str, Any]]:
    """Run ``specs``, reusing the records cached in ``runs_dir``; records in the order of specs.

    Each spec is a frozen dataclass with ``filename``, ``label`` and ``record(status,
    **fields)``; ``run_one(spec)`` returns its record (``status`` ``"ok"`` or an error with a
    ``message``), a module-level function so that ``jobs > 1`` spawned processes (no fork of
    OpenMP or torch state) can run it. Records with status ``"ok"`` are written to
    ``runs_dir / spec.filename`` as soon as they finish; ``describe`` gives the progress line
    of one. A worker that dies gives an error record, not a crash. ``is_complete`` rejects
    cached records that stopped short (:func:`load_cached_run`); a spec for which
    ``unavailable(spec)`` gives a reason is not run but recorded as ``"skipped"``.
    """
    records: dict[Any, dict[str, Any]] = {}
    pending = []
    for spec in specs:
        cached = load_cached_run(runs_dir / spec.filename, spec, is_complete)
        reason = None if unavailable is None or cached is not None else unavailable(spec)
        if cached is not None:
            records[spec] = cached
        elif reason is not None:
            records[spec] = spec.record("skipped", message=reason)
        else:
            pending.append(spec)
    skipped = sum(rec["status"] == "skipped" for rec in records.values())
    print(
        f"{len(specs)} runs: {len(records) - skipped} cached, {skipped} skipped, "
        f"{len(pending)} to run with {jobs} worker(s)",
        flush=True,
    )
    start = time.perf_counter()

    def finished(spec: Any, rec: dict[str, Any], done: int) -> None:
        records[spec] = rec
        if rec["status"] == "ok":
            write_json(runs_dir / spec.filename, rec)
            what = describe(rec)
        else:
            what = f"{rec['status']}: {rec['message']}"
        elapsed = time.perf_counter() - start
        print(f"[{done}/{len(pending)} {elapsed:7.0f}s] {spec.label}: {what}", flush=True)

    if jobs == 1:
        for done, spec in enumerate(pending, 1):
            finished(spec, run_one(spec), done)
    elif pending:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = {pool.submit(run_one, spec): spec for spec in pending}
            try:
                for done, future in enumerate(as_completed(futures), 1):
                    spec = futures[future]
                    try:
                        rec = future.result()
                    except Exception as exc:  # the worker process died (e.g. out of memory)
                        rec = spec.record("error", message=f"worker failed: {exc!r}")
                    finished(spec, rec, done)
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    return [records[spec] for spec in specs]
