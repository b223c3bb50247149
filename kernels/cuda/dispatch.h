/* dispatch.h - the one parameter every vaccel CUDA TOSA kernel takes
 * (docs/adr/0017-shared-gpu-lowering.md). Shared by the kernels/cuda
 * sources and the CUDA backend (backends/cuda), so it is plain C.
 *
 * Each TOSA kernel is `extern "C" __global__ void vaccel_<kernel>(struct
 * vaccel_cuda_dispatch d)`, passed by value in the kernel's parameter space
 * (under the 4 KiB every CUDA device accepts):
 *  - buffer[i] is the device address of buffer i as the shared lowering
 *    numbers them: the program's slots in slot order (each the bound
 *    buffer's address plus the binding's offset), then the program's arena;
 *    an operand is (buffer index, element offset), both spec words;
 *  - spec[i] is KernelSpec::spec[i]: on Vulkan the specialization constant
 *    with constant_id i + 1, here read at run time;
 *  - work is KernelSpec::work;
 *  - k_first and k_end cut a MATMUL that honours them (the ones
 *    lowering_matmul.hpp gives a k_step) over its dot products: the launch
 *    adds the products of k in [k_first, k_end) to what the output holds
 *    (k_first 0: to zero), so consecutive launches over consecutive ranges
 *    store the bytes of one whole launch (FP32 partial sums round-trip
 *    exactly). Both are multiples of the kernel's k_step; k_end 0 is the
 *    end (docs/adr/0026-gpu-device-scheduler.md, "slices"). Every other
 *    kernel ignores them, and both are 0 unless the run is cut.
 * Addresses are only as aligned as the binding offsets: a kernel that loads
 * 16 bytes at a time checks its operands' addresses first.
 */
#ifndef VACCEL_KERNELS_CUDA_DISPATCH_H
#define VACCEL_KERNELS_CUDA_DISPATCH_H

#define VACCEL_CUDA_MAX_BUFFERS 64
#define VACCEL_CUDA_MAX_SPEC 96

struct vaccel_cuda_dispatch {
	unsigned long long buffer[VACCEL_CUDA_MAX_BUFFERS];
	unsigned int spec[VACCEL_CUDA_MAX_SPEC];
	unsigned long long work;
	unsigned int k_first;
	unsigned int k_end;
};

#endif
