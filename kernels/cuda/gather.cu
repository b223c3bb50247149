// gather.cu - vaccel_gather: TOSA GATHER, values [N,K,C] and INT32 indices
// [N,W] to result [N,W,C], 32-bit elements (FP32, INT32) copied bit for bit,
// one thread per result element. An index outside [0, K) breaks TOSA 1.0's
// REQUIRE: its row is written as zeros and nothing outside the values is
// read. Mirrors kernels/vulkan/gather.comp. Spec words
// (backends/gpu/src/lowering_spatial.cpp, lower_gather):
//   0 N  1 K  2 W  3 C  4 OUT_BUF  5 OUT_BASE  6 VAL_BUF  7 VAL_BASE
//   8 IDX_BUF  9 IDX_BASE
#include "common.cuh"

using namespace vaccel_cuda;

VACCEL_KERNEL(vaccel_gather)
{
    const unsigned n_count = d.spec[0], k_count = d.spec[1];
    const unsigned w_count = d.spec[2], c_count = d.spec[3];
    unsigned* __restrict__ out = out_words(d, 4) + d.spec[5];
    const unsigned* __restrict__ values = words(d, 6);
    const unsigned val_base = d.spec[7];
    const unsigned* __restrict__ indices = words(d, 8);
    const unsigned idx_base = d.spec[9];
    const unsigned total = n_count * w_count * c_count;
    for (unsigned i = first_index(); i < total; i += grid_stride()) {
        const unsigned c = i % c_count, w = (i / c_count) % w_count, n = i / (c_count * w_count);
        const int index = static_cast<int>(indices[idx_base + n * w_count + w]);
        const bool inside = index >= 0 && index < static_cast<int>(k_count);
        unsigned value = 0u;
        if (inside)
            value = values[val_base + (n * k_count + static_cast<unsigned>(index)) * c_count + c];
        out[i] = value;
    }
}
