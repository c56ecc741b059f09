"""Adapters to tuning frameworks: thin layers over the framework-free core.

They translate trials into :class:`bore_samplers.Observation` records and proposals back into
parameters; the algorithms live in :mod:`bore_samplers.proposers`. :mod:`.optuna` (on
:mod:`.optuna_base`), :mod:`.binary`, :mod:`.auto` and :mod:`.preferential` (needs
optuna-dashboard) hold the Optuna samplers, :mod:`.ray` the Ray Tune searchers (needs
``ray[tune]``), :mod:`.reporting` ``track_proposals`` (where each trial's configuration came
from) and :mod:`.visualization` the plotly plots (also ``bore_samplers.visualization``).
"""
