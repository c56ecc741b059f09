"""Adapters to tuning frameworks: thin layers over the framework-free core.

* :mod:`bore_samplers.integrations.optuna`: Optuna samplers (``BORESampler``,
  ``CMESSampler``, ``PortfolioSampler``), on the plumbing every Optuna sampler here shares
  (:mod:`bore_samplers.integrations.optuna_base`).
* :mod:`bore_samplers.integrations.ray`: Ray Tune searchers (``BORESearch``, ``CMESSearch``,
  ``PortfolioSearch``, ``BinaryOutcomeSearch``); needs ``ray[tune]``.
* :mod:`bore_samplers.integrations.binary`: ``BinaryOutcomeSampler`` (Optuna) for objectives
  that return success (1) or failure (0); ``BinaryOutcomeSearch`` is importable from here too
  (loaded from the Ray module on first access).
* :mod:`bore_samplers.integrations.preferential`: ``PreferentialSampler`` for optuna-dashboard's
  preferential studies; needs optuna-dashboard.
* :mod:`bore_samplers.integrations.reporting`: ``track_proposals``, where each trial's
  configuration came from (the model, the start-up design or a fallback), as the examples
  print it.
* :mod:`bore_samplers.integrations.visualization`: plotly plots of a study's portfolio weights
  and proposal sources (matplotlib twins in its ``matplotlib`` module); needs
  plotly. Also reachable as ``bore_samplers.visualization``.

Adapters translate trials into :class:`bore_samplers.Observation` records and proposals back
into parameters; the algorithms live in :mod:`bore_samplers.proposers`.
"""
