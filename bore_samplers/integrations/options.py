"""The adapters' shared constructor surface, kept importable here: see
:mod:`bore_samplers.proposers.options`."""

from bore_samplers.proposers.options import proposer_options, public_options

__all__ = ["proposer_options", "public_options"]
