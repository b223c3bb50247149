// launch_kernels.cu - kernels the CUDA launch tests run through
// vaccel_launch (tests/cuda/test_launch.cpp), built as PTX and as an sm_90
// cubin.

// y[i] = a * x[i] + y[i] for i < n.
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// out[i] = first + i for i < count: a u64 between two u32s checks that
// parameters keep their natural alignment.
extern "C" __global__ void fill64(unsigned first, unsigned long long unused, unsigned count,
                                  unsigned* out)
{
    (void)unused;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) out[i] = first + i;
}

// Nothing: the launch and completion floor.
extern "C" __global__ void noop() {}

// Writes through a pointer the context never allocated: a sticky fault of
// the context (CUDA_ERROR_ILLEGAL_ADDRESS).
extern "C" __global__ void fault(unsigned long long address)
{
    *reinterpret_cast<volatile unsigned*>(address) = 1u;
}

// Spins for `cycles` clock cycles per thread, then writes out[i] = i + 1:
// work that is still running when another context faults.
extern "C" __global__ void spin_then_write(unsigned long long cycles, unsigned* out, unsigned n)
{
    const long long start = clock64();
    while (static_cast<unsigned long long>(clock64() - start) < cycles) {
    }
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i + 1;
}

// y[i] = a * x[i] + y[i] over n floats, 16 bytes a load, four loads of each
// operand in flight per thread (a grid-stride loop over groups of four
// float4s, each group coalesced across the block): the 1 GiB axpy of
// bench_cuda.
extern "C" __global__ void axpy_stride(const float* __restrict__ x, float* __restrict__ y, float a,
                                       unsigned long long n)
{
    const unsigned long long threads = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    const unsigned long long quads = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    unsigned long long q = blockIdx.x * blockDim.x + threadIdx.x;
    for (; q + 3 * threads < quads; q += 4 * threads) {
        float4 xs[4], ys[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            xs[k] = x4[q + k * threads];
            ys[k] = y4[q + k * threads];
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            ys[k].x = a * xs[k].x + ys[k].x;
            ys[k].y = a * xs[k].y + ys[k].y;
            ys[k].z = a * xs[k].z + ys[k].z;
            ys[k].w = a * xs[k].w + ys[k].w;
            y4[q + k * threads] = ys[k];
        }
    }
    for (; q < quads; q += threads) {
        const float4 xv = x4[q];
        float4 yv = y4[q];
        yv.x = a * xv.x + yv.x;
        yv.y = a * xv.y + yv.y;
        yv.z = a * xv.z + yv.z;
        yv.w = a * xv.w + yv.w;
        y4[q] = yv;
    }
    for (unsigned long long i = quads * 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += threads)
        y[i] = a * x[i] + y[i];
}

// out[i] = in[i] over n floats as float4 (n a multiple of 4), four loads
// in flight per thread: the copy kernel beside the axpy.
extern "C" __global__ void copy4(const float4* __restrict__ in, float4* __restrict__ out,
                                 unsigned long long quads)
{
    const unsigned long long threads = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    unsigned long long q = blockIdx.x * blockDim.x + threadIdx.x;
    for (; q + 3 * threads < quads; q += 4 * threads) {
        float4 v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = in[q + k * threads];
#pragma unroll
        for (int k = 0; k < 4; ++k) out[q + k * threads] = v[k];
    }
    for (; q < quads; q += threads) out[q] = in[q];
}
