"""Loaded by the Python interpreter of an agent running under `mm record`.

Installs the pyautogui recorder hook, then runs any other `sitecustomize` the agent's
environment had, so that putting this directory on PYTHONPATH changes nothing else.
"""

import importlib
import sys

import _mm_record_hook

_mm_record_hook.install()


def _chain() -> None:
    here = __file__.rsplit("/", 1)[0]
    saved = list(sys.path)
    this = sys.modules.pop("sitecustomize", None)
    sys.path[:] = [p for p in sys.path if p.rstrip("/") != here.rstrip("/")]
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    finally:
        sys.path[:] = saved
        if this is not None:
            sys.modules["sitecustomize"] = this


_chain()
