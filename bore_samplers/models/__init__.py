"""Layer 2 of the core: models fitted to observations.

GP regression (:mod:`~bore_samplers.models.gp_regression`) and classification
(:mod:`~bore_samplers.models.gp_classification`) share the Matérn 5/2 ARD kernel
(:mod:`~bore_samplers.models.kernels`), priors, fitting and pathwise sampling; BORE's
classifiers live in :mod:`~bore_samplers.models.classifiers`.
"""
