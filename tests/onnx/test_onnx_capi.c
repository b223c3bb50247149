/*
 * test_onnx_capi.c - libvaccel-onnx as a C program uses it: only
 * <vaccel/vaccel_onnx.h> and <vaccel/vaccel.h>, linked against the two
 * shared libraries. Models are ONNX node tests of Debian's libonnx-testdata
 * (VACCEL_ONNX_NODE_TESTS); each imported graph is loaded and run on the CPU
 * device of an embedded client, and its outputs are compared with what C
 * computes from the same inputs, bit for bit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <vaccel/vaccel.h>
#include <vaccel/vaccel_onnx.h>

#define TOSA_INT32 5u
#define TOSA_FP32 7u

static const char *node_model(const char *test)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s/model.onnx", VACCEL_ONNX_NODE_TESTS, test);
	return path;
}

static struct vaccel_onnx_model *imported(const char *test,
					  const struct vaccel_onnx_options *options)
{
	struct vaccel_onnx_model *m = NULL;
	const int r = vaccel_onnx_import_file(node_model(test), options, &m);
	if (r != 0)
		fail_msg("importing %s: %d %s", test, r, vaccel_onnx_last_error());
	assert_string_equal(vaccel_onnx_last_error(), "");
	return m;
}

/* One embedded client with a context on its CPU device, the imported
 * graph loaded there, and one host buffer per slot. */
struct loaded {
	vaccel_client *client;
	uint64_t context, program, queue;
	uint32_t slots;
	uint64_t buffer[8];
	uint64_t bytes[8];
};

static void load(struct vaccel_onnx_model *m, struct loaded *l)
{
	memset(l, 0, sizeof *l);
	assert_int_equal(vaccel_client_open(VACCEL_TRANSPORT_EMBEDDED, &l->client), 0);
	uint32_t count = 0, cpu = UINT32_MAX;
	assert_int_equal(vaccel_device_count(l->client, &count), 0);
	for (uint32_t i = 0; i < count; ++i) {
		struct vaccel_device_info info;
		memset(&info, 0, sizeof info);
		assert_int_equal(vaccel_device_info(l->client, i, &info), 0);
		if (strcmp(info.driver, "vaccel-cpu") == 0)
			cpu = i;
	}
	assert_true(cpu < count);
	assert_int_equal(vaccel_context_create(l->client, cpu, &l->context), 0);
	size_t size = 0;
	const void *tosa = vaccel_onnx_tosa(m, &size);
	assert_non_null(tosa);
	assert_true(size > 0);
	uint32_t inputs = 0, outputs = 0;
	assert_int_equal(vaccel_program_load(l->client, l->context, VACCEL_FORMAT_TOSA, NULL, tosa,
					     size, &l->program, &inputs, &outputs),
			 0);
	assert_int_equal(inputs, vaccel_onnx_input_count(m));
	assert_int_equal(outputs, vaccel_onnx_output_count(m));
	l->slots = inputs + outputs;
	assert_true(l->slots <= 8);
	/* The ports describe the program's slots: names, dtypes, bytes. */
	for (uint32_t s = 0; s < l->slots; ++s) {
		struct vaccel_onnx_port port;
		if (s < inputs)
			assert_int_equal(vaccel_onnx_input(m, s, &port), 0);
		else
			assert_int_equal(vaccel_onnx_output(m, s - inputs, &port), 0);
		struct vaccel_program_slot slot;
		memset(&slot, 0, sizeof slot);
		assert_int_equal(vaccel_program_slot(l->client, l->program, s, &slot), 0);
		assert_string_equal(slot.name, port.name);
		assert_int_equal(slot.dtype, port.graph_dtype);
		assert_int_equal(slot.bytes, port.graph_bytes);
		assert_int_equal(slot.rank, port.rank);
		for (uint32_t d = 0; d < port.rank; ++d)
			assert_int_equal(slot.shape[d], port.dims[d]);
		struct vaccel_buffer_alloc req = {.context = l->context,
						  .bytes = port.graph_bytes,
						  .domain = VACCEL_DOMAIN_HOST,
						  .usage = VACCEL_USAGE_ALL,
						  .access = VACCEL_ACCESS_RW};
		assert_int_equal(vaccel_buffer_alloc(l->client, &req), 0);
		l->buffer[s] = req.buffer;
		l->bytes[s] = port.graph_bytes;
	}
	assert_int_equal(vaccel_queue_create(l->client, l->context, &l->queue), 0);
}

/* Writes graph[s] (the graph's bytes of each input), runs, reads the
 * outputs' graph bytes into graph[inputs + i]. */
static void run(struct loaded *l, uint32_t inputs, void **graph)
{
	struct vaccel_binding b[8];
	memset(b, 0, sizeof b);
	for (uint32_t s = 0; s < l->slots; ++s) {
		if (s < inputs)
			assert_int_equal(vaccel_buffer_write(l->client, l->buffer[s], 0, graph[s],
							     l->bytes[s]),
					 0);
		b[s].slot = s;
		b[s].access = s < inputs ? VACCEL_ACCESS_READ : VACCEL_ACCESS_WRITE;
		b[s].buffer = l->buffer[s];
		b[s].bytes = l->bytes[s];
	}
	struct vaccel_status failure;
	const int r = vaccel_run(l->client, l->queue, l->program, b, l->slots,
				 vaccel_deadline_after_ns(10000000000ull), &failure);
	if (r != 0)
		fail_msg("run: %d %s", r, vaccel_last_error_message());
	for (uint32_t s = inputs; s < l->slots; ++s)
		assert_int_equal(vaccel_buffer_read(l->client, l->buffer[s], 0, graph[s],
						    l->bytes[s]),
				 0);
}

static void unload(struct loaded *l) { vaccel_client_close(l->client); }

static void float_add_runs_as_c_adds(void **state)
{
	(void)state;
	struct vaccel_onnx_model *m = imported("test_add", NULL);
	assert_int_equal(vaccel_onnx_input_count(m), 2);
	assert_int_equal(vaccel_onnx_output_count(m), 1);
	struct vaccel_onnx_port x, z;
	assert_int_equal(vaccel_onnx_input(m, 0, &x), 0);
	assert_string_equal(x.name, "x");
	assert_int_equal(x.onnx_type, VACCEL_ONNX_FLOAT);
	assert_int_equal(x.graph_dtype, TOSA_FP32);
	assert_int_equal(x.rank, 3);
	assert_int_equal(x.dims[0], 3);
	assert_int_equal(x.dims[1], 4);
	assert_int_equal(x.dims[2], 5);
	assert_int_equal(x.model_bytes, 240);
	assert_int_equal(x.graph_bytes, 240);
	assert_int_equal(vaccel_onnx_output(m, 0, &z), 0);
	assert_string_equal(z.name, "sum");

	struct loaded l;
	load(m, &l);
	float a[60], b[60], got[60];
	srand(7);
	for (int i = 0; i < 60; ++i) {
		a[i] = (float)rand() / (float)RAND_MAX - 0.5f;
		b[i] = (float)rand() / (float)RAND_MAX * 100.0f;
	}
	void *graph[3] = {a, b, got};
	run(&l, 2, graph);
	for (int i = 0; i < 60; ++i) {
		const float want = a[i] + b[i];
		assert_memory_equal(&got[i], &want, sizeof want);
	}
	unload(&l);
	vaccel_onnx_free(m);
}

/* UINT8 data is carried as INT32: widened in, wrapped out. */
static void uint8_add_widens_in_and_wraps_out(void **state)
{
	(void)state;
	struct vaccel_onnx_model *m = imported("test_add_uint8", NULL);
	struct vaccel_onnx_port x, z;
	assert_int_equal(vaccel_onnx_input(m, 0, &x), 0);
	assert_int_equal(x.onnx_type, VACCEL_ONNX_UINT8);
	assert_int_equal(x.graph_dtype, TOSA_INT32);
	assert_int_equal(x.model_bytes, 60);
	assert_int_equal(x.graph_bytes, 240);
	assert_int_equal(vaccel_onnx_output(m, 0, &z), 0);
	assert_int_equal(z.onnx_type, VACCEL_ONNX_UINT8);

	uint8_t a[60], b[60], sum[60];
	int32_t ga[60], gb[60], gsum[60];
	for (int i = 0; i < 60; ++i) {
		a[i] = (uint8_t)(i * 7 + 100);
		b[i] = (uint8_t)(255 - i);
	}
	assert_int_equal(vaccel_onnx_input_to_graph(m, 0, a, sizeof a, ga, sizeof ga), 0);
	assert_int_equal(vaccel_onnx_input_to_graph(m, 1, b, sizeof b, gb, sizeof gb), 0);
	for (int i = 0; i < 60; ++i)
		assert_int_equal(ga[i], a[i]);
	struct loaded l;
	load(m, &l);
	void *graph[3] = {ga, gb, gsum};
	run(&l, 2, graph);
	assert_int_equal(vaccel_onnx_output_from_graph(m, 0, gsum, sizeof gsum, sum, sizeof sum), 0);
	for (int i = 0; i < 60; ++i)
		assert_int_equal(sum[i], (uint8_t)(a[i] + b[i]));
	unload(&l);
	vaccel_onnx_free(m);
}

/* INT64 indices are narrowed with a range check; a value past INT32 is
 * refused by input, element and value, and nothing is written. */
static void int64_indices_narrow_and_refuse_past_int32(void **state)
{
	(void)state;
	struct vaccel_onnx_model *m = imported("test_gather_0", NULL);
	struct vaccel_onnx_port data, indices, y;
	assert_int_equal(vaccel_onnx_input(m, 0, &data), 0);
	assert_int_equal(vaccel_onnx_input(m, 1, &indices), 0);
	assert_string_equal(indices.name, "indices");
	assert_int_equal(indices.onnx_type, VACCEL_ONNX_INT64);
	assert_int_equal(indices.graph_dtype, TOSA_INT32);
	assert_int_equal(vaccel_onnx_output(m, 0, &y), 0);
	/* data [5, 4, 3, 2], indices [3] -> y [3, 4, 3, 2] (axis 0) */
	assert_int_equal(data.rank, 4);
	assert_int_equal(data.dims[0], 5);
	assert_int_equal(indices.rank, 1);
	assert_int_equal(y.rank, 4);
	assert_int_equal(y.dims[0], 3);
	const uint64_t rows = (uint64_t)data.dims[0];
	const uint64_t row = data.model_bytes / 4 / rows;
	const uint64_t n = indices.model_bytes / 8;
	assert_int_equal(n, 3);

	int64_t idx[3] = {4, 1, 0};
	int32_t gidx[3];
	memset(gidx, 0x5a, sizeof gidx);
	idx[1] = (int64_t)1 << 40;
	assert_int_equal(vaccel_onnx_input_to_graph(m, 1, idx, sizeof idx, gidx, sizeof gidx),
			 -ERANGE);
	assert_string_equal(vaccel_onnx_last_error(),
			    "input 'indices' element 1 holds 1099511627776, outside INT32: the "
			    "imported graph carries INT64 as INT32; give values from -2147483648 "
			    "to 2147483647");
	for (int i = 0; i < 3; ++i)
		assert_int_equal(gidx[i], 0x5a5a5a5a);
	idx[1] = 3;
	assert_int_equal(vaccel_onnx_input_to_graph(m, 1, idx, sizeof idx, gidx, sizeof gidx), 0);
	assert_string_equal(vaccel_onnx_last_error(), "");

	float *x = malloc(data.graph_bytes), *got = malloc(y.graph_bytes);
	assert_non_null(x);
	assert_non_null(got);
	for (uint64_t i = 0; i < data.graph_bytes / 4; ++i)
		x[i] = (float)i * 0.25f;
	struct loaded l;
	load(m, &l);
	void *graph[3] = {x, gidx, got};
	run(&l, 2, graph);
	for (uint64_t i = 0; i < n; ++i)
		assert_memory_equal(got + i * row, x + (uint64_t)idx[i] * row, row * 4);
	unload(&l);
	free(x);
	free(got);
	vaccel_onnx_free(m);
}

/* An input that sets a shape is given by value and folded; without it the
 * import is refused. */
static void a_shape_input_is_given_by_value(void **state)
{
	(void)state;
	struct vaccel_onnx_model *m = NULL;
	const int refused = vaccel_onnx_import_file(node_model("test_reshape_reordered_all_dims"),
						    NULL, &m);
	assert_int_equal(refused, -EOPNOTSUPP);
	assert_null(m);
	assert_non_null(strstr(vaccel_onnx_last_error(),
			       "test_reshape_reordered_all_dims/model.onnx: node 'reshaped' "
			       "(Reshape): input 1 ('shape') sets a shape or an attribute, so its "
			       "value must be known at import"));

	const int64_t shape_dims[1] = {3};
	const int64_t shape[3] = {4, 2, 3};
	struct vaccel_onnx_input_value value = {"shape", shape_dims, 1, VACCEL_ONNX_INT64, shape};
	struct vaccel_onnx_options o;
	memset(&o, 0, sizeof o);
	o.size = sizeof o;
	o.value_count = 1;
	o.values = &value;
	m = imported("test_reshape_reordered_all_dims", &o);
	assert_int_equal(vaccel_onnx_input_count(m), 1);
	struct vaccel_onnx_port data, reshaped;
	assert_int_equal(vaccel_onnx_input(m, 0, &data), 0);
	assert_string_equal(data.name, "data");
	assert_int_equal(vaccel_onnx_output(m, 0, &reshaped), 0);
	assert_int_equal(reshaped.rank, 3);
	assert_int_equal(reshaped.dims[0], 4);
	assert_int_equal(reshaped.dims[1], 2);
	assert_int_equal(reshaped.dims[2], 3);
	float in[24], out[24];
	for (int i = 0; i < 24; ++i)
		in[i] = (float)i - 11.5f;
	struct loaded l;
	load(m, &l);
	void *graph[2] = {in, out};
	run(&l, 1, graph);
	assert_memory_equal(out, in, sizeof in);
	unload(&l);
	vaccel_onnx_free(m);
}

static void bad_models_and_arguments_are_refused(void **state)
{
	(void)state;
	struct vaccel_onnx_model *m = NULL;
	static const char junk[] = "this is not an ONNX model";
	assert_int_equal(vaccel_onnx_import(junk, sizeof junk, NULL, &m), -EINVAL);
	assert_null(m);
	assert_true(strlen(vaccel_onnx_last_error()) > 0);

	assert_int_equal(vaccel_onnx_import_file("/nonexistent/model.onnx", NULL, &m), -ENOENT);
	assert_string_equal(vaccel_onnx_last_error(),
			    "cannot read /nonexistent/model.onnx: No such file or directory");
	assert_int_equal(vaccel_onnx_import(junk, sizeof junk, NULL, NULL), -EINVAL);

	/* An op type the importer does not take: named with its node. */
	assert_int_equal(vaccel_onnx_import_file(node_model("test_nonmaxsuppression_single_box"),
						 NULL, &m),
			 -EOPNOTSUPP);
	assert_null(m);
	assert_non_null(strstr(vaccel_onnx_last_error(), "(NonMaxSuppression): "));

	struct vaccel_onnx_options o;
	memset(&o, 0, sizeof o);
	o.size = 4;
	assert_int_equal(vaccel_onnx_import_file(node_model("test_add"), &o, &m), -EINVAL);
	assert_non_null(strstr(vaccel_onnx_last_error(), "options.size is 4"));
	o.size = sizeof o;
	o.shape_count = 1;
	assert_int_equal(vaccel_onnx_import_file(node_model("test_add"), &o, &m), -EINVAL);
	assert_null(m);

	m = imported("test_add", NULL);
	struct vaccel_onnx_port port;
	assert_int_equal(vaccel_onnx_input(m, 2, &port), -EINVAL);
	assert_string_equal(vaccel_onnx_last_error(),
			    "vaccel_onnx_input: the model has 2 inputs; there is no input 2");
	assert_int_equal(vaccel_onnx_output(m, 1, &port), -EINVAL);
	float a[60], g[60];
	memset(a, 0, sizeof a);
	assert_int_equal(vaccel_onnx_input_to_graph(m, 0, a, 236, g, sizeof g), -EINVAL);
	assert_string_equal(vaccel_onnx_last_error(),
			    "vaccel_onnx_input_to_graph: 'x' takes 240 bytes in and 240 out; 236 and "
			    "240 given");
	assert_int_equal(vaccel_onnx_output_from_graph(m, 0, a, sizeof a, g, sizeof g), 0);
	assert_memory_equal(g, a, sizeof a);
	vaccel_onnx_free(m);
	vaccel_onnx_free(NULL);
	size_t size = 1;
	assert_null(vaccel_onnx_tosa(NULL, &size));
	assert_int_equal(size, 0);
	assert_int_equal(vaccel_onnx_input_count(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(float_add_runs_as_c_adds),
		cmocka_unit_test(uint8_add_widens_in_and_wraps_out),
		cmocka_unit_test(int64_indices_narrow_and_refuse_past_int32),
		cmocka_unit_test(a_shape_input_is_given_by_value),
		cmocka_unit_test(bad_models_and_arguments_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
