# The MATMUL kernels (backends/cuda/src/lowering_matmul.hpp names their functions).
list(APPEND vaccel_cuda_kernels matmul matmul_f32 matmul_f16)
