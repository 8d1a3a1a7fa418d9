"""The project's own test run: ``tl_ds.radix`` is the reference, ``impl/radix.py``.

The course tests import ``tl_ds.radix`` and nothing else. Graders choose which file that
import yields for each run; in this project's own run it is the reference, loaded from
``impl/radix.py`` under the module name ``tl_ds.radix`` without writing any file.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent.parent / "impl" / "radix.py"


def _load_reference_as_tl_ds() -> None:
    package = types.ModuleType("tl_ds")
    package.__path__ = []
    spec = importlib.util.spec_from_file_location("tl_ds.radix", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["tl_ds"] = package
    sys.modules["tl_ds.radix"] = module
    spec.loader.exec_module(module)
    package.radix = module


def pytest_configure(config) -> None:
    _load_reference_as_tl_ds()
