#!/usr/bin/env python3
"""The anchors bench_vulkan's figures are read against, from PyTorch on CUDA.

On the same GPU bench_vulkan runs on, prints one line per figure:
  cuBLAS FP32 MATMUL N^3 (TF32 disabled, and said so) and FP16 MATMUL N^3 in
  GFLOP/s (2 N^3 flops), a device-to-device copy of --bytes in GB/s and an
  elementwise ADD of two FP32 tensors of --bytes in GB/s (both effective:
  the copy counts its read and its write, 2 x bytes; ADD two reads and one
  write, 3 x bytes, as bench_vulkan counts them), and GEMV [1,C] x [C,W]
  time in microseconds.
Each figure is the median of --runs timed with torch.cuda.Event around one
operation, after --warmups untimed ones. Pass the MATMUL figures to
bench_vulkan as --anchor-fp32 and --anchor-fp16.
"""
import argparse
import statistics
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matmul", type=int, default=4096, help="N of the N^3 MATMULs")
    parser.add_argument("--bytes", type=int, default=1 << 30, help="bytes of each copy/ADD operand")
    parser.add_argument("--gemv-c", type=int, default=4096)
    parser.add_argument("--gemv-w", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmups", type=int, default=3)
    args = parser.parse_args()

    try:
        import torch
    except ImportError:
        sys.exit("torch_anchor: PyTorch is not installed (pip install torch on the CUDA machine)")
    if not torch.cuda.is_available():
        sys.exit("torch_anchor: no CUDA device is visible to PyTorch")

    def median_ms(fn):
        for _ in range(args.warmups):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(args.runs):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    device = torch.device("cuda")
    print(f"torch_anchor on {torch.cuda.get_device_name(device)}, torch {torch.__version__}, "
          f"median of {args.runs} runs after {args.warmups} warm-ups (torch.cuda.Event)")

    # FP32 without TF32: the tensor cores' TF32 path would not be an FP32 MATMUL.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    n = args.matmul
    flop = 2.0 * n * n * n
    a = torch.rand(n, n, device=device, dtype=torch.float32) * 2 - 1
    b = torch.rand(n, n, device=device, dtype=torch.float32) * 2 - 1
    ms = median_ms(lambda: torch.matmul(a, b))
    print(f"cuBLAS MATMUL FP32 {n}^3 (TF32 disabled): {flop / ms / 1e6:.1f} GFLOP/s ({ms:.3f} ms)")
    a16, b16 = a.half(), b.half()
    ms = median_ms(lambda: torch.matmul(a16, b16))
    print(f"cuBLAS MATMUL FP16 {n}^3: {flop / ms / 1e6:.1f} GFLOP/s ({ms:.3f} ms)")
    del a, b, a16, b16

    elements = args.bytes // 4
    nbytes = elements * 4
    x = torch.zeros(elements, device=device, dtype=torch.float32)
    y = torch.zeros(elements, device=device, dtype=torch.float32)
    z = torch.empty_like(x)
    ms = median_ms(lambda: z.copy_(x))
    print(f"device-to-device copy of {nbytes / 2**20:.0f} MiB: {2 * nbytes / ms / 1e6:.1f} GB/s "
          f"effective (read + write) ({ms:.3f} ms)")
    ms = median_ms(lambda: torch.add(x, y, out=z))
    print(f"ADD FP32 2x{nbytes / 2**20:.0f} MiB: {3 * nbytes / ms / 1e6:.1f} GB/s effective "
          f"(two reads + one write) ({ms:.3f} ms)")
    del x, y, z

    v = torch.rand(1, args.gemv_c, device=device, dtype=torch.float32)
    m = torch.rand(args.gemv_c, args.gemv_w, device=device, dtype=torch.float32)
    ms = median_ms(lambda: torch.matmul(v, m))
    print(f"GEMV FP32 1x{args.gemv_c}x{args.gemv_w}: {ms * 1e3:.1f} us")


if __name__ == "__main__":
    main()
