// cmocka.hpp - CMocka for the vaccelctl tests, compiled as C++.
//
// Owns: the include order CMocka 1.1.5 needs and its missing extern "C".
#pragma once

// Include this header after every other: CMocka defines macros (fail, ...)
// that collide with names in the standard library.
#include <string>
#include <string_view>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}

// Fails the test unless `text` contains `part`; prints both when it does not.
#define assert_contains(text, part)                                                                \
    vaccelctl_test_assert_contains(std::string(text), std::string(part), __FILE__, __LINE__)

inline void vaccelctl_test_assert_contains(const std::string& text, const std::string& part,
                                           const char* file, int line)
{
    if (text.find(part) == std::string::npos) {
        print_error("%s:%d: \"%s\" does not contain \"%s\"\n", file, line, text.c_str(),
                    part.c_str());
        _fail(file, line);
    }
}
