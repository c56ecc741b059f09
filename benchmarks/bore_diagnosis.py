"""Why and when BORE's classifier is a good acquisition: ranking quality and argmax placement.

Usage (from the repository root)::

    python -m benchmarks.bore_diagnosis          # 6 problems x 10 seeds x n = 20, 50, 100
    python -m benchmarks.bore_diagnosis --problems branin --sizes 20 --seeds 1 \\
        --classifiers xgboost rf --out /tmp/diag_smoke

BORE proposes the maximiser of a classifier's ``π(x) = P(y <= τ | x)``, fitted to tell the
best γ-quantile of the observations from the rest. For that to be a good acquisition two
things must hold: ``π`` must *rank* points like the truth ``I[f(x) <= τ]``, at least where the
candidates come from, and its *maximiser* must lie where ``f`` is small rather than where the
classifier merely extrapolates (a tree extends a leaf's value over a whole box; a network's
logit keeps growing away from the data). This benchmark measures both, for every classifier
on the same observations, to answer two questions of the project's issue:

1. How well does ``π`` rank held-out points (AUC against the true quantile labels) as n grows?
2. Where does the argmax of ``π`` lie, relative to the optimum, with unlimited candidates?

Observations
    For each problem and seed, the first n trials (n in ``--sizes``) of one
    ``TPESampler(seed=seed)`` study (the first n trials of a longer study are those of an
    n-trial study, so one study of ``max(sizes)`` trials serves all n). Every classifier is
    fitted on the same data, so the comparison is paired. The data are TPE's, not BORE's: they
    concentrate near good regions as a model-based sampler's do, without favouring one
    classifier.
Labels
    :func:`~bore_samplers.acquisitions.density_ratio.quantile_labels` with the library's default
    γ (:func:`~bore_samplers.acquisitions.density_ratio.tpe_gamma`, the best
    ``min(⌈n / 10⌉, 25)``: labelling ``default``); ``--gammas default 1/3`` adds the BORE
    paper's fixed γ = 1/3. τ is the labelling threshold, the worst "good" observed value.
Classifiers
    :func:`~bore_samplers.models.classifiers.make_classifier` with the library's default
    settings, fitted on the features and labels as ``BOREProposer`` fits them, and scored with
    :class:`~bore_samplers.acquisitions.density_ratio.ClassProbability` (π for the trees, its
    logit for the MLP: the same ranking, without saturated ties). The trees are refitted from
    scratch at every n, as in a study. The MLP is warm-started in a study, and trained as it
    would have been by then (``--mlp-fit warm``, the default): a cold fit (500 Adam steps) on
    the first ``n_startup`` = 10 observations, then a warm fit (100 steps) on every longer
    prefix up to n, each with that prefix's labels. ``--mlp-fit cold`` trains a fresh network
    (500 steps) at each n instead, as a process joining a study would: much cheaper, but at
    n = 100 it has had a twentieth of the training, and measured worse (near-chance AUC).
Ranking (AUC)
    AUC of the scores against the true labels ``I[f(x) <= τ]`` (Mann-Whitney, tied scores
    count half) on two sets: *uniform*, the first ``--heldout`` points of the uniform pool
    (default: all 50 000; the global ranking), and *near*, ``--near`` draws from the Parzen
    estimator of the good observations that :class:`~bore_samplers.optimizers.ParzenSearch`
    (the default candidate generator for trees) draws its candidates from: the ranking where
    it matters. A set with no point on one side of τ has no AUC; such seeds are left out and
    the table says how many remain ``[k/N]``. This happens on the uniform set: τ of TPE's
    observations soon lies below every one of thousands of uniform points (Hartmann-6 at
    n = 100: none of 2000 uniform points is as good as τ, for either labelling), which is why
    the whole pool is the default held-out set, and why a third AUC with a target that does
    not shrink with n is given: *uniform top 1 %*, the labels ``f(x) <=`` the 1 % quantile of
    f over the held-out points. The context tables give the share of good points in each set.
Placement (argmax)
    The true f at the maximiser of the scores, as *normalised regret*
    ``(f - f*) / (median_U f - f*)``, with ``f*`` the problem's known optimum and
    ``median_U f`` the median of f over 2000 fixed uniform points: 0 at the optimum, about 1
    at a typical random point. (A problem without a known optimum shows its raw f and is left
    out of the regret averages over problems.) Among tied maximal candidates, which the
    piecewise-constant π of a tree ensemble produces, the mean over the tied points (the
    expected value of a random tie-break; at most 2000 of them evaluated). Candidate sets:

    * ``random-500``: blocks of 500 uniform points (the paper's RandomSearch budget), averaged
      over the ``--pool / 500`` blocks of the pool;
    * ``uniform-P``: the whole uniform pool of ``--pool`` = 50 000 points, "unlimited"
      candidates: the global argmax of π;
    * ``parzen-24``: blocks of 24 Parzen draws (the default ParzenSearch budget for trees),
      averaged over the ``--near / 24`` blocks;
    * ``parzen-N``: all ``--near`` Parzen draws: the argmax of π over the good region;
    * ``proposal``: the library's own default optimiser
      (``BOREProposer(classifier=c).optimizer_for(space)``: ParzenSearch with 24 candidates for
      every classifier) run ``--proposals`` times with
      the observations excluded, as the sampler calls it; the mean over the runs.

    The ties table counts the tied maximal candidates of each set, and ``dist`` is the mean
    Euclidean distance, in unit coordinates divided by √d, from the uniform-pool argmax to the
    nearest good observation: near 0, the global argmax of π sits at the data; large, in a
    region the classifier extrapolated to. The best observed value, in the same units, is the
    reference a proposal has to beat.

All random draws (pool, Parzen draws, tie subsets, proposals) come from generators seeded by
(seed, problem, n, labelling, classifier), so a run is deterministic for given seeds and a
classifier's numbers do not change when others are added. Tasks, one per (problem, seed),
run in ``--workers`` spawned processes with one BLAS/OpenMP/torch thread each.

Writes ``<out>/results.md`` (means ± standard errors over seeds, per problem and averaged
over problems; the overall average takes the mean over problems per seed first, so its
standard error is over seeds) and ``<out>/results.json`` (every measurement).

Cost: CPU seconds are in the report's last section. The default run (6 problems x 10 seeds,
n = 20, 50, 100, three classifiers, default labelling) is 60 tasks of about 25 CPU seconds
each (measured on the 2-core development machine under load): about 19 s for the MLP's
training along the study (0.2 s per warm fit of 100 steps, 90 of them up to n = 100), the
rest for TPE, f on the 50 000-point pool and the trees: about 13 minutes with two workers.
``--mlp-fit cold`` brings a task to about 8 s (about 4 minutes); ``--gammas default 1/3``
doubles the classifier work.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
import zlib
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from scipy.stats import rankdata

from benchmarks.harness import (
    atomic_write_text,
    configure_quiet_logging,
    environment_lines,
    format_mean_se,
    limit_threads,
    markdown_table,
    write_json,
)
from benchmarks.problems import PROBLEMS, Problem, get_problem
from bore_samplers.acquisitions.density_ratio import (
    ClassProbability,
    GammaSchedule,
    quantile_labels,
    resolve_gamma,
    tpe_gamma,
)
from bore_samplers.integrations.optuna import search_space_from_distributions
from bore_samplers.models.classifiers import CLASSIFIERS, make_classifier
from bore_samplers.models.classifiers.base import ProbabilisticClassifier
from bore_samplers.optimizers import ParzenSearch, RandomSearch
from bore_samplers.optimizers.candidates import _Parzen
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.space import SearchSpace

__all__ = [
    "DEFAULT_PROBLEMS",
    "GAMMAS",
    "Task",
    "auc",
    "main",
    "run_task",
    "tpe_observations",
]

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "bore_diagnosis"
#: Continuous and mixed problems with known optima; the scikit-learn tuning problems cost
#: 0.05 to 0.1 s per evaluation, far too slow for thousands of held-out evaluations.
DEFAULT_PROBLEMS: tuple[str, ...] = (
    "branin",
    "hartmann6",
    "ackley5",
    "rosenbrock10",
    "ackley-mixed",
    "hartmann6-mixed",
)
DEFAULT_CLASSIFIERS: tuple[str, ...] = tuple(CLASSIFIERS)
#: Labellings: the library's default γ schedule, and the BORE paper's fixed γ.
GAMMAS: dict[str, GammaSchedule] = {"default": tpe_gamma, "1/3": 1.0 / 3.0}
#: Uniform points (fixed, seed 0) whose median value scales the regret.
SCALE_POINTS = 2000
#: At most this many tied maximal candidates are evaluated (a random subset).
MAX_TIED = 2000
#: Candidates of the library's RandomSearch and ParzenSearch (the block sizes).
N_RANDOM = RandomSearch().n_candidates
N_PARZEN = ParzenSearch().n_candidates
#: Share of the held-out points that are "good" for the fixed-target AUC.
TOP_SHARE = 0.01
#: Observations before BORE's classifier takes over (the MLP's first, cold fit).
N_STARTUP = BOREProposer().n_startup

#: Measurements of one (problem, seed, n, labelling, classifier), in report order.
RANKING_METRICS = ("auc_uniform", "auc_top", "auc_near")
PLACEMENT_METRICS = (
    "regret_random",
    "regret_pool",
    "regret_parzen",
    "regret_near",
    "regret_proposal",
)
TIE_METRICS = ("ties_random", "ties_pool", "ties_parzen", "ties_near", "dist_pool")
CONTEXT_METRICS = ("good_share", "pos_uniform", "pos_near", "regret_best")


@dataclass(frozen=True)
class Task:
    """All measurements of one problem and seed (every n, labelling and classifier)."""

    problem: str
    seed: int
    sizes: tuple[int, ...]
    classifiers: tuple[str, ...]
    gammas: tuple[str, ...]
    n_pool: int = 50_000
    n_heldout: int = 50_000
    n_near: int = 2000
    n_proposals: int = 4
    mlp_fit: str = "warm"


def _key(name: str) -> int:
    """A stable integer for a name (seeds must not depend on Python's hash salt)."""
    return zlib.crc32(name.encode())


def _rng(*keys: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(list(keys)))


class _Objective:
    """The problem's f on unit points of its space, and its normalised regret."""

    def __init__(self, problem: Problem, space: SearchSpace) -> None:
        self.problem = problem
        self.space = space
        reference = self.values(space.sample_uniform(SCALE_POINTS, _rng(_key(problem.name))))
        self.median = float(np.median(reference))

    def values(self, u: np.ndarray) -> np.ndarray:
        """f at each row of ``u`` (snapped unit points)."""
        return np.array([self.problem.function(c) for c in self.space.decode(u)], dtype=float)

    def regret(self, f: np.ndarray | float) -> np.ndarray | float:
        """``(f - f*) / (median_U f - f*)``, or ``f`` itself when the optimum is unknown."""
        optimum = self.problem.optimum
        if optimum is None:
            return f
        return (f - optimum) / (self.median - optimum)


class _LazyValues:
    """f at rows of a fixed set of points, evaluated on first use and cached."""

    def __init__(self, points: np.ndarray, objective: _Objective) -> None:
        self.points = points
        self.objective = objective
        self._values = np.zeros(len(points))
        self._known = np.zeros(len(points), dtype=bool)

    def __getitem__(self, index: np.ndarray) -> np.ndarray:
        index = np.asarray(index, dtype=int)
        missing = np.unique(index[~self._known[index]])
        if missing.size:
            self._values[missing] = self.objective.values(self.points[missing])
            self._known[missing] = True
        return self._values[index]


def tpe_observations(
    problem: Problem, space: SearchSpace, n: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` trials of a ``TPESampler(seed=seed)`` study on ``problem``.

    Parameters
    ----------
    problem : benchmarks.problems.Problem
        The problem to minimise.
    space : bore_samplers.space.SearchSpace
        Its search space.
    n : int
        Number of trials.
    seed : int
        Seed of the sampler.

    Returns
    -------
    tuple[numpy.ndarray, numpy.ndarray]
        Snapped unit points ``(n, d)`` and objective values ``(n,)``, in trial order.
    """
    sampler = optuna.samplers.TPESampler(seed=seed)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    study.optimize(problem.objective, n_trials=n)
    trials = study.trials
    u = space.snap(space.encode([t.params for t in trials]))
    return u, np.array([t.value for t in trials], dtype=float)


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Area under the ROC curve of ``scores`` for the boolean ``positive`` (ties count half).

    Parameters
    ----------
    scores : numpy.ndarray
        Scores, higher meaning "more likely positive".
    positive : numpy.ndarray
        True labels.

    Returns
    -------
    float
        The AUC, or ``nan`` if one class is empty.
    """
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    ranks = rankdata(scores)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _argmax(
    scores: np.ndarray, values: _LazyValues, index: np.ndarray, rng: np.random.Generator
) -> tuple[float, int, np.ndarray]:
    """Mean f over the maximal candidates among rows ``index``, their number, and the rows
    it was averaged over (a random subset of at most :data:`MAX_TIED`)."""
    subset = scores[index]
    tied = index[subset == subset.max()]
    count = len(tied)
    if count > MAX_TIED:
        tied = np.sort(rng.choice(tied, MAX_TIED, replace=False))
    return float(np.mean(values[tied])), count, tied


def _block_argmax(
    scores: np.ndarray, values: _LazyValues, block: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Mean over consecutive blocks of ``block`` rows of (argmax f, number of ties)."""
    results = [
        _argmax(scores, values, np.arange(start, start + block), rng)[:2]
        for start in range(0, len(scores) - block + 1, block)
    ]
    return float(np.mean([r[0] for r in results])), float(np.mean([r[1] for r in results]))


class _Fitter:
    """Fits one classifier at growing n as ``BOREProposer`` would have fitted it by then.

    Stateless classifiers (the trees) are fitted from scratch on the first n observations.
    A warm-started one (the MLP with ``warm=True``) is trained along the study: a cold fit on
    the first :data:`N_STARTUP` observations, then one warm fit per further observation.
    """

    def __init__(self, name: str, gamma: GammaSchedule, warm: bool) -> None:
        self.name = name
        self.gamma = gamma
        self.warm = warm
        self._classifier: ProbabilisticClassifier | None = None
        self._fitted_n = 0

    def _labels(self, y: np.ndarray) -> np.ndarray:
        return quantile_labels(y, resolve_gamma(self.gamma, len(y)))

    def fit(
        self, features: np.ndarray, y: np.ndarray, n: int, seed: int
    ) -> ProbabilisticClassifier:
        """The classifier trained on the first ``n`` of ``features`` and values ``y``."""
        if not self.warm:
            classifier = make_classifier(self.name)
            classifier.fit(features[:n], self._labels(y[:n]), seed=seed)
            return classifier
        if self._classifier is None or n < self._fitted_n:
            self._classifier, self._fitted_n = make_classifier(self.name), 0
        for k in range(max(self._fitted_n + 1, min(N_STARTUP, n)), n + 1):
            labels = self._labels(y[:k])
            if labels.any() and not labels.all():  # the proposer falls back otherwise
                self._classifier.fit(features[:k], labels, seed=seed + k)
        self._fitted_n = n
        return self._classifier


def _scores(acquisition: ClassProbability, u: np.ndarray) -> np.ndarray:
    values = np.asarray(acquisition(u), dtype=float)
    return np.where(np.isnan(values), -np.inf, values)


def _classifier_metrics(
    name: str,
    classifier: ProbabilisticClassifier,
    space: SearchSpace,
    objective: _Objective,
    pool: _LazyValues,
    near: _LazyValues,
    context: dict[str, Any],
    task: Task,
    rng: np.random.Generator,
) -> dict[str, float]:
    """Ranking and placement measurements of one fitted classifier."""
    acquisition = ClassProbability(classifier, space)
    pool_scores = _scores(acquisition, pool.points)
    near_scores = _scores(acquisition, near.points)
    heldout = np.arange(task.n_heldout)
    tau = context["tau"]
    out: dict[str, float] = {
        "auc_uniform": auc(pool_scores[heldout], pool[heldout] <= tau),
        "auc_top": auc(pool_scores[heldout], context["top"]),
        "auc_near": auc(near_scores, near[np.arange(len(near.points))] <= tau),
    }
    f, out["ties_random"] = _block_argmax(pool_scores, pool, N_RANDOM, rng)
    out["regret_random"] = float(objective.regret(f))
    f, ties, tied = _argmax(pool_scores, pool, np.arange(len(pool.points)), rng)
    out["regret_pool"], out["ties_pool"] = float(objective.regret(f)), float(ties)
    good = context["good"]
    gaps = np.linalg.norm(pool.points[tied][:, None, :] - good[None, :, :], axis=-1)
    out["dist_pool"] = float(np.mean(gaps.min(axis=1)) / math.sqrt(space.n_dims))
    f, out["ties_parzen"] = _block_argmax(near_scores, near, N_PARZEN, rng)
    out["regret_parzen"] = float(objective.regret(f))
    f, ties, _ = _argmax(near_scores, near, np.arange(len(near.points)), rng)
    out["regret_near"], out["ties_near"] = float(objective.regret(f)), float(ties)
    optimizer = BOREProposer(classifier=name).optimizer_for(space)
    proposals = np.array(
        [
            optimizer.maximize(acquisition, space, rng, exclude=context["u"], anchors=good)
            for _ in range(task.n_proposals)
        ]
    )
    out["regret_proposal"] = float(np.mean(objective.regret(objective.values(proposals))))
    return out


def run_task(task: Task) -> dict[str, Any]:
    """Every measurement of one problem and seed (module level: runs in worker processes).

    Parameters
    ----------
    task : Task
        The problem, seed and settings.

    Returns
    -------
    dict[str, Any]
        ``records`` (one dict per n, labelling and classifier), ``cpu_s`` (CPU seconds of the
        task) and ``classifier_cpu_s`` (CPU seconds per classifier: fits, scoring and
        proposals).
    """
    limit_threads(1)
    configure_quiet_logging()
    start = time.process_time()
    problem = get_problem(task.problem)
    space = search_space_from_distributions(dict(problem.space))
    objective = _Objective(problem, space)
    problem_key = _key(problem.name)
    u_all, y_all = tpe_observations(problem, space, max(task.sizes), task.seed)
    features = space.features(u_all)
    pool = _LazyValues(
        space.sample_uniform(task.n_pool, _rng(task.seed, problem_key, 0)), objective
    )
    heldout_values = pool[np.arange(task.n_heldout)]
    top = heldout_values <= np.quantile(heldout_values, TOP_SHARE, method="lower")
    records: list[dict[str, Any]] = []
    classifier_cpu = dict.fromkeys(task.classifiers, 0.0)
    for gamma_name in task.gammas:
        gamma = GAMMAS[gamma_name]
        fitters = {
            c: _Fitter(c, gamma, warm=c == "mlp" and task.mlp_fit == "warm")
            for c in task.classifiers
        }
        for n in sorted(task.sizes):
            u, y = u_all[:n], y_all[:n]
            labels = quantile_labels(y, resolve_gamma(gamma, n))
            base = {
                "problem": task.problem,
                "seed": task.seed,
                "n": n,
                "gamma": gamma_name,
                "n_good": int(labels.sum()),
                "good_share": float(labels.mean()),
                "regret_best": float(objective.regret(float(np.min(y)))),
            }
            if labels.all() or not labels.any():
                records += [
                    {**base, "classifier": c, "note": "one class"} for c in task.classifiers
                ]
                continue
            tau = float(np.max(y[labels]))
            good = u[labels]
            near_rng = _rng(task.seed, problem_key, n, _key(gamma_name))
            near = _LazyValues(_Parzen(space, good).sample(task.n_near, near_rng), objective)
            near_values = near[np.arange(task.n_near)]
            base |= {
                "tau": tau,
                "pos_uniform": float(np.mean(heldout_values <= tau)),
                "pos_near": float(np.mean(near_values <= tau)),
            }
            context = {"tau": tau, "good": good, "u": u, "top": top}
            for c in task.classifiers:
                begin = time.process_time()
                classifier = fitters[c].fit(features, y_all, n, task.seed)
                rng = _rng(task.seed, problem_key, n, _key(gamma_name), _key(c))
                metrics = _classifier_metrics(
                    c, classifier, space, objective, pool, near, context, task, rng
                )
                classifier_cpu[c] += time.process_time() - begin
                records.append({**base, "classifier": c, **metrics})
    return {
        "problem": task.problem,
        "seed": task.seed,
        "records": records,
        "cpu_s": time.process_time() - start,
        "classifier_cpu_s": classifier_cpu,
    }


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------


def _clean(value: Any) -> Any:
    """JSON-safe: non-finite floats become ``None``."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _cell(values: Sequence[float], fmt: str, se_fmt: str = ".2g") -> str:
    """``mean ± SE`` of the finite values, with ``[k/N]`` when some are missing."""
    arr = np.asarray(values, dtype=float)
    finite = arr[np.isfinite(arr)]
    text = format_mean_se(finite, fmt, se_fmt)
    if 0 < finite.size < arr.size or (finite.size == 0 and arr.size > 0):
        text += f" [{finite.size}/{arr.size}]"
    return text


_FORMATS = {
    "auc_uniform": ".3f",
    "auc_near": ".3f",
    "auc_top": ".3f",
    "good_share": ".3f",
    "pos_uniform": ".2%",
    "pos_near": ".1%",
    "dist_pool": ".3f",
}


def _format(metric: str) -> tuple[str, str]:
    fmt = _FORMATS.get(metric, ".3g")
    return fmt, (".1%" if fmt.endswith("%") else ".2g")


class _Table:
    """Records indexed by (problem, n, labelling, classifier) -> {seed: record}."""

    def __init__(self, records: Sequence[dict[str, Any]], seeds: Sequence[int]) -> None:
        self.seeds = list(seeds)
        self._by: dict[tuple[str, int, str, str], dict[int, dict[str, Any]]] = {}
        for record in records:
            key = (record["problem"], record["n"], record["gamma"], record["classifier"])
            self._by.setdefault(key, {})[record["seed"]] = record

    def values(self, problem: str, n: int, gamma: str, classifier: str, metric: str) -> list:
        """The metric per seed (``nan`` where missing)."""
        found = self._by.get((problem, n, gamma, classifier), {})
        return [float(found.get(s, {}).get(metric, math.nan)) for s in self.seeds]

    def overall(
        self, problems: Sequence[str], n: int, gamma: str, classifier: str, metric: str
    ) -> list:
        """Per seed, the mean over problems (of those with a finite value)."""
        if not problems:
            return [math.nan] * len(self.seeds)
        rows = np.array([self.values(p, n, gamma, classifier, metric) for p in problems])
        with np.errstate(all="ignore"):
            finite = np.isfinite(rows)
            counts = finite.sum(axis=0)
            sums = np.where(finite, rows, 0.0).sum(axis=0)
            return list(np.where(counts > 0, sums / np.maximum(counts, 1), math.nan))


def _headers(task: Task) -> dict[str, str]:
    return {
        "auc_uniform": f"AUC uniform ({task.n_heldout})",
        "auc_near": f"AUC near ({task.n_near} Parzen)",
        "auc_top": f"AUC uniform, top {TOP_SHARE:.0%}",
        "regret_random": f"random-{N_RANDOM}",
        "regret_pool": f"uniform-{task.n_pool}",
        "regret_parzen": f"parzen-{N_PARZEN}",
        "regret_near": f"parzen-{task.n_near}",
        "regret_proposal": f"proposal (x{task.n_proposals})",
        "ties_random": f"ties random-{N_RANDOM}",
        "ties_pool": f"ties uniform-{task.n_pool}",
        "ties_parzen": f"ties parzen-{N_PARZEN}",
        "ties_near": f"ties parzen-{task.n_near}",
        "dist_pool": "dist uniform argmax",
        "good_share": "γ (good share)",
        "pos_uniform": "good % uniform",
        "pos_near": "good % near",
        "regret_best": "best observed",
    }


def _section(
    get: Any,
    sizes: Sequence[int],
    classifiers: Sequence[str],
    headers: dict[str, str],
    regret_unit: str,
) -> str:
    """Context, ranking, placement and ties tables; ``get(n, classifier, metric)`` -> values."""
    context_rows = [
        [n, *(_cell(get(n, classifiers[0], m), *_format(m)) for m in CONTEXT_METRICS)]
        for n in sizes
    ]
    parts = [
        "Observations and labels (the same for every classifier):\n\n"
        + markdown_table(
            ["n", *(headers[m] for m in CONTEXT_METRICS[:-1]), f"best observed ({regret_unit})"],
            context_rows,
        )
    ]
    for title, metrics in (
        ("Ranking: AUC of π against the true labels f(x) <= τ", RANKING_METRICS),
        (f"Placement: {regret_unit} of f at the argmax of π over", PLACEMENT_METRICS),
        ("Tied maximal candidates, and the distance of the uniform argmax", TIE_METRICS),
    ):
        rows = [
            [n, c, *(_cell(get(n, c, m), *_format(m)) for m in metrics)]
            for n in sizes
            for c in classifiers
        ]
        parts.append(
            f"{title}:\n\n"
            + markdown_table(["n", "classifier", *(headers[m] for m in metrics)], rows)
        )
    return "\n".join(parts)


def write_report(
    out: Path,
    results: Sequence[dict[str, Any]],
    tasks: Sequence[Task],
    problems: Sequence[str],
    header_lines: Sequence[str],
) -> Path:
    """Write ``<out>/results.md`` and ``<out>/results.json``.

    Parameters
    ----------
    out : pathlib.Path
        Output folder.
    results : Sequence[dict[str, Any]]
        The outputs of :func:`run_task`.
    tasks : Sequence[Task]
        The tasks (their shared settings name the columns).
    problems : Sequence[str]
        Problems, in report order.
    header_lines : Sequence[str]
        Markdown lines for the top of the report.

    Returns
    -------
    pathlib.Path
        The path of ``results.md``.
    """
    first = tasks[0]
    sizes, classifiers, gammas = sorted(first.sizes), first.classifiers, first.gammas
    seeds = sorted({t.seed for t in tasks})
    records = [r for result in results for r in result["records"]]
    table = _Table(records, seeds)
    headers = _headers(first)
    known = [p for p in problems if PROBLEMS[p].optimum is not None]
    sections = ["# BORE diagnosis: ranking quality and argmax placement of π\n\n"]
    sections[0] += "\n".join(header_lines) + "\n"
    sections.append(
        "Means ± standard errors over seeds. AUC: 0.5 is chance, 1 a perfect ranking. "
        "Regret: (f - f*) / (median of f over uniform points - f*), 0 at the optimum, about 1 "
        "at a random point; for tied maxima the mean over the tied points. `[k/N]`: only k of N "
        "seeds have a value (an AUC needs good and bad points in its set). See the module "
        "docstring of `benchmarks/bore_diagnosis.py` for the definitions.\n"
    )
    for gamma in gammas:
        label = "library default γ (tpe_gamma)" if gamma == "default" else f"γ = {gamma}"
        if len(problems) > 1:
            sections.append(
                f"## All problems, {label}\n\nMean over problems per seed "
                f"({', '.join(problems)}; regret columns over those with a known optimum: "
                f"{', '.join(known) or 'none'}), then mean ± SE over seeds.\n"
            )

            def overall(n: int, c: str, m: str, gamma: str = gamma) -> list:
                chosen = known if m.startswith("regret") else problems
                return table.overall(chosen, n, gamma, c, m)

            sections.append(_section(overall, sizes, classifiers, headers, "normalised regret"))
        for problem in problems:
            spec = PROBLEMS[problem]
            unit = "normalised regret" if spec.optimum is not None else "f (no known optimum)"
            sections.append(f"### {problem}, {label}\n\n{spec.description}.\n")

            def per_problem(n: int, c: str, m: str, p: str = problem, g: str = gamma) -> list:
                return table.values(p, n, g, c, m)

            sections.append(_section(per_problem, sizes, classifiers, headers, unit))
    cpu = [r["cpu_s"] for r in results]
    per_classifier = {
        c: sum(r["classifier_cpu_s"].get(c, 0.0) for r in results) for c in classifiers
    }
    sections.append(
        "## Cost\n\n"
        f"{len(results)} task(s) (problem x seed), {sum(cpu):.1f} CPU seconds in all "
        f"(mean {np.mean(cpu):.1f} s, max {np.max(cpu):.1f} s per task, worker start-up "
        "not included); per classifier (fits, scoring and proposals): "
        + ", ".join(f"{c} {s:.1f} s" for c, s in per_classifier.items())
        + ".\n"
    )
    path = out / "results.md"
    atomic_write_text(path, "\n".join(sections))
    payload = {
        "settings": asdict(first) | {"seeds": seeds, "problems": list(problems)},
        "header": list(header_lines),
        "tasks": [{k: v for k, v in result.items() if k != "records"} for result in results],
        "records": [{k: _clean(v) for k, v in r.items()} for r in records],
    }
    payload["settings"].pop("problem")
    payload["settings"].pop("seed")
    write_json(out / "results.json", payload)
    return path


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bore_diagnosis",
        description="How well BORE's classifier ranks points and where its argmax lies.",
    )
    parser.add_argument(
        "--problems",
        nargs="+",
        default=list(DEFAULT_PROBLEMS),
        choices=list(PROBLEMS),
        metavar="PROBLEM",
        help=f"problems (default: {' '.join(DEFAULT_PROBLEMS)})",
    )
    parser.add_argument(
        "--classifiers",
        nargs="+",
        default=list(DEFAULT_CLASSIFIERS),
        choices=list(CLASSIFIERS),
        metavar="CLASSIFIER",
        help=f"classifiers, library defaults (default: {' '.join(DEFAULT_CLASSIFIERS)})",
    )
    parser.add_argument(
        "--sizes", nargs="+", type=int, default=[20, 50, 100], help="numbers of observations n"
    )
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..S-1 (default: 10)")
    parser.add_argument(
        "--gammas",
        nargs="+",
        default=["default"],
        choices=list(GAMMAS),
        help="labellings: the library's default γ schedule and/or the paper's 1/3 "
        "(default: default)",
    )
    parser.add_argument(
        "--pool", type=int, default=50_000, help="uniform candidates, 'unlimited' (default: 50000)"
    )
    parser.add_argument(
        "--heldout",
        type=int,
        default=None,
        help="uniform held-out points for the AUC, the first of the pool (default: all)",
    )
    parser.add_argument(
        "--near", type=int, default=2000, help="Parzen draws near the good points (default: 2000)"
    )
    parser.add_argument(
        "--proposals", type=int, default=4, help="runs of the default optimiser (default: 4)"
    )
    parser.add_argument(
        "--mlp-fit",
        choices=("warm", "cold"),
        default="warm",
        help="warm (default): the MLP trained along the study as the sampler trains it; "
        "cold: a fresh MLP per n (about 3x faster in all)",
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default: 2)")
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="output folder (default: benchmarks/results/bore_diagnosis)",
    )
    args = parser.parse_args(argv)
    if min(args.sizes) < 2:
        parser.error("--sizes must be at least 2")
    for name in ("seeds", "workers", "proposals"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.heldout is None:
        args.heldout = args.pool
    if not N_RANDOM <= args.pool or not 1 <= args.heldout <= args.pool:
        parser.error(f"need {N_RANDOM} <= --pool and 1 <= --heldout <= --pool")
    if args.near < N_PARZEN:
        parser.error(f"--near must be at least {N_PARZEN}")
    for name in ("problems", "classifiers", "gammas"):
        setattr(args, name, list(dict.fromkeys(getattr(args, name))))
    args.sizes = sorted(set(args.sizes))
    return args


def _describe(result: dict[str, Any]) -> str:
    """AUCs and pool regret at the largest n for the progress line."""
    last = [r for r in result["records"] if r["n"] == max(r["n"] for r in result["records"])]
    parts = [
        f"{r['classifier']}/{r['gamma']}: auc={r.get('auc_uniform', math.nan):.2f}"
        f"/{r.get('auc_near', math.nan):.2f} pool={r.get('regret_pool', math.nan):.3g}"
        for r in last
    ]
    return f"cpu={result['cpu_s']:.1f}s; n={last[0]['n']}: " + "; ".join(parts)


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
    limit_threads(1)  # inherited by the spawned workers
    configure_quiet_logging()
    tasks = [
        Task(
            problem=p,
            seed=s,
            sizes=tuple(args.sizes),
            classifiers=tuple(args.classifiers),
            gammas=tuple(args.gammas),
            n_pool=args.pool,
            n_heldout=args.heldout,
            n_near=args.near,
            n_proposals=args.proposals,
            mlp_fit=args.mlp_fit,
        )
        for p in args.problems
        for s in range(args.seeds)
    ]
    print(f"{len(tasks)} tasks with {args.workers} worker(s)", file=sys.stderr, flush=True)
    start = time.perf_counter()
    results: dict[Task, dict[str, Any]] = {}

    def finished(task: Task, result: dict[str, Any]) -> None:
        results[task] = result
        print(
            f"[{len(results)}/{len(tasks)} {time.perf_counter() - start:6.0f}s] "
            f"{task.problem} seed={task.seed}: {_describe(result)}",
            file=sys.stderr,
            flush=True,
        )

    if args.workers == 1:
        for task in tasks:
            finished(task, run_task(task))
    else:
        context = multiprocessing.get_context("spawn")  # no fork of OpenMP/torch state
        with ProcessPoolExecutor(max_workers=args.workers, mp_context=context) as pool:
            futures = {pool.submit(run_task, task): task for task in tasks}
            try:
                for future in as_completed(futures):
                    finished(futures[future], future.result())
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    held = "all" if args.heldout == args.pool else f"the first {args.heldout}"
    header = [
        *environment_lines("benchmarks.bore_diagnosis", argv),
        f"- Observations: first n of one TPESampler(seed) study per problem and seed; seeds "
        f"0..{args.seeds - 1}; n in {args.sizes}; classifiers {', '.join(args.classifiers)} "
        f"with the library's defaults (MLP fit: {args.mlp_fit}); labellings "
        f"{', '.join(args.gammas)}.",
        f"- Sets: a {args.pool}-point uniform pool ({held} of it the held-out points for the "
        f"AUC); {args.near} Parzen draws from the good observations; the library's "
        f"default optimiser run {args.proposals} times; {args.workers} worker(s), one thread "
        f"each; wall time {time.perf_counter() - start:.0f} s.",
    ]
    path = write_report(args.out, [results[t] for t in tasks], tasks, args.problems, header)
    print(f"wrote {path}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
