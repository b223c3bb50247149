# The MATMUL kernels (backends/cuda/src/lowering_matmul.hpp names their functions).
list(APPEND vaccel_cuda_kernels matmul matmul_f32 matmul_f16 matmul_f16_mma matmul_f16_wgmma)
# wgmma is sm_90a only: SASS for exactly compute capability 9.0 and no PTX
# (sm_90a code runs on no other device), so the lowering uses it only there.
set(vaccel_cuda_gencode_matmul_f16_wgmma -gencode arch=compute_90a,code=sm_90a)
