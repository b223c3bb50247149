/* abi_check_c.c - the ABI table seen by the C compiler. */
#include "abi_check.h"

int abi_check_c(void);
const char *abi_entry_name_c(int index);

int abi_check_c(void)
{
	return abi_walk();
}

const char *abi_entry_name_c(int index)
{
	return abi_table[index].field ? abi_table[index].field : abi_table[index].structure;
}
