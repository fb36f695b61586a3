"""Worker of tools/sglang_release_model.py: runs inside one SGLang release (PYTHONPATH = its extracted wheel + deps)
and observes, by executing that release's own code on CPU, what it does with a draft's tensors.

    python tools/sglang_release_model_worker.py REQUEST.json OUT.json

The worker is dspark_ckpt/verify/sglang_worker.py, which `verify --engine installed` runs too (the installed
package holds it; tools/ is not installed); it runs verify/release_worker.py's observation inside SGLang. This file
loads it by path, since the worker runs with only the release on its path, and runs its main.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PATH = Path(__file__).resolve().parent.parent / "dspark_ckpt" / "verify" / "sglang_worker.py"

if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location("dspark_sglang_worker", PATH)
    assert spec is not None and spec.loader is not None
    worker = importlib.util.module_from_spec(spec)
    sys.modules["dspark_sglang_worker"] = worker
    spec.loader.exec_module(worker)
    sys.exit(worker.main(sys.argv[-2:]))
