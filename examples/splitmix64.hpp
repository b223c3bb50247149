// splitmix64.hpp - the seeded generator of the example models and networks.
//
// Owns: splitmix64 (Steele, Lea, Flood 2014), one 64-bit state and one
// output per step, and the uniform floats drawn from it (24 bits each, so
// every value is exactly representable as a float). One seed gives the same
// sequence on every machine: the generated files never change.
#pragma once

#include <cstdint>

namespace vaccel::examples {

class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t state) : state_(state) {}
    std::uint64_t next()
    {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [-scale, scale).
    float uniform(float scale) { return static_cast<float>((2.0 * unit() - 1.0) * scale); }
    // Uniform in [lo, hi).
    float between(float lo, float hi) { return static_cast<float>(lo + unit() * (hi - lo)); }

private:
    double unit() { return static_cast<double>(next() >> 40) / static_cast<double>(1ull << 24); }
    std::uint64_t state_;
};

}  // namespace vaccel::examples
