// cmocka_support.hpp - CMocka for the Vulkan tests, included last (cmocka.h
// defines a `fail` macro that clashes with vaccel::fail).
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}
