"""Test-session setup shared by the unit tests and the notebooks (nbval).

The suite runs on two pytest-xdist workers (pytest.ini), each starting its own notebook
kernels. Numerical libraries default to one thread per core; two workers with two-thread
BLAS and OpenMP pools on a two-core machine oversubscribe it, and a spinning BLAS pool can
make one numpy dot product hundreds of times slower. So every process of the test session
(workers and kernels inherit the environment) uses one thread unless the caller says
otherwise. This changes no result beyond the last bits of a float sum, which no stored
output prints (issue 8).
"""

import os

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")
