// SPDX-License-Identifier: GPL-2.0
/*
 * vm_compat32.c - a 32-bit client of /dev/vaccel (built gcc -m32 -static),
 * run inside the VM against vacceld: the module's compat_ioctl path.
 *
 *   vm_compat32 FIXTURE   the ADD fixture directory (placeholder_0.npy,
 *                         placeholder_1.npy, tflite_result.npy,
 *                         flatbuffer-tflite/test_add_1x4x4x4_f32.tosa)
 *
 * With raw ioctls from a 32-bit process: GET_VERSION, a refusal whose
 * status names the right field offset, the program loaded, the inputs
 * written, SUBMIT and EVENT_WAIT, then RUN; each time the output read back
 * must equal the fixture's expected bytes exactly. Prints
 * "VMTEST compat32 PASS|FAIL" and one "vm_compat32: ..." line per failed
 * check.
 */
#include <stddef.h>

#define VM_PROGRAM "vm_compat32"
#include "vm_add.h"

/* Loads the fixture's three arrays; 0 when all have the fixture's sizes. */
static int fixture(const char *dir, void **a, void **b, void **want)
{
	size_t a_bytes = 0, b_bytes = 0, want_bytes = 0;
	char path[512];

	snprintf(path, sizeof(path), "%s/placeholder_0.npy", dir);
	*a = npy_data(path, &a_bytes);
	snprintf(path, sizeof(path), "%s/placeholder_1.npy", dir);
	*b = npy_data(path, &b_bytes);
	snprintf(path, sizeof(path), "%s/tflite_result.npy", dir);
	*want = npy_data(path, &want_bytes);
	CHECK(*a && *b && *want && a_bytes == ADD_A_BYTES &&
	      b_bytes == ADD_B_BYTES && want_bytes == ADD_C_BYTES,
	      "fixture arrays of %zu, %zu, %zu data bytes (want %d, %d, %d)",
	      a_bytes, b_bytes, want_bytes, ADD_A_BYTES, ADD_B_BYTES,
	      ADD_C_BYTES);
	return *a && *b && *want && !failures ? 0 : -1;
}

/* Reads c and compares it with the expected bytes exactly. */
static void check_output(const struct add *s, const void *want, const char *how)
{
	unsigned char got[ADD_C_BYTES];
	int ret;

	memset(got, 0xa5, sizeof(got));
	ret = transfer(s->fd, VACCEL_IOCTL_BUFFER_READ, s->c, got, sizeof(got));
	CHECK(ret == 0, "%s: BUFFER_READ: %d", how, ret);
	for (size_t i = 0; ret == 0 && i < sizeof(got); i++) {
		if (got[i] != ((const unsigned char *)want)[i]) {
			CHECK(0, "%s: output byte %zu is %#x, expected %#x", how,
			      i, got[i], ((const unsigned char *)want)[i]);
			break;
		}
	}
}

static void submit_and_wait(const struct add *s)
{
	struct vaccel_binding bind[3];
	struct vaccel_submit submit;
	struct vaccel_event_wait wait;
	int ret;

	add_bindings(s, bind);
	memset(&submit, 0, sizeof(submit));
	submit.queue = s->queue;
	submit.program = s->program;
	submit.bindings = ptr(bind);
	submit.binding_count = 3;
	ret = call(s->fd, VACCEL_IOCTL_SUBMIT, &submit);
	CHECK(ret == 0 && submit.event, "SUBMIT: %d error %u detail %u", ret,
	      submit.status.error, submit.status.detail);
	CHECK(submit.bindings == ptr(bind),
	      "SUBMIT did not give the bindings pointer back");
	if (ret)
		return;
	ret = event_wait(s->fd, submit.event, now_ns() + 30000000000ULL, &wait);
	CHECK(ret == 0 && wait.done_count == 1,
	      "EVENT_WAIT: %d error %u detail %u done %u", ret,
	      wait.status.error, wait.status.detail, wait.done_count);
	CHECK(event_state(s->fd, submit.event) == VACCEL_EVENT_COMPLETE,
	      "the event is not COMPLETE after its wait");
}

int main(int argc, char **argv)
{
	struct vaccel_get_version version;
	struct vaccel_device_tosa tosa;
	static unsigned char zeros[ADD_C_BYTES];
	char model[512];
	void *a = NULL, *b = NULL, *want = NULL;
	struct add s;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: vm_compat32 FIXTURE_DIR\n");
		return 2;
	}
	CHECK(sizeof(void *) == 4, "built as a %zu-bit program, not 32-bit",
	      sizeof(void *) * 8);
	if (fixture(argv[1], &a, &b, &want))
		return report("compat32");
	snprintf(model, sizeof(model),
		 "%s/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa", argv[1]);
	if (add_prepare(&s, model))
		return report("compat32");

	memset(&version, 0, sizeof(version));
	ret = call(s.fd, VACCEL_IOCTL_GET_VERSION, &version);
	CHECK(ret == 0 && version.major == VACCEL_ABI_MAJOR &&
	      version.minor == VACCEL_ABI_MINOR,
	      "GET_VERSION: %d %u.%u", ret, version.major, version.minor);
	/* The status copied back names the same offset as for 64-bit. */
	memset(&tosa, 0, sizeof(tosa));
	tosa.reserved = 1;
	ret = call(s.fd, VACCEL_IOCTL_DEVICE_TOSA, &tosa);
	CHECK(ret == -EINVAL && tosa.status.detail == VACCEL_D_RESERVED_NONZERO &&
	      tosa.status.arg0 == offsetof(struct vaccel_device_tosa, reserved),
	      "DEVICE_TOSA with reserved set: %d detail %u arg0 %llu", ret,
	      tosa.status.detail, (unsigned long long)tosa.status.arg0);

	ret = transfer(s.fd, VACCEL_IOCTL_BUFFER_WRITE, s.a, a, ADD_A_BYTES);
	CHECK(ret == 0, "BUFFER_WRITE a: %d", ret);
	ret = transfer(s.fd, VACCEL_IOCTL_BUFFER_WRITE, s.b, b, ADD_B_BYTES);
	CHECK(ret == 0, "BUFFER_WRITE b: %d", ret);
	submit_and_wait(&s);
	check_output(&s, want, "SUBMIT");

	/* c zeroed: RUN must write it again. */
	ret = transfer(s.fd, VACCEL_IOCTL_BUFFER_WRITE, s.c, zeros, ADD_C_BYTES);
	CHECK(ret == 0, "BUFFER_WRITE c: %d", ret);
	ret = add_run(&s);
	CHECK(ret == 0, "RUN: %d", ret);
	check_output(&s, want, "RUN");
	close(s.fd);
	free(a);
	free(b);
	free(want);
	return report("compat32");
}
