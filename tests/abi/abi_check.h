/*
 * abi_check.h - one ABI check, compiled twice: by the C compiler
 * (abi_check_c.c) and by the C++ compiler (abi_check_cpp.cpp).
 *
 * Compile time: each size, offset and ioctl number in layout.def is a static
 * assertion. Run time: the same table is walked to prove that the fields of
 * each struct tile it with no implicit padding, and the count of checks is
 * returned so the test can tell both compilers saw the whole table.
 */
#include <stddef.h>

#include "vaccel.h"

#ifdef __cplusplus
#define ABI_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define ABI_FIELD_SIZE(s, f) sizeof(((struct s *)nullptr)->f)
#else
#define ABI_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define ABI_FIELD_SIZE(s, f) sizeof(((struct s *)0)->f)
#endif

#define VACCEL_ABI_STRUCT(s, size) \
	ABI_STATIC_ASSERT(sizeof(struct s) == (size), "size of " #s); \
	ABI_STATIC_ASSERT(sizeof(struct s) % 8 == 0, #s " padded to 8");
#define VACCEL_ABI_FIELD(s, f, off, size) \
	ABI_STATIC_ASSERT(offsetof(struct s, f) == (off), "offset of " #s "." #f); \
	ABI_STATIC_ASSERT(ABI_FIELD_SIZE(s, f) == (size), "size of " #s "." #f);
#define VACCEL_ABI_IOCTL(name, value) \
	ABI_STATIC_ASSERT((name) == (value), "number of " #name);
#include "layout.def"
#undef VACCEL_ABI_STRUCT
#undef VACCEL_ABI_FIELD
#undef VACCEL_ABI_IOCTL

struct abi_entry {
	const char *structure;
	const char *field;	/* NULL for the struct itself */
	size_t offset;
	size_t size;
};

static const struct abi_entry abi_table[] = {
#define VACCEL_ABI_STRUCT(s, size) { #s, NULL, 0, sizeof(struct s) },
#define VACCEL_ABI_FIELD(s, f, off, size) \
	{ #s, #f, offsetof(struct s, f), ABI_FIELD_SIZE(s, f) },
#define VACCEL_ABI_IOCTL(name, value)
#include "layout.def"
#undef VACCEL_ABI_STRUCT
#undef VACCEL_ABI_FIELD
#undef VACCEL_ABI_IOCTL
};

/*
 * Walks the table: within each struct the listed fields must start at 0,
 * follow each other without a gap, and end at sizeof. Returns the number of
 * entries checked, or -(index + 1) of the first entry that breaks the rule.
 */
static int abi_walk(void)
{
	size_t n = sizeof(abi_table) / sizeof(abi_table[0]);
	size_t i = 0;

	while (i < n) {
		size_t whole = abi_table[i].size;
		size_t next = 0;
		size_t j = i + 1;

		if (abi_table[i].field)
			return -(int)(i + 1);
		for (; j < n && abi_table[j].field; j++) {
			if (abi_table[j].offset != next)
				return -(int)(j + 1);
			next = abi_table[j].offset + abi_table[j].size;
		}
		if (next != whole)
			return -(int)(i + 1);
		i = j;
	}
	return (int)n;
}
