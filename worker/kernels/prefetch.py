"""A software prefetch for the compiled loops: ask for an array's cache line before it is read.

A LightTouch iteration samples examples at random from arrays far larger than the caches
(docs/algorithms.md, "Fast iterations"), so each sampled row waits on main memory.
The iteration knows which rows it will read before it checks its constraints
(:func:`worker.kernels.iteration.run_iterations`), so it asks for them first and reads them
after the checks; a demand load would instead stall the core once its reorder buffer fills.
numba has no prefetch of its own, so this is LLVM's ``llvm.prefetch`` intrinsic, which
compiles to one ``prefetcht0`` on x86 and has no effect on the program's results.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: ``llvm.prefetch`` arguments: a read (0), kept in every cache level (3), of data (1).
_READ, _KEEP_ALL_LEVELS, _DATA = 0, 3, 1
#: One declaration of the intrinsic serves every array's element type.
_BYTE_POINTER = ir.IntType(8).as_pointer()


@intrinsic
def prefetch(typingctx, array, index):
    """Prefetch the cache line of ``array[index]`` (1-d array, integer index in range).

    Parameters
    ----------
    array : ndarray, shape (n,)
    index : int
        0 <= index < n; not checked (a prefetch of any address is harmless, but a wrong one
        wastes a memory access).
    """
    if not (isinstance(array, types.Array) and array.ndim == 1
            and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        address = builder.bitcast(
            cgutils.get_item_pointer(context, builder, array_type, view, [args[1]]),
            _BYTE_POINTER)
        word = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [_BYTE_POINTER, word, word, word]),
            "llvm.prefetch.p0")
        builder.call(function, [address, word(_READ), word(_KEEP_ALL_LEVELS), word(_DATA)])
        return context.get_dummy_value()

    return types.void(array, index), codegen
