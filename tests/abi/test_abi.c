/*
 * test_abi.c - uapi/vaccel.h has exactly the layout of layout.def, as C and as
 * C++, with no implicit padding anywhere.
 *
 * The sizes, offsets and ioctl numbers are static assertions in both
 * translation units, so a drifted header does not even build; these tests
 * then prove the tables were walked in full by both compilers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vaccel.h"

int abi_check_c(void);
int abi_check_cpp(void);
const char *abi_entry_name_c(int index);

/* Entries in layout.def: structs plus fields (ioctl lines excluded). */
enum { ABI_ENTRIES = 167 };

static void c_layout_has_no_implicit_padding(void **state)
{
	int result = abi_check_c();

	(void)state;
	if (result < 0)
		fail_msg("padding or gap at entry %d (%s)", -result - 1,
			 abi_entry_name_c(-result - 1));
	assert_int_equal(result, ABI_ENTRIES);
}

static void cpp_layout_has_no_implicit_padding(void **state)
{
	(void)state;
	assert_int_equal(abi_check_cpp(), ABI_ENTRIES);
}

static void c_and_cpp_see_the_same_table(void **state)
{
	(void)state;
	assert_int_equal(abi_check_c(), abi_check_cpp());
}

static void status_leads_every_ioctl_struct(void **state)
{
	(void)state;
	assert_int_equal(offsetof(struct vaccel_submit, status), 0);
	assert_int_equal(offsetof(struct vaccel_device_query, status), 0);
	assert_int_equal(offsetof(struct vaccel_context_limits, status), 0);
	assert_int_equal(sizeof(struct vaccel_status), 32);
}

static void ioctl_numbers_encode_their_struct_size(void **state)
{
	(void)state;
	assert_int_equal(_IOC_SIZE(VACCEL_IOCTL_SUBMIT), sizeof(struct vaccel_submit));
	assert_int_equal(_IOC_SIZE(VACCEL_IOCTL_DEVICE_QUERY), sizeof(struct vaccel_device_query));
	assert_int_equal(_IOC_TYPE(VACCEL_IOCTL_EVENT_WAIT), VACCEL_IOCTL_BASE);
	assert_int_equal(_IOC_NR(VACCEL_IOCTL_CONTEXT_LIMITS), VACCEL_OP_CONTEXT_LIMITS);
	assert_int_equal(_IOC_DIR(VACCEL_IOCTL_BUFFER_READ), _IOC_READ | _IOC_WRITE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(c_layout_has_no_implicit_padding),
		cmocka_unit_test(cpp_layout_has_no_implicit_padding),
		cmocka_unit_test(c_and_cpp_see_the_same_table),
		cmocka_unit_test(status_leads_every_ioctl_struct),
		cmocka_unit_test(ioctl_numbers_encode_their_struct_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
