"""Flush subnormal numbers to zero inside a block, for arithmetic whose tiny values do not matter.

x86-64 processors compute with subnormal numbers (nonzero magnitudes below ``2^-126`` in float32, ``2^-1022``
in float64) through a microcode assist that costs many times a normal operation. A factorisation
whose entries span many orders of magnitude makes them on its own: the Cholesky factor of a nearly diagonal
RBF kernel matrix (records far apart, as in a release with large noise) fills in with products of products of
small entries, and a float32 factorisation then takes many times longer than usual
(``benchmarks/subnormals.py`` measures the ratio; ``benchmarks/ron_gauss_trials.py`` Table 5's fits). Inside
:func:`flushed_subnormals` the processor treats subnormal inputs as zero and rounds subnormal results to zero
(the FTZ and DAZ bits of the calling thread's MXCSR register, as ``torch.set_flush_denormal`` sets them): each
flushed value is smaller in magnitude than the smallest normal number, and a caller must be able to ignore such
values and what is computed from them.

Only the calling thread is affected (a BLAS library's own worker threads keep their settings, so a multi-threaded
product may still meet the slow path: correct, slower). On other processors the block runs unchanged.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import platform

FTZ_DAZ = 0x8040  # MXCSR bits: flush to zero (15) and denormals are zero (6)
_MXCSR_IR = r"""
declare void @llvm.x86.sse.stmxcsr(ptr)
declare void @llvm.x86.sse.ldmxcsr(ptr)
define i32 @get_mxcsr() {
  %p = alloca i32
  call void @llvm.x86.sse.stmxcsr(ptr %p)
  %v = load i32, ptr %p
  ret i32 %v
}
define void @set_mxcsr(i32 %v) {
  %p = alloca i32
  store i32 %v, ptr %p
  call void @llvm.x86.sse.ldmxcsr(ptr %p)
  ret void
}
"""


@functools.lru_cache(maxsize=1)
def _mxcsr_access():
    """``(get, set)`` of the calling thread's MXCSR, compiled once with llvmlite (numba's code generator)."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(_MXCSR_IR)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    get = ctypes.CFUNCTYPE(ctypes.c_uint32)(engine.get_function_address("get_mxcsr"))
    set_ = ctypes.CFUNCTYPE(None, ctypes.c_uint32)(engine.get_function_address("set_mxcsr"))
    return get, set_, engine  # the engine owns the compiled code: kept alive with the functions


def supported() -> bool:
    """Whether :func:`flushed_subnormals` changes anything here (an x86-64 processor)."""
    return platform.machine().lower() in ("x86_64", "amd64")


@contextlib.contextmanager
def flushed_subnormals():
    """Context manager: subnormal inputs read as zero and subnormal results round to zero in the calling thread.

    The previous setting is restored on exit, also after an exception. Nested blocks are allowed.

    Examples
    --------
    >>> import numpy as np
    >>> tiny = np.float32(1e-40)  # subnormal in float32
    >>> with flushed_subnormals():
    ...     flushed = float(np.float32(2) * tiny)
    >>> flushed == 0.0 or not supported()
    True
    >>> float(np.float32(2) * tiny) > 0
    True
    """
    if not supported():
        yield
        return
    get, set_, _ = _mxcsr_access()
    previous = get()
    set_(previous | FTZ_DAZ)
    try:
        yield
    finally:
        set_(previous)
