"""Every benchmark, declared: which problems, which samplers, how many seeds and trials.

Run one with ``python -m benchmarks run <name>`` (``python -m benchmarks list`` lists them);
its summary goes to ``benchmarks/results/<name>/``. A benchmark is groups of problems, each
with the samplers that apply to them (and, for long studies and parallel workers, the study
sizes and worker counts), so that one declaration can rank each kind among its own samplers.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.real_tuning import DATASETS, problem_names

__all__ = ["BENCHMARKS", "Benchmark", "Group"]


@dataclass(frozen=True)
class Group:
    """Problems and the samplers run on each; every worker count, preload size and batch size
    of synchronous rounds (0: none), whose trials are told at the round's end or, with
    ``interleaved``, one by one before the next round's asks (Ray Tune's driver); ``seeds``,
    if set, replaces the benchmark's for this group (problems whose samplers nearly tie need
    more runs to be told apart)."""

    problems: tuple[str, ...]
    samplers: tuple[str, ...]
    jobs: tuple[int, ...] = (1,)
    preload: tuple[int, ...] = (0,)
    batches: tuple[int, ...] = (0,)
    interleaved: bool = False
    seeds: int | None = None


@dataclass(frozen=True)
class Benchmark:
    """A benchmark: its groups, seeds ``0..seeds-1``, trials per study (rounds where a group
    runs in batches), the reference sampler of the paired counts, and whether the values of
    preloaded studies are ranked (otherwise they measure time and memory only)."""

    title: str
    description: str
    groups: tuple[Group, ...]
    seeds: int = 10
    trials: int = 50
    reference: str | None = None
    rank_preloaded: bool = False


def _bbob(suite: str, functions: tuple[int, ...], dimension: int, instance: int = 2) -> tuple:
    return tuple(f"{suite}.f{f}.d{dimension}.i{instance}" for f in functions)


_OPTUNA = ("gp", "tpe", "random")
#: Continuous bbob functions of the quality benchmarks: separable, ill-conditioned, a valley,
#: multimodal with and without structure (instance 2, 5-D).
_CONTINUOUS = _bbob("bbob", (2, 7, 8, 15, 21), 5)
_SPREAD = _bbob("bbob", (1, 3, 6, 8, 10, 13, 15, 17, 20, 21, 22, 24), 5)
#: The samplers of the constrained and crashing benchmarks in 10-D and 20-D, and the
#: bbob-constrained functions they are ranked on (a sphere, an ellipsoid, f14).
_CONSTRAINT_SAMPLERS = ("auto", "cmes", "portfolio", *_OPTUNA)
_CONSTRAINED_FUNCTIONS = (1, 8, 14)


#: Gradient boosting on digits trains ten trees a round and takes 4-8 s per evaluation on two
#: cores, too long for thousands of uncached evaluations.
_COSTLY = ("real_tuning.grid-boosting.digits",)


#: The integer grids of the real-tuning benchmark.
_REAL_TUNING_GRIDS = ("grid-forest", "grid-boosting")


def _real_tuning(datasets: tuple[str, ...], seeds: int, trials: int) -> Benchmark:
    """Our samplers and Optuna's on every real-tuning space of ``datasets``; the categorical
    SVM, whose 168 distinct configurations leave the samplers near ties, with three times
    the seeds (its tables are complete, so the extra runs cost only the samplers' time)."""
    ours = ("auto", "portfolio", "bore", "cmes")
    svm_seeds = 3 * seeds
    return Benchmark(
        "Real tuning: scikit-learn estimators on bundled datasets",
        f"Cross-validated error rate (1 - R² on diabetes) after {trials} trials: forests and "
        "gradient boosting over integer grids (boosting not on digits, where one evaluation "
        f"takes seconds), an SVM over categorical parameters ({svm_seeds} seeds), and a "
        "conditional space (the estimator, then its own parameters), on "
        f"{', '.join(datasets)}. Evaluations are cached as tables, shared by every run.",
        (
            Group(
                tuple(p for p in problem_names(_REAL_TUNING_GRIDS, datasets) if p not in _COSTLY),
                (*ours, "gp", "tpe", "cmaes", "random"),
            ),
            Group(
                tuple(problem_names(("categorical-svm",), datasets)),
                (*ours, "gp", "tpe", "cmaes", "random"),
                seeds=svm_seeds,
            ),
            Group(
                tuple(problem_names(("conditional",), datasets)),
                (*ours, "gp", "tpe", "tpe-group", "cmaes", "random"),
            ),
        ),
        seeds=seeds,
        trials=trials,
        reference="auto",
    )


def _categorical_spaces(
    title: str, description: str, family: str, seeds: int = 10, trials: int = 50
) -> Benchmark:
    """Our samplers and Optuna's on the SVM space ``{family}-svm`` (wine, breast cancer) and
    on bbob 8, 15 and 21 in 5-D of the problem family ``family``."""
    problems = (
        *problem_names((f"{family}-svm",), ("wine", "breast_cancer")),
        *_bbob(family, (8, 15, 21), 5),
    )
    return Benchmark(
        title,
        description,
        (Group(problems, ("auto", "portfolio", "bore", "cmes", *_OPTUNA)),),
        seeds=seeds,
        trials=trials,
        reference="auto",
    )


BENCHMARKS: dict[str, Benchmark] = {
    "kinds": Benchmark(
        "AutoSampler across kinds of problems",
        "Best feasible value after the last trial, ranked per (problem, seed) among the "
        "samplers of each kind. COCO's bbob, bbob-mixint and bbob-constrained functions "
        "(instance 2), bbob functions on categorical grids, with crash regions and behind "
        "conditional branches, and an all-categorical SVM on wine.",
        (
            Group(_CONTINUOUS, ("auto", "portfolio", "bore", "cmaes", *_OPTUNA)),
            Group(
                _bbob("bbob-mixint", (8, 15, 21), 5),
                ("auto", "portfolio", "bore", "cmaes", *_OPTUNA),
            ),
            Group(
                (*_bbob("categorical", (8, 15), 5), "real_tuning.categorical-svm.wine"),
                ("auto", "portfolio", "bore", *_OPTUNA),
            ),
            Group(
                ("conditional.branches.i2", "conditional.layers.f8.i2"),
                ("auto", "portfolio", "bore", "tpe-group", *_OPTUNA),
            ),
            Group(
                _bbob("bbob-constrained", (1, 8, 14, 27, 44), 3),
                ("auto", "cmes", "cmes-cei", "portfolio", *_OPTUNA),
            ),
            Group(
                _bbob("crashing", (1, 8), 3),
                ("auto", "cmes", "cmes-cei", "portfolio", "bore", *_OPTUNA),
            ),
        ),
        reference="auto",
    ),
    "conditional": Benchmark(
        "Conditional spaces: AutoSampler against TPE with groups",
        "Best value after 40 trials on conditional spaces: the scikit-learn estimator and "
        "then its own parameters (wine, breast cancer), and bbob functions behind a branch "
        "choice or a layer count. AutoSampler models the parameters every trial has, and "
        "each group of branch parameters with a model of its own fitted on the trials of "
        "the same branch; Optuna's TPE with group=True models each group of parameters that "
        "occur together. auto-choice-forest and auto-choice-100: AutoSampler with a random "
        "forest of 32 or 100 trees on the categorical choice instead of each choice's "
        "smoothed share of good trials.",
        (
            Group(
                (
                    *problem_names(("conditional",), ("wine", "breast_cancer")),
                    "conditional.branches.i2",
                    "conditional.branches.i3",
                    "conditional.layers.f8.i2",
                ),
                (
                    "auto",
                    "tpe-group",
                    "tpe",
                    "gp",
                    "random",
                    "auto-choice-forest",
                    "auto-choice-100",
                ),
            ),
        ),
        trials=40,
        reference="auto",
    ),
    "conditional-routes": Benchmark(
        "Conditional spaces: how AutoSampler draws the branch parameters",
        "The problems of the conditional benchmark, with AutoSampler's five routes for the "
        "parameters that only some trials have: each group by a model of its own (auto, the "
        "default), every parameter of every branch at once by one random forest on the union "
        "space with inactive parameters imputed, as SMAC does (auto-union), or by the GP "
        "portfolio on the same imputed features (auto-union-gp), each group by "
        "Optuna's multivariate TPE (auto-tpe-group), or each parameter by univariate TPE "
        "(auto-tpe, the route before); and Optuna's TPE with group=True.",
        (
            Group(
                (
                    *problem_names(("conditional",), ("wine", "breast_cancer")),
                    "conditional.branches.i2",
                    "conditional.branches.i3",
                    "conditional.layers.f8.i2",
                ),
                ("auto", "auto-union", "auto-union-gp", "auto-tpe-group", "auto-tpe", "tpe-group"),
            ),
        ),
        trials=40,
        reference="auto",
    ),
    "categorical": _categorical_spaces(
        "All-categorical spaces: which of our samplers proposes there",
        "Best value after 60 trials on spaces whose every parameter is categorical: an SVM "
        "(kernel, C, gamma, shrinking) on wine and on breast cancer, and three bbob functions "
        "on 5-level grids in 5-D whose levels are categories.",
        "categorical",
        trials=60,
    ),
    "mostly-categorical": _categorical_spaces(
        "Mostly categorical spaces: which of our samplers proposes there",
        "Best value after 50 trials (20 seeds) on spaces where most parameters are categorical "
        "and some numeric: an SVM (kernel, class weights, shrinking; log-scaled C and gamma) on "
        "wine and on breast cancer, and three bbob functions in 5-D whose first three "
        "coordinates are categories (5 levels) and the other two floats.",
        "mostly-categorical",
        seeds=20,
    ),
    "gp-suite": Benchmark(
        "The GP samplers on twelve bbob functions",
        "Final best value after 100 trials on bbob functions 1 to 24 (a spread of twelve), "
        "5-D, instance 2: our GP samplers against Optuna's.",
        (Group(_SPREAD, ("portfolio", "gp-ei", "gp-lcb", "portfolio-esp", "cmes", *_OPTUNA)),),
        trials=100,
        reference="portfolio",
    ),
    "bore-suite": Benchmark(
        "BORE's variants on twelve bbob functions",
        "Final best value after 100 trials: BORE's classifiers and weightings, the BORE "
        "paper's settings, and Optuna's samplers.",
        (
            Group(
                _SPREAD,
                (
                    "bore",
                    "bore-rf",
                    "bore-xgb",
                    "bore-xgb-ei",
                    "bore-mlp-ei",
                    "bore-xgb-paper",
                    *_OPTUNA,
                ),
            ),
        ),
        trials=100,
        reference="bore",
    ),
    "mixed-integer": Benchmark(
        "Mixed-integer spaces in 10-D",
        "Final best value after 100 trials on bbob-mixint functions (separable, a valley, "
        "multimodal with and without structure) in 10-D, instance 2: eight integer "
        "parameters of 2 to 16 levels and two floats.",
        (
            Group(
                _bbob("bbob-mixint", (2, 8, 15, 21), 10),
                ("auto", "portfolio", "cmes", *_OPTUNA),
            ),
        ),
        trials=100,
        reference="auto",
    ),
    "constrained-10d": Benchmark(
        "Constraints and crashes in 10-D",
        "Best feasible value after 50 trials on bbob-constrained functions 1, 8 and 14 "
        "(instance 2) and on bbob functions 1 and 8 that crash in part of their box, all in "
        "10-D: the constrained and crashing kinds of the kinds benchmark, in more dimensions.",
        (
            Group(_bbob("bbob-constrained", _CONSTRAINED_FUNCTIONS, 10), _CONSTRAINT_SAMPLERS),
            Group(_bbob("crashing", (1, 8), 10), _CONSTRAINT_SAMPLERS),
        ),
        reference="auto",
    ),
    "constrained-20d": Benchmark(
        "Constraints in 20-D",
        "Best feasible value after 50 trials on bbob-constrained functions 1, 8 and 14 "
        "(instance 2) in 20-D: the constrained group of constrained-10d in twice the "
        "dimensions.",
        (Group(_bbob("bbob-constrained", _CONSTRAINED_FUNCTIONS, 20), _CONSTRAINT_SAMPLERS),),
        reference="auto",
    ),
    "high-dimensional": Benchmark(
        "Twenty and forty dimensions: bbob-largescale",
        "Final best value after 200 trials on four bbob-largescale functions (separable, a "
        "valley, multimodal, weakly structured) in 20-D and in 40-D.",
        (
            Group(
                (
                    *_bbob("bbob-largescale", (1, 8, 15, 21), 20),
                    *_bbob("bbob-largescale", (1, 8, 15, 21), 40),
                ),
                ("auto", "cmaes", *_OPTUNA),
            ),
        ),
        trials=200,
        reference="auto",
    ),
    "multi-objective": Benchmark(
        "Multi-objective studies",
        "Hypervolume of the feasible trials against a fixed reference point (minus it is "
        "ranked): pymoo's ZDT1, ZDT2, DTLZ2 (3 objectives) and the constrained BNH, and two "
        "bbob-biobj functions.",
        (
            Group(
                (
                    "pymoo.zdt1.d6",
                    "pymoo.zdt2.d6",
                    "pymoo.dtlz2.d6",
                    "pymoo.bnh",
                    *_bbob("bbob-biobj", (1, 10), 5),
                ),
                ("auto", "cmes", "portfolio", "bore", "gp", "tpe", "random", "nsga2"),
            ),
        ),
        trials=100,
        reference="tpe",
    ),
    "three-objectives": Benchmark(
        "Three objectives in 10-D",
        "Hypervolume of the trials after 100 trials against a fixed reference point (minus it "
        "is ranked): pymoo's DTLZ2 with three objectives and ten variables.",
        (
            Group(
                ("pymoo.dtlz2.d10",), ("auto", "cmes", "portfolio", "gp", "tpe", "random", "nsga2")
            ),
        ),
        trials=100,
        reference="auto",
    ),
    "stall": Benchmark(
        "A narrow valley, 300 trials: no stall",
        "Best value after 300 trials on bbob's Rosenbrock (f8, 5-D, instance 2), whose curved "
        "valley a GP sampler refines in ever smaller steps: our GP samplers against GPSampler.",
        (Group(_bbob("bbob", (8,), 5), ("auto", "cmes", "cmes-cei", "portfolio", "gp")),),
        seeds=3,
        trials=300,
        reference="auto",
    ),
    "binary": Benchmark(
        "Binary outcomes",
        "Fauvel & Chalk's protocol on bbob functions: 0/1 outcomes drawn from Φ of the scaled "
        "function, judged by the true function at each run's inferred best.",
        (
            Group(
                _bbob("binary", (2, 8, 15), 2) + _bbob("binary", (1, 21), 3),
                ("ucb-phi", "ucb-f", "binary-ei", "thompson", *_OPTUNA),
            ),
        ),
        seeds=40,
        trials=100,
        reference="ucb-phi",
    ),
    "preferential": Benchmark(
        "Preferential studies",
        "A simulated person with probit noise marks the worst trial of each screen (2 or 4 "
        "trials); a trial budget is a number of clicks. Judged by the true utility at the "
        "configuration a fresh PreferentialSampler infers from each run's duels.",
        (
            Group(
                tuple(
                    f"preferential.f{f}.d{d}.i2.g{g}" for f, d in ((2, 2), (21, 3)) for g in (2, 4)
                ),
                ("muc", "dueling-thompson", "dashboard-gp", "random"),
            ),
        ),
        seeds=20,
        trials=30,
        reference="muc",
    ),
    "parallel": Benchmark(
        "Four asynchronous workers against one",
        "Final best value after 50 trials with one worker and with four (threads of "
        "study.optimize), each sampler's four-worker runs paired with its one-worker runs.",
        (
            Group(
                _bbob("bbob", (3, 21), 2) + _bbob("bbob", (21,), 5),
                ("auto", "portfolio", "gp-ei", "cmes", "bore", "gp", "tpe"),
                jobs=(1, 4),
            ),
        ),
        seeds=40,
    ),
    "many-workers": Benchmark(
        "Eight and thirty-two workers in synchronous rounds",
        "Best value after 8 rounds of B = 8 or 32 trials, ranked per batch size. In each round "
        "the B trials are asked one after another, each seeing the round's earlier trials "
        "running with their parameters (as B processes asking at once on one storage see "
        "them), evaluated, and told together at the round's end. The sampler's share of wall "
        "time for a 10-second objective is modelled from the measured seconds per trial (ask, "
        "suggestions, tell), t: with B Optuna processes on one storage, each asking for "
        "itself, t / (t + 10 s); with a Ray Tune driver that suggests the round's B trials "
        "one after another, (sum of the round's t) / (that sum + 10 s). Rounds of 32 'told "
        "one by one' tell each trial of a round just before the ask that takes its slot in "
        "the next, as Ray Tune's driver does (its loop handles one result, then fills the "
        "free slot): every ask sees one more finished trial. auto-full-searches is "
        "AutoSampler without the lighter search of the asks that follow another in a batch.",
        (
            Group(
                _bbob("bbob", (3, 21), 5) + _bbob("bbob", (8,), 10),
                ("auto", "cmes", "tpe", "gp"),
                batches=(8, 32),
            ),
            Group(
                _bbob("bbob", (3, 21), 5) + _bbob("bbob", (8,), 10),
                ("auto", "auto-full-searches", "tpe", "gp"),
                batches=(32,),
                interleaved=True,
            ),
        ),
        trials=8,
        reference="auto",
    ),
    "many-constraints": Benchmark(
        "Sixteen constraints, 100 trials: time per study",
        "Final best feasible value and seconds per trial after 100 trials of bbob-constrained "
        "functions 5 and 11 in 5-D (16 constraints each, instance 2).",
        (Group(_bbob("bbob-constrained", (5, 11), 5), ("auto", *_OPTUNA)),),
        trials=100,
        reference="auto",
    ),
    "long-budgets": Benchmark(
        "Long budgets: the 600-row subset against full fits",
        "Final best value of cMES after 1,000 or 2,000 random finished trials of a 10-D bbob "
        "function and 30 more that it proposes: its GPs fitted on the 600-row subset (the "
        "default) against fitted on every trial.",
        (
            Group(
                _bbob("bbob", (8, 21), 10),
                ("cmes", "cmes-full"),
                preload=(1000, 2000),
            ),
        ),
        trials=30,
        reference="cmes",
        rank_preloaded=True,
    ),
    "long-studies": Benchmark(
        "Long studies: time per proposal and memory",
        "A fresh process per cell fills a study with N random finished trials of a 5-D (and a "
        "10-D) bbob function and asks six more: the first ask is cold, the other five warm.",
        (
            Group(
                _bbob("bbob", (21,), 5),
                ("bore", "cmes", "portfolio", "auto", "tpe"),
                preload=(1000, 2000, 3000, 10000),
            ),
            Group(_bbob("bbob", (21,), 5), ("gp",), preload=(1000, 2000, 3000)),
            Group(_bbob("bbob", (21,), 10), ("cmes", "portfolio", "gp"), preload=(1000,)),
        ),
        seeds=1,
        trials=6,
    ),
    "latency": Benchmark(
        "One proposal at 200 finished trials in 10-D, and at 100 on six categoricals",
        "Seconds per trial after 200 random finished trials of a 10-D bbob function (the "
        "function itself costs microseconds): the GP samplers against GPSampler; and after "
        "100 on a bbob function over six 5-level categorical parameters.",
        (
            Group(
                _bbob("bbob", (21,), 10),
                ("gp", "cmes", "cmes-cei", "cmes-ap", "portfolio", "gp-ei", "bore", "tpe"),
                preload=(200,),
            ),
            Group(
                ("categorical.f21.d6.i2",),
                ("auto", "cmes", "portfolio", "bore", "gp", "tpe"),
                preload=(100,),
            ),
        ),
        seeds=3,
        trials=6,
    ),
    "real-tuning": _real_tuning(DATASETS, seeds=10, trials=30),
    # A small one, run in full: wine's evaluations take about a second.
    "real-tuning-wine": _real_tuning(("wine",), seeds=10, trials=30),
}
