// mma_f16.cuh - the pieces the FP16 tensor-core MATMUL kernels share:
// cp.async copies, ldmatrix, mma.sync m16n8k16 with FP32 accumulators, and
// the grouped block order.
#pragma once

#include <cuda_fp16.h>

namespace vaccel_mma {

__device__ __forceinline__ void copy16(unsigned dst, const void* src, bool valid)
{
    // A source size of 0 fills the 16 bytes with zeros and reads nothing.
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int n>
__device__ __forceinline__ void wait_groups()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(n) : "memory");
}

__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_trans(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Block `t` of a batch of tiles_h x tiles_w tiles, in groups of `group`
// row blocks that sweep the columns together (the A rows and B columns of
// concurrent blocks stay in L2).
struct TileAt {
    unsigned m, n;
};
__device__ __forceinline__ TileAt grouped_tile(unsigned t, unsigned tiles_h, unsigned tiles_w,
                                               unsigned group)
{
    const unsigned in_group = group * tiles_w;
    const unsigned first = t / in_group * group;
    const unsigned rows = min(tiles_h - first, group);
    return {first + (t % in_group) % rows, (t % in_group) / rows};
}

// Stores the pair (x, y) at element `at` (even) of the result, FP16
// rounded to nearest even or FP32.
__device__ __forceinline__ void store_pair(unsigned long long out, bool half_out,
                                           unsigned long long at, float x, float y)
{
    if (half_out)
        reinterpret_cast<__half2*>(out)[at / 2] = __floats2half2_rn(x, y);
    else
        reinterpret_cast<float2*>(out)[at / 2] = make_float2(x, y);
}

}  // namespace vaccel_mma
