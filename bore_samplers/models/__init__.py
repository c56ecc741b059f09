"""Layer 2 of the core: models fitted to observations.

GP regression (:mod:`~bore_samplers.models.gp_regression`) and classification
(:mod:`~bore_samplers.models.gp_classification`: probit GPs by Laplace or EP, for crashes and
0/1 outcomes) share the Matérn 5/2 ARD kernel (:mod:`~bore_samplers.models.kernels`), priors,
fitting and pathwise sampling; the preference GP of pairwise comparisons
(:mod:`~bore_samplers.models.preference`) is a probit GP on duels. BORE's classifiers live in
:mod:`~bore_samplers.models.classifiers`.
"""
