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
#include "vaccel_server.h"

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

/*
 * The version this table is, and where the ioctl numbers live: 2.0 moved
 * them from type 0xAC to 0xA7 (nothing else moved); 2.1 added the
 * container admin commands and one detail, after every 2.0 value; 2.2
 * the tenants admin command, the sessions limit and vaccel_status.scope
 * (the old pad, at the same place); 2.3 the MINE admin command.
 */
static void abi_is_version_2_3_on_type_0xa7(void **state)
{
	(void)state;
	assert_int_equal(VACCEL_ABI_MAJOR, 2);
	assert_int_equal(VACCEL_ABI_MINOR, 3);
	assert_int_equal(VACCEL_IOCTL_BASE, 0xA7);
	assert_int_equal(VACCEL_D_DOMAIN, 47);
	assert_int_equal(VACCEL_D_DEVICE_NOT_GRANTED, 48);
	assert_int_equal(VACCEL_D_COUNT, 49);
	assert_int_equal(VACCEL_ADMIN_METRICS, 6);
	assert_int_equal(VACCEL_ADMIN_CONTAINERS, 7);
	assert_int_equal(VACCEL_ADMIN_CONTAINER_ADD, 8);
	assert_int_equal(VACCEL_ADMIN_CONTAINER_REMOVE, 9);
	assert_int_equal(VACCEL_ADMIN_TENANTS, 10);
	assert_int_equal(VACCEL_ADMIN_MINE, 11);
	assert_int_equal(VACCEL_ADMIN_COUNT, 12);
	assert_int_equal(VACCEL_LIMIT_SESSIONS, 14);
	assert_int_equal(VACCEL_LIMIT_COUNT, 15);
	assert_int_equal(VACCEL_SCOPE_COUNT, 6);
	assert_int_equal(VACCEL_SCOPE_MAKE(VACCEL_SCOPE_GID, 3, 70000),
			 2 | (3 << 4) | (0xffffU << 16));
	assert_int_equal(VACCEL_SCOPE_DEVICE_INDEX(VACCEL_SCOPE_MAKE(1, 4095, 2)), 4095);
	assert_int_equal(VACCEL_SCOPE_SESSIONS(VACCEL_SCOPE_MAKE(1, 0, 2)), 2);
}

/*
 * The daemon's side (uapi/vaccel_server.h): the handshake and detach
 * ioctls, the command and message structs, and the payload position
 * (offset, slot and the low 23 bits of the request's seq).
 */
static void server_contract_is_protocol_2(void **state)
{
	(void)state;
	assert_int_equal(VACCEL_SRV_PROTOCOL, 2);
	assert_int_equal(VACCEL_SRV_IOCTL_HELLO, 0xc020a740U);
	assert_int_equal(VACCEL_SRV_IOCTL_DETACH, 0x0000a741U);
	assert_int_equal(sizeof(struct vaccel_srv_hello), 32);
	assert_int_equal(offsetof(struct vaccel_srv_hello, protocol), 12);
	assert_int_equal(sizeof(struct vaccel_srv_cmd), 16);
	assert_int_equal(sizeof(struct vaccel_srv_withdraw), 48);
	assert_int_equal(offsetof(struct vaccel_srv_withdraw, seq), 40);
	assert_int_equal(VACCEL_SRV_FETCH, 1);
	assert_int_equal(VACCEL_SRV_COMMIT_AND_FETCH, 2);
	assert_int_equal(VACCEL_SRV_ANSWER, 3);
	assert_int_equal(VACCEL_SRV_CMD_DEFER, 1);
	assert_int_equal(VACCEL_OP_WITHDRAW, 0x32);
	assert_int_equal(VACCEL_SRV_PAYLOAD_POS(3, 5, 7),
			 (5ULL << 40) | (3ULL << 32) | 7ULL);
	/* The seq wraps at 23 bits: it never reaches the sign bit. */
	assert_int_equal(VACCEL_SRV_PAYLOAD_POS(63, (1ULL << 23) + 2, 0xffffffffULL),
			 (2ULL << 40) | (63ULL << 32) | 0xffffffffULL);
	assert_true(VACCEL_SRV_PAYLOAD_POS(63, VACCEL_SRV_SEQ_MASK, 0xffffffffULL) < (1ULL << 63));
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
		cmocka_unit_test(abi_is_version_2_3_on_type_0xa7),
		cmocka_unit_test(server_contract_is_protocol_2),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
