"""Worker of tools/release_model.py: runs inside one vLLM release (PYTHONPATH = its extracted wheel + deps) and
observes, by executing that release's own code on CPU, what it does with a draft's tensors.

    python tools/release_model_worker.py REQUEST.json OUT.json

The observation is dspark_ckpt/verify/release_worker.py, which `verify --engine installed` runs too (the installed
package holds it; tools/ is not installed). This file runs it by path, since the worker runs with only the release
on its path: as `__main__`, as it always ran (what the data quote of its objects' reprs is normalised by
tools/release_model.py, so the name does not reach them), and, imported, under this file's name, as the module
itself: `import release_model_worker` (the agreement tests) gets it, so what they set on it is what its functions
read.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path
from types import ModuleType

PATH = Path(__file__).resolve().parent.parent / "dspark_ckpt" / "verify" / "release_worker.py"
NAME = "release_model_worker"  # the name the SGLang worker and verify's engine give it too


def load() -> ModuleType:
    found = sys.modules.get(NAME)
    if found is None or getattr(found, "__file__", None) != str(PATH):
        spec = importlib.util.spec_from_file_location(NAME, PATH)
        assert spec is not None and spec.loader is not None
        found = importlib.util.module_from_spec(spec)
        sys.modules[NAME] = found
        spec.loader.exec_module(found)
    return found


if __name__ == "__main__":
    runpy.run_path(str(PATH), run_name="__main__")
else:
    sys.modules[__name__] = load()
