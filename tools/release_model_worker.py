"""Worker of tools/release_model.py: runs inside one vLLM release (PYTHONPATH = its extracted wheel + deps) and
observes, by executing that release's own code on CPU, what it does with a draft's tensors.

    python tools/release_model_worker.py REQUEST.json OUT.json

The observation is dspark_ckpt/verify/release_worker.py, which `verify --engine installed` runs too (the installed
package holds it; tools/ is not installed). This file loads it by path, since the worker runs with only the release
on its path, and is that module: `import release_model_worker` (tools/sglang_release_model_worker.py, the agreement
tests) gets it, so what they set on it is what its functions read.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PATH = Path(__file__).resolve().parent.parent / "dspark_ckpt" / "verify" / "release_worker.py"
NAME = "dspark_release_worker"


def load() -> ModuleType:
    if NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(NAME, PATH)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[NAME] = module
        spec.loader.exec_module(module)
    return sys.modules[NAME]


if __name__ == "__main__":
    sys.exit(load().main(sys.argv[-2:]))
sys.modules[__name__] = load()
