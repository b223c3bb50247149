// abi_check_cpp.cpp - the ABI table seen by the C++ compiler.
#include "abi_check.h"

extern "C" int abi_check_cpp(void);

extern "C" int abi_check_cpp(void)
{
    return abi_walk();
}
