"""Layer 3 of the core: acquisition functions computed from fitted models.

Improvement-based (:mod:`~bore_samplers.acquisitions.improvement`), entropy-based
(:mod:`~bore_samplers.acquisitions.entropy`: MES and constrained MES), the probability of
feasibility (:mod:`~bore_samplers.acquisitions.feasibility`), averaging over hyperparameter
samples (:mod:`~bore_samplers.acquisitions.averaging`) and BORE's density ratio
(:mod:`~bore_samplers.acquisitions.density_ratio`).
"""
