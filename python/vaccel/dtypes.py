"""vaccel.dtypes - which NumPy dtype carries each TOSA dtype.

Owns: the TOSA 1.0 DType names (tosa.fbs) and their NumPy dtypes. Decides,
as vaccelctl run does (tools/vaccelctl/src/tensor_files.hpp): BOOL is
bool, INT8 int8, INT16 int16, INT32 int32, FP32 float32, FP16 float16;
the others (INT4, INT48, BF16, FP8, SHAPE) have no NumPy dtype: their
tensors are described with dtype None and are bound as vaccel.Buffer
objects of the slot's bytes.
"""

import numpy as np

__all__ = ["TOSA_DTYPE_NAMES", "tosa_dtype_name", "numpy_dtype_of", "typestr_of"]

TOSA_DTYPE_NAMES = (
    "UNKNOWN", "BOOL", "INT4", "INT8", "INT16", "INT32", "INT48",
    "FP32", "FP16", "BF16", "SHAPE", "FP8E4M3", "FP8E5M2",
)

_NUMPY_OF_TOSA = {
    1: np.dtype(np.bool_),
    3: np.dtype(np.int8),
    4: np.dtype(np.int16),
    5: np.dtype(np.int32),
    7: np.dtype(np.float32),
    8: np.dtype(np.float16),
}


def tosa_dtype_name(code):
    """"FP32", "INT8", ...; "DType(n)" for a number TOSA 1.0 does not define."""
    if 0 <= code < len(TOSA_DTYPE_NAMES):
        return TOSA_DTYPE_NAMES[code]
    return "DType(%d)" % code


def numpy_dtype_of(code):
    """The NumPy dtype of a TOSA dtype, or None when NumPy has none."""
    return _NUMPY_OF_TOSA.get(code)


def typestr_of(dtype):
    """The array-interface type string of a dtype ("<f4", "|i1", "|b1")."""
    return np.dtype(dtype).str
