"""Layer 3 of the core: acquisition functions computed from fitted models.

Scoring members with exact gradients that compose (:mod:`~bore_samplers.acquisitions.base`:
sums of log terms, averages over hyperparameter samples, the map to unit points);
improvement-based (:mod:`~bore_samplers.acquisitions.improvement`: PI, EI, GP-LCB),
entropy-based (:mod:`~bore_samplers.acquisitions.entropy`: MES and constrained MES), the
probability of feasibility (:mod:`~bore_samplers.acquisitions.feasibility`), BORE's density
ratio (:mod:`~bore_samplers.acquisitions.density_ratio`), and those of binary outcomes and
preferences (:mod:`~bore_samplers.acquisitions.binary`: UCB_Φ, binary EI, Thompson sampling
and the Maximally Uncertain Challenge, with epistemic and aleatoric variances in closed
form).
"""
