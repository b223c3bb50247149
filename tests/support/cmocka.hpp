// cmocka.hpp - CMocka for the C++ tests; include it anywhere.
//
// Owns: the include order CMocka 1.1.5 needs (its header has no extern "C"
// guard and wants the C headers below first) and its one clash with C++:
// cmocka.h defines a function-like macro fail() that would break
// vaccel::fail() and std::basic_ios::fail() in any header after it. That
// macro is removed; cmocka_fail() takes its place and fail_msg() keeps
// working. Also assert_contains(), for messages.
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <string>

extern "C" {
#include <cmocka.h>
}

#undef fail
#undef fail_msg
#define cmocka_fail() _fail(__FILE__, __LINE__)
#define fail_msg(msg, ...)                                                                   \
    do {                                                                                     \
        print_error("ERROR: " msg "\n", ##__VA_ARGS__);                                      \
        cmocka_fail();                                                                       \
    } while (0)

// Fails the test unless `text` contains `part`; prints both when it does not.
#define assert_contains(text, part)                                                          \
    vaccel_test_assert_contains(std::string(text), std::string(part), __FILE__, __LINE__)

inline void vaccel_test_assert_contains(const std::string& text, const std::string& part,
                                        const char* file, int line)
{
    if (text.find(part) == std::string::npos) {
        print_error("%s:%d: \"%s\" does not contain \"%s\"\n", file, line, text.c_str(),
                    part.c_str());
        _fail(file, line);
    }
}
