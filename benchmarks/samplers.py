"""The sampler registry: a name -> a factory ``seed -> optuna sampler``, ours and Optuna's.

Every entry states its options in full, so that a change of a sampler's defaults leaves the
meaning of a name (and its cached runs) alone only where the name says so: names without
options (``bore``, ``portfolio``, ``auto``...) are "the current default". Samplers that need
an optional package (``xgboost``, ``cmaes``, ``optuna-dashboard``) say so through
:func:`unavailable_reason` instead of failing inside a run.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

import optuna

__all__ = ["SAMPLERS", "SamplerEntry", "make_sampler", "unavailable_reason"]


@dataclass(frozen=True)
class SamplerEntry:
    """How to build one sampler: ``module.class_name(seed=seed, **options)``.

    ``needs`` names the modules that must import for it to run (beyond optuna and ours).
    ``patches_process``: building it changes state shared by the whole process (a variant
    that patches a class or table of ours), so each of its cells runs in a fresh process.
    """

    module: str
    class_name: str
    options: dict[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    patches_process: bool = False

    def build(self, seed: int) -> optuna.samplers.BaseSampler:
        cls = getattr(importlib.import_module(self.module), self.class_name)
        return cls(seed=seed, **self.options)


def _ours(class_name: str, needs: tuple[str, ...] = (), **options: Any) -> SamplerEntry:
    return SamplerEntry("bore_samplers", class_name, options, needs)


def _optuna(class_name: str, needs: tuple[str, ...] = (), **options: Any) -> SamplerEntry:
    return SamplerEntry("optuna.samplers", class_name, options, needs)


def _binary(acquisition: str) -> SamplerEntry:
    return _ours("BinaryOutcomeSampler", acquisition=acquisition, n_startup_trials=5)


_XGB = ("xgboost",)
SAMPLERS: dict[str, SamplerEntry] = {
    # Ours, with their defaults.
    "auto": _ours("AutoSampler"),
    "bore": _ours("BORESampler"),
    "portfolio": _ours("PortfolioSampler"),
    "cmes": _ours("CMESSampler"),
    # Variants named in docs/: the portfolio's members alone, the Entropy Search Portfolio,
    # cMES's constrained EI (Gardner et al., 2014) and BORE's other classifiers and weightings.
    "gp-ei": _ours("PortfolioSampler", portfolio=["ei"]),
    "gp-lcb": _ours("PortfolioSampler", portfolio=["lcb"]),
    "portfolio-esp": _ours("PortfolioSampler", selection="entropy"),
    "gp-noisy-ei": _ours("PortfolioSampler", portfolio=["noisy_ei"]),
    "cmes-cei": _ours("CMESSampler", acquisition="cei"),
    "cmes-ap": _ours("CMESSampler", acquisition="ap"),
    "cmes-full": SamplerEntry("benchmarks.variants", "CMESFullFit"),
    "bore-rf": _ours("BORESampler", classifier="rf", weighting="pi"),
    "bore-xgb": _ours("BORESampler", _XGB, classifier="xgboost", weighting="pi"),
    "bore-xgb-ei": _ours("BORESampler", _XGB, classifier="xgboost", weighting="ei"),
    "bore-mlp-ei": _ours("BORESampler", classifier="mlp", weighting="ei"),
    # The BORE paper's settings: gamma = 1/3 and 500 uniform candidates.
    "bore-xgb-paper": _ours(
        "BORESampler",
        _XGB,
        classifier="xgboost",
        weighting="pi",
        gamma=1 / 3,
        acquisition_optimizer="random",
    ),
    # AutoSampler's routes for branch parameters (conditional spaces): each group jointly by
    # our models, every branch at once by a random forest on the union space (SMAC's way),
    # each group by Optuna's multivariate TPE, or each parameter by univariate TPE.
    "auto-native": SamplerEntry("benchmarks.variants", "AutoBranchModel"),
    "auto-union": SamplerEntry("benchmarks.variants", "AutoBranchUnion"),
    "auto-union-gp": SamplerEntry("benchmarks.variants", "AutoBranchUnionGP"),
    "auto-full-searches": SamplerEntry(
        "benchmarks.variants", "AutoFullSearches", patches_process=True
    ),
    "auto-choice-forest": SamplerEntry(
        "benchmarks.variants", "AutoChoiceForest", patches_process=True
    ),
    "auto-choice-100": SamplerEntry(
        "benchmarks.variants", "AutoChoiceForest100", patches_process=True
    ),
    "auto-tpe-group": SamplerEntry("benchmarks.variants", "AutoBranchTPEGroup"),
    "auto-tpe": SamplerEntry("benchmarks.variants", "AutoBranchTPE"),
    # Binary outcomes (Fauvel & Chalk, 2021): UCB_Φ and its baselines, 5 start-up trials.
    "ucb-phi": _binary("ucb_phi"),
    "ucb-f": _binary("ucb_f"),
    "binary-ei": _binary("binary_ei"),
    "thompson": _binary("thompson"),
    # Preferential studies: MUC and dueling Thompson; optuna-dashboard's own sampler.
    "muc": SamplerEntry(
        "bore_samplers.integrations.preferential", "PreferentialSampler", {}, ("optuna_dashboard",)
    ),
    "dueling-thompson": SamplerEntry(
        "bore_samplers.integrations.preferential",
        "PreferentialSampler",
        {"acquisition": "thompson"},
        ("optuna_dashboard",),
    ),
    "dashboard-gp": SamplerEntry(
        "optuna_dashboard.preferential.samplers.gp",
        "PreferentialGPSampler",
        {},
        ("optuna_dashboard", "torch", "botorch"),
    ),
    # Optuna's built-ins with their defaults (TPE 5.0: multivariate, constant liar).
    "tpe": _optuna("TPESampler"),
    "tpe-group": _optuna("TPESampler", multivariate=True, group=True),
    "gp": _optuna("GPSampler"),
    "cmaes": _optuna("CmaEsSampler", ("cmaes",)),
    "random": _optuna("RandomSampler"),
    "nsga2": _optuna("NSGAIISampler"),
}


def unavailable_reason(name: str) -> str | None:
    """Why sampler ``name`` cannot run here (unknown, or a package missing), or ``None``."""
    if name not in SAMPLERS:
        return f"unknown sampler {name!r}; choose from {', '.join(SAMPLERS)}"
    entry = SAMPLERS[name]
    for module in (entry.module, *entry.needs):
        try:
            importlib.import_module(module)
        except Exception as error:  # any failure means "not usable here"
            return f"{name} needs {module} ({type(error).__name__}: {error})"
    return None


def make_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    """A fresh sampler ``name`` seeded with ``seed``.

    Raises
    ------
    ValueError
        If ``name`` is unknown or cannot run here (the reason is in the message).
    """
    reason = unavailable_reason(name)
    if reason is not None:
        raise ValueError(reason)
    return SAMPLERS[name].build(seed)
