// lib_support.hpp - helpers the libvaccel tests share.
//
// Owns: a prepared ADD / MATMUL run through
// the C API (context, three buffers, program, queue).
#pragma once


#include <cstdio>
#include <vector>

#include "vaccel/vaccel.h"

#include "cmocka.hpp"

// A call that must return 0; prints the library's own sentence otherwise.
#define assert_call(expr)                                                                     \
    do {                                                                                      \
        const int rc_ = (expr);                                                               \
        if (rc_ != 0)                                                                         \
            fail_msg("%s returned %d: %s", #expr, rc_, vaccel_last_error_message());          \
    } while (0)

namespace vaccel::test {

struct CRun {
    uint64_t context = 0, a = 0, b = 0, c = 0, program = 0, queue = 0;
    uint64_t bytes = 0;
};

inline uint64_t alloc_buffer(vaccel_client* client, uint64_t context, uint64_t bytes)
{
    struct vaccel_buffer_alloc req = {};
    req.context = context;
    req.bytes = bytes;
    req.domain = VACCEL_DOMAIN_HOST;
    req.usage = VACCEL_USAGE_ALL;
    req.access = VACCEL_ACCESS_RW;
    assert_call(vaccel_buffer_alloc(client, &req));
    return req.buffer;
}

// A context with a, b, c of `bytes` each, `artifact` loaded and one queue.
inline CRun prepare(vaccel_client* client, const std::vector<std::byte>& artifact, uint64_t bytes)
{
    CRun run;
    run.bytes = bytes;
    assert_call(vaccel_context_create(client, 0, &run.context));
    run.a = alloc_buffer(client, run.context, bytes);
    run.b = alloc_buffer(client, run.context, bytes);
    run.c = alloc_buffer(client, run.context, bytes);
    assert_call(vaccel_program_load(client, run.context, VACCEL_FORMAT_TOSA, nullptr,
                                    artifact.data(), artifact.size(), &run.program, nullptr,
                                    nullptr));
    assert_call(vaccel_queue_create(client, run.context, &run.queue));
    return run;
}

inline int submit(vaccel_client* client, const CRun& run, uint64_t* event)
{
    const struct vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, run.a, 0, run.bytes},
        {1, VACCEL_ACCESS_READ, run.b, 0, run.bytes},
        {2, VACCEL_ACCESS_WRITE, run.c, 0, run.bytes},
    };
    return vaccel_submit(client, run.queue, run.program, bindings, 3, 0, event);
}

// submit() that starts once `gate` reaches `value`: certainly pending until
// the test raises it.
inline int submit_after(vaccel_client* client, const CRun& run, uint64_t gate, uint64_t value,
                        uint64_t* event)
{
    const struct vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, run.a, 0, run.bytes},
        {1, VACCEL_ACCESS_READ, run.b, 0, run.bytes},
        {2, VACCEL_ACCESS_WRITE, run.c, 0, run.bytes},
    };
    return vaccel_submit_after(client, run.queue, run.program, bindings, 3, gate, value, event);
}

}  // namespace vaccel::test
