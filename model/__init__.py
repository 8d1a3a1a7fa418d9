"""The naive dict-of-prefixes model of the ds.07 radix tree."""

from model.prefix_model import ROOT, PrefixModel

__all__ = ["ROOT", "PrefixModel"]
