"""AutoSampler variants measured against the default (see ``benchmarks/samplers.py``)."""

from __future__ import annotations

from bore_samplers import AutoSampler

__all__ = ["AutoBranchModel", "AutoBranchTPE", "AutoBranchTPEGroup", "AutoBranchUnion"]


class AutoBranchModel(AutoSampler):
    """Branch parameters proposed group by group by this package's models."""

    _branch_route = "model"


class AutoBranchUnion(AutoSampler):
    """Every parameter of every branch proposed by one random forest on the union space,
    inactive parameters imputed (SMAC's way)."""

    _branch_route = "union"


class AutoBranchTPEGroup(AutoSampler):
    """Branch parameters proposed group by group by Optuna's multivariate TPE."""

    _branch_route = "tpe-group"


class AutoBranchTPE(AutoSampler):
    """Branch parameters drawn one by one by Optuna's univariate TPE."""

    _branch_route = "tpe"
