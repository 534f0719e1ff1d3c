"""The two floating-point paths of ``.ci/run``: the CPU's own kernels, and the lowest ones.

NumPy, OpenBLAS, torch's ATen and torch's MKL each pick floating-point kernels by CPU, so
the last bits of a float64 result differ between machines (AVX2 or AVX-512, Intel or AMD),
and a stored output that shows those bits fails nbval on the next machine. ``.ci/run``
therefore runs every notebook twice: once as the machine is (the first path), and once with
every one of those layers switched to a different, lower level (the second path):

* NumPy: every dispatchable SIMD target switched off (``NPY_DISABLE_CPU_FEATURES``), so only
  the baseline kernels (x86-64-v2) run;
* OpenBLAS (NumPy's BLAS): the Prescott kernels (``OPENBLAS_CORETYPE``), or Nehalem where the
  first path already runs Prescott's (some machines here set it);
* ATen (torch's elementwise kernels): ``ATEN_CPU_CAPABILITY=default``, no AVX2/AVX-512;
* MKL (torch's BLAS): ``MKL_CBWR=COMPATIBLE``, MKL's code path for any x86-64 CPU.

A switch that does not take effect would make the second path repeat the first, silently.
So each path prints planted values, one per layer, whose last bits depend on the kernel
(long reductions, a matrix product, vectorised exp/log/tanh/sigmoid), and ``compare`` fails
unless every layer's value differs between the two paths.

Usage (the environment must be set before Python starts; NumPy and OpenBLAS read it at load)::

    python tests/fp_paths.py planted > first.json
    eval "$(python tests/fp_paths.py env first.json)"     # then, in that shell:
    python tests/fp_paths.py planted > second.json
    python tests/fp_paths.py compare first.json second.json

Only ``planted`` needs torch (about 1.5 s of CPU to import), so the two functions that read it import it
themselves: ``env`` and ``compare``, run three times per CI run, start without it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
from pathlib import Path

import numpy as np
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
from threadpoolctl import threadpool_info

LAYERS = ("numpy", "openblas", "aten", "mkl")
SEED = 20261203


def digest(*arrays: object) -> str:
    """A short hash of the exact bits of some arrays."""
    hasher = hashlib.sha256()
    for array in arrays:
        hasher.update(np.ascontiguousarray(np.asarray(array)).tobytes())
    return hasher.hexdigest()[:16]


def planted_values() -> dict[str, str]:
    """One hash per layer of values whose last bits depend on that layer's kernels."""
    import torch

    rng = np.random.default_rng(SEED)
    x = rng.standard_normal(100_003)
    x32 = x.astype(np.float32)
    square = rng.standard_normal((300, 300))
    vector = torch.from_numpy(x)
    matrix = torch.from_numpy(square)
    return {
        "numpy": digest(np.exp(x), np.log(np.abs(x)), np.tanh(x), np.exp(x32), np.log(np.abs(x32))),
        "openblas": digest(np.dot(x, x[::-1]), np.dot(x32, x32[::-1]), square @ square),
        "aten": digest(
            *(f(vector).numpy() for f in (torch.sigmoid, torch.nn.functional.softplus, torch.exp, torch.tanh)),
            torch.logsumexp(vector, 0).numpy(),
        ),
        "mkl": digest((matrix @ matrix).numpy(), torch.dot(vector, vector.flip(0)).numpy()),
    }


def kernels() -> dict[str, str]:
    """What each layer runs: NumPy's SIMD targets on, OpenBLAS's core, ATen's capability."""
    import torch

    numpy_on = [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]
    blas = [info.get("architecture") or "?" for info in threadpool_info() if info.get("internal_api") == "openblas"]
    return {
        "numpy": " ".join(numpy_on) or "baseline only",
        "openblas": ", ".join(blas) or "not loaded",
        "aten": torch.backends.cpu.get_cpu_capability(),
        "mkl": "MKL_CBWR=" + os.environ.get("MKL_CBWR", "unset (CPU's own)"),
    }


def second_path_environment(first_openblas_core: str) -> dict[str, str]:
    """The variables of the second path, each layer at a different level from the first path's."""
    core = "Nehalem" if first_openblas_core.lower() in ("katmai", "prescott") else "Prescott"
    return {
        "NPY_DISABLE_CPU_FEATURES": " ".join(__cpu_dispatch__),
        "OPENBLAS_CORETYPE": core,
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_CBWR": "COMPATIBLE",
    }


def differing_layers(first: dict[str, str], second: dict[str, str]) -> list[str]:
    """The layers whose planted values differ between two paths' reports."""
    return [layer for layer in LAYERS if first["planted"][layer] != second["planted"][layer]]


def main(arguments: list[str]) -> int:
    command = arguments[0] if arguments else ""
    if command == "planted" and len(arguments) == 1:
        print(json.dumps({"kernels": kernels(), "planted": planted_values()}, indent=1))
        return 0
    if command == "env" and len(arguments) == 2:
        first = json.loads(Path(arguments[1]).read_text())
        for name, value in second_path_environment(first["kernels"]["openblas"]).items():
            print(f"export {name}={shlex.quote(value)}")
        return 0
    if command == "compare" and len(arguments) == 3:
        first, second = (json.loads(Path(path).read_text()) for path in arguments[1:])
        differing = differing_layers(first, second)
        for layer in LAYERS:
            same = "DIFFER" if layer in differing else "SAME (the switch did not take effect)"
            print(
                f"{layer:9s} first: {first['kernels'][layer]:>24s} {first['planted'][layer]}"
                f" | second: {second['kernels'][layer]:>24s} {second['planted'][layer]}  {same}"
            )
        return 0 if len(differing) == len(LAYERS) else 1
    print(__doc__.split("Usage")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
