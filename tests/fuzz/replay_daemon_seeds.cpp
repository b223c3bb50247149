// replay_daemon_seeds.cpp - fuzz_daemon's seed inputs run once each, in
// an ordinary (uninstrumented) build: a ctest, so every build checks that
// the seeds still hold (no abort: one reply per request, no leaked object,
// a mapped buffer's memfd that cannot be resized) without libFuzzer.
//
// Owns: nothing but the loop. Decides: the seeds are written by the same
// code the fuzz build uses (daemon_seeds.cpp) into a fresh directory, and
// each is fed whole to LLVMFuzzerTestOneInput (fuzz_daemon.cpp); the
// directory is removed afterwards. Exit status 0 when every seed ran,
// 1 when none was written; a finding aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "daemon_input.hpp"

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv)
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() /
                         ("vaccel-fuzz-daemon-seeds-" + std::to_string(::getpid()));
    if (!vaccel::fuzz::write_daemon_seeds(dir.c_str())) return 1;
    LLVMFuzzerInitialize(&argc, &argv);
    std::size_t ran = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        std::ifstream file(entry.path(), std::ios::binary);
        const std::vector<char> bytes{std::istreambuf_iterator<char>(file),
                                      std::istreambuf_iterator<char>()};
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        std::printf("seed %s: %zu bytes, no finding\n", entry.path().filename().c_str(),
                    bytes.size());
        ++ran;
    }
    fs::remove_all(dir);
    if (ran == 0) {
        std::fprintf(stderr, "FAIL: no seed was written into %s\n", dir.c_str());
        return 1;
    }
    return 0;
}
