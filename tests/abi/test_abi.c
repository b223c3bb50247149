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
enum { ABI_ENTRIES = 271 };

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

/*
 * Every ioctl, with the struct its number encodes. Adding an ioctl without a
 * line here fails ioctl_table_is_complete.
 */
#define VACCEL_ABI_IOCTLS(X) 	X(VACCEL_IOCTL_GET_VERSION, vaccel_get_version) 	X(VACCEL_IOCTL_DEVICE_COUNT, vaccel_device_count) 	X(VACCEL_IOCTL_DEVICE_QUERY, vaccel_device_query) 	X(VACCEL_IOCTL_CONTEXT_CREATE, vaccel_context_create) 	X(VACCEL_IOCTL_CONTEXT_DESTROY, vaccel_handle_release) 	X(VACCEL_IOCTL_BUFFER_ALLOC, vaccel_buffer_alloc) 	X(VACCEL_IOCTL_BUFFER_FREE, vaccel_handle_release) 	X(VACCEL_IOCTL_BUFFER_WRITE, vaccel_buffer_transfer) 	X(VACCEL_IOCTL_BUFFER_READ, vaccel_buffer_transfer) 	X(VACCEL_IOCTL_PROGRAM_LOAD, vaccel_program_load) 	X(VACCEL_IOCTL_PROGRAM_UNLOAD, vaccel_handle_release) 	X(VACCEL_IOCTL_PROGRAM_SLOT, vaccel_program_slot) 	X(VACCEL_IOCTL_QUEUE_CREATE, vaccel_queue_create) 	X(VACCEL_IOCTL_QUEUE_DESTROY, vaccel_handle_release) 	X(VACCEL_IOCTL_SUBMIT, vaccel_submit) 	X(VACCEL_IOCTL_EVENT_POLL, vaccel_event_poll) 	X(VACCEL_IOCTL_EVENT_WAIT, vaccel_event_wait) 	X(VACCEL_IOCTL_EVENT_DESTROY, vaccel_handle_release) 	X(VACCEL_IOCTL_CONTEXT_LIMITS, vaccel_context_limits) 	X(VACCEL_IOCTL_GATE_CREATE, vaccel_gate_create) 	X(VACCEL_IOCTL_GATE_RAISE, vaccel_gate_value) 	X(VACCEL_IOCTL_GATE_VALUE, vaccel_gate_value) 	X(VACCEL_IOCTL_GATE_DESTROY, vaccel_handle_release) 	X(VACCEL_IOCTL_SUBMIT_AFTER, vaccel_submit_after) 	X(VACCEL_IOCTL_LAUNCH, vaccel_launch) 	X(VACCEL_IOCTL_DEVICE_TOSA, vaccel_device_tosa) \
	X(VACCEL_IOCTL_RUN, vaccel_run) \
	X(VACCEL_IOCTL_BUFFER_MAP, vaccel_buffer_map)

struct ioctl_entry {
	const char *name;
	unsigned long number;
	size_t size;
	size_t status_offset;
	size_t status_size;
};

#define VACCEL_IOCTL_ENTRY(number, type) 	{ #number, (number), sizeof(struct type), offsetof(struct type, status), 	  sizeof(((struct type *)0)->status) },
static const struct ioctl_entry ioctl_table[] = { VACCEL_ABI_IOCTLS(VACCEL_IOCTL_ENTRY) };
#undef VACCEL_IOCTL_ENTRY
enum { IOCTL_COUNT = sizeof(ioctl_table) / sizeof(ioctl_table[0]) };

static void ioctl_table_is_complete(void **state)
{
	int i;

	(void)state;
	assert_int_equal(IOCTL_COUNT, VACCEL_OP_COUNT);
	for (i = 0; i < IOCTL_COUNT; i++)
		assert_int_equal(_IOC_NR(ioctl_table[i].number), i);
}

static void status_leads_every_ioctl_struct(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < IOCTL_COUNT; i++) {
		if (ioctl_table[i].status_offset != 0 ||
		    ioctl_table[i].status_size != sizeof(struct vaccel_status))
			fail_msg("%s: status at %zu (%zu bytes)", ioctl_table[i].name,
				 ioctl_table[i].status_offset, ioctl_table[i].status_size);
	}
	assert_int_equal(sizeof(struct vaccel_status), 32);
}

static void ioctl_numbers_encode_their_struct_size(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < IOCTL_COUNT; i++) {
		if (_IOC_SIZE(ioctl_table[i].number) != ioctl_table[i].size ||
		    _IOC_TYPE(ioctl_table[i].number) != VACCEL_IOCTL_BASE ||
		    _IOC_DIR(ioctl_table[i].number) != (_IOC_READ | _IOC_WRITE))
			fail_msg("%s does not encode its struct", ioctl_table[i].name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(c_layout_has_no_implicit_padding),
		cmocka_unit_test(cpp_layout_has_no_implicit_padding),
		cmocka_unit_test(c_and_cpp_see_the_same_table),
		cmocka_unit_test(ioctl_table_is_complete),
		cmocka_unit_test(status_leads_every_ioctl_struct),
		cmocka_unit_test(ioctl_numbers_encode_their_struct_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
