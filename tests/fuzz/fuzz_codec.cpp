// fuzz_codec.cpp - libFuzzer target: the wire codec's strict decoding.
//
// Property: any byte string either decodes (request or response) or is
// refused with an Error; nothing crashes, reads out of bounds or hangs. A
// request that decodes (with no header flags) re-encodes to exactly the same
// bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "vaccel/common/codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto bytes = std::as_bytes(std::span(data, size));
    auto request = vaccel::decode_request(bytes);
    if (request && request->header.flags == 0) {
        const auto again = vaccel::encode_request(request->header.opcode, request->header.seq,
                                                  request->header.session, request->args,
                                                  request->payload);
        if (again.size() != size || std::memcmp(again.data(), data, size) != 0)
            std::abort();  // a decoded request must re-encode to itself
    }
    (void)vaccel::decode_response(bytes);
    return 0;
}
