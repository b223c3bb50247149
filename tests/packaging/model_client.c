/*
 * model_client.c - an application of the installed libvaccel, built by the
 * package test (tests/packaging/run-package-test.sh) against the installed
 * headers and library: once with `cc $(pkg-config --cflags --libs vaccel)`,
 * once through find_package(vaccel) (cmake-client/).
 *
 *   model_client FIXTURE    FIXTURE: tests/fixtures/tosa/v1.0-add_1x4x4x4_f32
 *
 * Loads the fixture's TOSA 1.0 ADD ([1,4,4,1] + [1,4,4,4], fp32) on every
 * device the client sees that runs TOSA programs, runs it on the fixture's
 * inputs and compares the output with the fixture's expected result byte
 * for byte (an fp32 ADD has one right answer). The transport is libvaccel's
 * choice ($VACCEL_TRANSPORT, $VACCEL_SOCKET). Prints one line per device
 * and "model_client: PASS" or "model_client: FAIL"; exit status 0 on PASS.
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vaccel/vaccel.h>

/* A whole file, malloc()ed, or NULL (said why). */
static unsigned char *read_file(const char *path, size_t *bytes)
{
	FILE *file = fopen(path, "rb");
	unsigned char *data = NULL;
	long size;

	if (!file) {
		perror(path);
		return NULL;
	}
	if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) > 0 &&
	    fseek(file, 0, SEEK_SET) == 0) {
		data = malloc((size_t)size);
		if (data && fread(data, 1, (size_t)size, file) != (size_t)size) {
			free(data);
			data = NULL;
		}
		*bytes = (size_t)size;
	}
	fclose(file);
	if (!data)
		fprintf(stderr, "model_client: cannot read %s\n", path);
	return data;
}

/* The data of a version 1 .npy file of little-endian fp32 in C order, or
 * NULL (said why). */
static float *read_npy_f32(const char *dir, const char *name, size_t *bytes)
{
	char path[1024];
	size_t size = 0, start;
	unsigned char *all;
	float *data;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	all = read_file(path, &size);
	if (!all)
		return NULL;
	if (size < 10 || memcmp(all, "\x93NUMPY\x01", 7) != 0) {
		fprintf(stderr, "model_client: %s is not a version 1 .npy file\n", path);
		free(all);
		return NULL;
	}
	start = 10 + (all[8] | (size_t)all[9] << 8);
	if (start > size || !memmem(all, start, "'<f4'", 5) ||
	    !memmem(all, start, "'fortran_order': False", 22)) {
		fprintf(stderr, "model_client: %s does not hold fp32 in C order\n", path);
		free(all);
		return NULL;
	}
	*bytes = size - start;
	data = malloc(*bytes ? *bytes : 1);
	if (data)
		memcpy(data, all + start, *bytes);
	free(all);
	return data;
}

static int failed(const char *what, int ret)
{
	fprintf(stderr, "model_client: %s: %s (%s)\n", what, vaccel_strerror(ret),
		vaccel_last_error_message());
	return -1;
}

/* The fixture: its program and the bytes of its inputs and output. */
struct fixture {
	unsigned char *tosa;
	size_t tosa_bytes;
	float *in[2];
	size_t in_bytes[2];
	float *want;
	size_t want_bytes;
};

/* Runs the fixture once on `device`; 0 when the output is exact. */
static int run_on(vaccel_client *client, uint32_t device, const struct fixture *f)
{
	struct vaccel_buffer_alloc alloc;
	struct vaccel_binding bindings[3];
	struct vaccel_status failure;
	uint64_t context = 0, program = 0, queue = 0, buffers[3] = { 0 };
	uint32_t inputs = 0, outputs = 0;
	float *got = NULL;
	int ret, result = -1;

	ret = vaccel_context_create(client, device, &context);
	if (ret)
		return failed("vaccel_context_create", ret);
	ret = vaccel_program_load(client, context, VACCEL_FORMAT_TOSA, NULL, f->tosa,
				  f->tosa_bytes, &program, &inputs, &outputs);
	if (ret) {
		failed("vaccel_program_load", ret);
		goto out;
	}
	if (inputs != 2 || outputs != 1) {
		fprintf(stderr, "model_client: the ADD program has %u inputs and %u outputs, not 2 and 1\n",
			inputs, outputs);
		goto out;
	}
	for (uint32_t slot = 0; slot < 3; slot++) {
		struct vaccel_program_slot info;
		size_t bytes = slot < 2 ? f->in_bytes[slot] : f->want_bytes;

		memset(&info, 0, sizeof(info));
		ret = vaccel_program_slot(client, program, slot, &info);
		if (ret) {
			failed("vaccel_program_slot", ret);
			goto out;
		}
		if (info.bytes != bytes) {
			fprintf(stderr, "model_client: slot %u (%s) takes %llu bytes, the fixture has %zu\n",
				slot, info.name, (unsigned long long)info.bytes, bytes);
			goto out;
		}
		memset(&alloc, 0, sizeof(alloc));
		alloc.context = context;
		alloc.bytes = bytes;
		alloc.domain = VACCEL_DOMAIN_HOST;
		alloc.usage = VACCEL_USAGE_ALL;
		alloc.access = VACCEL_ACCESS_RW;
		ret = vaccel_buffer_alloc(client, &alloc);
		if (ret) {
			failed("vaccel_buffer_alloc", ret);
			goto out;
		}
		buffers[slot] = alloc.buffer;
		bindings[slot] = (struct vaccel_binding){
			.slot = slot,
			.access = slot < 2 ? VACCEL_ACCESS_READ : VACCEL_ACCESS_WRITE,
			.buffer = alloc.buffer,
			.bytes = bytes,
		};
		if (slot < 2) {
			ret = vaccel_buffer_write(client, alloc.buffer, 0, f->in[slot], bytes);
			if (ret) {
				failed("vaccel_buffer_write", ret);
				goto out;
			}
		}
	}
	ret = vaccel_queue_create(client, context, &queue);
	if (ret) {
		failed("vaccel_queue_create", ret);
		goto out;
	}
	memset(&failure, 0, sizeof(failure));
	ret = vaccel_run(client, queue, program, bindings, 3, 0, &failure);
	if (ret) {
		char why[512];

		if (failure.error) {
			vaccel_status_message(&failure, why, sizeof(why));
			fprintf(stderr, "model_client: vaccel_run: the run failed: %s\n", why);
		} else {
			failed("vaccel_run", ret);
		}
		goto out;
	}
	got = malloc(f->want_bytes);
	if (!got)
		goto out;
	memset(got, 0xa5, f->want_bytes);
	ret = vaccel_buffer_read(client, buffers[2], 0, got, f->want_bytes);
	if (ret) {
		failed("vaccel_buffer_read", ret);
		goto out;
	}
	result = 0;
	for (size_t i = 0; i < f->want_bytes / sizeof(float); i++) {
		if (memcmp(&got[i], &f->want[i], sizeof(float)) != 0) {
			fprintf(stderr, "model_client: output element %zu is %.9g, expected %.9g\n", i,
				(double)got[i], (double)f->want[i]);
			result = -1;
			break;
		}
	}
out:
	free(got);
	if (queue)
		vaccel_queue_destroy(client, queue);
	for (int i = 0; i < 3; i++)
		if (buffers[i])
			vaccel_buffer_free(client, buffers[i]);
	if (program)
		vaccel_program_unload(client, program);
	vaccel_context_destroy(client, context);
	return result;
}

int main(int argc, char **argv)
{
	struct fixture f = { 0 };
	vaccel_client *client = NULL;
	uint32_t count = 0, ran = 0, passed = 0;
	char path[1024];
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FIXTURE (tests/fixtures/tosa/v1.0-add_1x4x4x4_f32)\n",
			argv[0]);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa", argv[1]);
	f.tosa = read_file(path, &f.tosa_bytes);
	f.in[0] = read_npy_f32(argv[1], "placeholder_0.npy", &f.in_bytes[0]);
	f.in[1] = read_npy_f32(argv[1], "placeholder_1.npy", &f.in_bytes[1]);
	f.want = read_npy_f32(argv[1], "tflite_result.npy", &f.want_bytes);
	if (!f.tosa || !f.in[0] || !f.in[1] || !f.want) {
		puts("model_client: FAIL");
		return 1;
	}

	ret = vaccel_client_open(NULL, &client);
	if (ret) {
		failed("vaccel_client_open", ret);
		puts("model_client: FAIL");
		return 1;
	}
	printf("model_client: transport %s\n", vaccel_client_transport(client));
	ret = vaccel_device_count(client, &count);
	if (ret)
		failed("vaccel_device_count", ret);
	for (uint32_t device = 0; ret == 0 && device < count; device++) {
		struct vaccel_device_info info;

		memset(&info, 0, sizeof(info));
		if (vaccel_device_info(client, device, &info) != 0 ||
		    !(info.formats & VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA)))
			continue;
		ran++;
		if (run_on(client, device, &f) == 0) {
			passed++;
			printf("model_client: device %u (%s): output exact\n", device, info.name);
		} else {
			printf("model_client: device %u (%s): FAILED\n", device, info.name);
		}
	}
	vaccel_client_close(client);
	if (ran == 0)
		fprintf(stderr, "model_client: none of %u devices runs TOSA programs\n", count);
	free(f.tosa);
	free(f.in[0]);
	free(f.in[1]);
	free(f.want);
	puts(ran > 0 && passed == ran ? "model_client: PASS" : "model_client: FAIL");
	return ran > 0 && passed == ran ? 0 : 1;
}
