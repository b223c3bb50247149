// test_support.hpp - CMocka for C++ and the assertions the common tests share.
//
// Owns assert_refused(), which checks a refusal field by field, and
// assert_ok(); CMocka itself is tests/support/cmocka.hpp's.
#pragma once

#include "cmocka.hpp"

#include <cstdio>

#include "vaccel/common/error.hpp"

// A Result/Status that must be an error with exactly these fields.
#define assert_refused(expr, errc, detail_, arg0_, arg1_)                                    \
    do {                                                                                     \
        const auto& refused_ = (expr); \
        if (refused_.has_value())                                                            \
            fail_msg("%s: expected a refusal, got success", #expr);                         \
        const ::vaccel::Error& e_ = refused_.error();                                        \
        if (e_.code != (errc) || e_.detail != static_cast<uint32_t>(detail_) ||               \
            e_.arg0 != static_cast<uint64_t>(arg0_) || e_.arg1 != static_cast<uint64_t>(arg1_)) \
            fail_msg("%s: got \"%s\" (code %u detail %u arg0 %llu arg1 %llu)", #expr,         \
                     ::vaccel::describe(e_).c_str(), static_cast<unsigned>(e_.code),          \
                     e_.detail, static_cast<unsigned long long>(e_.arg0),                     \
                     static_cast<unsigned long long>(e_.arg1));                               \
    } while (0)

// A Result/Status that must be a success.
#define assert_ok(expr)                                                                      \
    do {                                                                                     \
        const auto& ok_ = (expr); \
        if (!ok_.has_value())                                                                \
            fail_msg("%s: unexpected refusal \"%s\"", #expr,                                 \
                     ::vaccel::describe(ok_.error()).c_str());                               \
    } while (0)
