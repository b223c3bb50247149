// raw_cuda.cpp - the CUDA floors (raw_cuda.hpp).
#include "support/raw_cuda.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "driver.hpp"
#include "support/backend_runs.hpp"

namespace vaccel::bench {

using backend::cuda::Driver;
using Clock = std::chrono::steady_clock;

struct RawCuda::State {
    const Driver* cu = nullptr;
    CUcontext context = nullptr;
    CUstream stream = nullptr;
    CUmodule module = nullptr;
    CUfunction noop = nullptr;
};

namespace {

void check(const Driver& cu, CUresult r, const char* what)
{
    if (r == CUDA_SUCCESS) return;
    std::fprintf(stderr, "raw CUDA: %s: %s\n", what, cu.describe(r).c_str());
    std::exit(1);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

std::vector<std::uint8_t> read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        std::exit(1);
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

RawCuda::RawCuda(const std::array<std::uint8_t, 16>& uuid, const std::vector<std::uint8_t>& ptx)
    : state_(new State)
{
    std::string why;
    state_->cu = backend::cuda::load_driver(why);
    if (state_->cu == nullptr) {
        std::fprintf(stderr, "raw CUDA: %s\n", why.c_str());
        std::exit(1);
    }
    const Driver& cu = *state_->cu;
    int count = 0;
    check(cu, cu.cuDeviceGetCount(&count), "cuDeviceGetCount");
    CUdevice chosen = 0;
    for (int i = 0; i < count; ++i) {
        CUdevice d = 0;
        CUuuid u{};
        if (cu.cuDeviceGet(&d, i) == CUDA_SUCCESS && cu.cuDeviceGetUuid(&u, d) == CUDA_SUCCESS &&
            std::memcmp(u.bytes, uuid.data(), 16) == 0) {
            chosen = d;
            break;
        }
    }
    char name[256] = {};
    cu.cuDeviceGetName(name, sizeof name - 1, chosen);
    name_ = name;
    check(cu, cu.cuCtxCreate(&state_->context, nullptr, 0, chosen), "cuCtxCreate");
    check(cu, cu.cuStreamCreate(&state_->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    std::string text(ptx.begin(), ptx.end());
    check(cu, cu.cuModuleLoadData(&state_->module, text.c_str()), "cuModuleLoadData");
    check(cu, cu.cuModuleGetFunction(&state_->noop, state_->module, "noop"), "noop");
}

RawCuda::~RawCuda()
{
    state_->cu->cuCtxDestroy(state_->context);
    delete state_;
}

double RawCuda::launch_sync_seconds(int iterations)
{
    const Driver& cu = *state_->cu;
    cu.cuCtxSetCurrent(state_->context);
    std::vector<double> seconds;
    for (int i = 0; i < iterations + iterations / 10 + 1; ++i) {
        const auto start = Clock::now();
        check(cu, cu.cuLaunchKernel(state_->noop, 1, 1, 1, 1, 1, 1, 0, state_->stream, nullptr,
                                    nullptr),
              "cuLaunchKernel");
        check(cu, cu.cuStreamSynchronize(state_->stream), "cuStreamSynchronize");
        if (i > iterations / 10)
            seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    return median(seconds);
}

double RawCuda::copy_seconds(std::uint64_t bytes, int runs)
{
    const Driver& cu = *state_->cu;
    cu.cuCtxSetCurrent(state_->context);
    CUdeviceptr from = 0, to = 0;
    check(cu, cu.cuMemAlloc(&from, bytes), "cuMemAlloc");
    check(cu, cu.cuMemAlloc(&to, bytes), "cuMemAlloc");
    const double seconds = median_of_runs(runs, [&] {
        const auto start = Clock::now();
        check(cu, cu.cuMemcpyDtoD(to, from, bytes), "cuMemcpyDtoD");
        check(cu, cu.cuStreamSynchronize(nullptr), "cuStreamSynchronize");  // the copy's stream
        return std::chrono::duration<double>(Clock::now() - start).count();
    });
    cu.cuMemFree(from);
    cu.cuMemFree(to);
    return seconds;
}

}  // namespace vaccel::bench
