import os

# One BLAS thread: the suite runs two pytest workers on two cores, and fixed thread counts
# keep floating-point reductions reproducible.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
