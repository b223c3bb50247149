/*
 * vaccel/vaccel_onnx.h - libvaccel-onnx: ONNX models imported to TOSA 1.0
 * in the calling process (docs/onnx.md, "From C, C++ and Python";
 * docs/adr/0031-onnx-import.md).
 *
 * The importer runs here, in the client. What reaches vacceld is the TOSA
 * flatbuffer it makes, loaded with libvaccel's vaccel_program_load(); the
 * daemon never parses ONNX.
 *
 * Conventions (those of <vaccel/vaccel.h>):
 *  - every call returns 0 or a negative errno: -EINVAL for an argument or a
 *    model that is malformed, -EOPNOTSUPP for a model this importer cannot
 *    express in TOSA (an op type, a dtype, an attribute), -ERANGE for input
 *    data outside what the graph's type carries, -ENOMEM;
 *  - vaccel_onnx_last_error() is this thread's sentence for the last
 *    refusal: what was refused, why, what to do ("node 'Conv_12' (Conv):
 *    group 3 of 96 input channels is neither 1 nor depthwise").
 *
 * Data across the graph's boundary: the imported graph's inputs and
 * outputs carry the model's own names, shapes and layout (NCHW stays NCHW),
 * but TOSA 1.0 computes every integer type as INT32. A port whose
 * graph_bytes differ from its model_bytes (INT64 token ids, UINT8 pixels)
 * is converted with vaccel_onnx_input_to_graph() before a run and
 * vaccel_onnx_output_from_graph() after it; the others may be bound as
 * they are.
 *
 *    struct vaccel_onnx_model *m;
 *    int64_t dims[] = {1, 3, 224, 224};
 *    struct vaccel_onnx_input_shape shape = {"input", dims, 4};
 *    struct vaccel_onnx_options o = {.size = sizeof o, .shapes = &shape,
 *                                    .shape_count = 1};
 *    if (vaccel_onnx_import_file("resnet50.onnx", &o, &m) != 0)
 *        fprintf(stderr, "%s\n", vaccel_onnx_last_error());
 *    size_t bytes;
 *    const void *tosa = vaccel_onnx_tosa(m, &bytes);
 *    vaccel_program_load(c, ctx, VACCEL_FORMAT_TOSA, NULL, tosa, bytes,
 *                        &prog, NULL, NULL);
 *    vaccel_onnx_free(m);   (the program keeps what it needs)
 */
#ifndef VACCEL_VACCEL_ONNX_H
#define VACCEL_VACCEL_ONNX_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define VACCEL_ONNX_API __attribute__((visibility("default")))
#else
#define VACCEL_ONNX_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ONNX element types (TensorProto.DataType), as ports report them. */
enum vaccel_onnx_type {
	VACCEL_ONNX_FLOAT = 1,
	VACCEL_ONNX_UINT8 = 2,
	VACCEL_ONNX_INT8 = 3,
	VACCEL_ONNX_UINT16 = 4,
	VACCEL_ONNX_INT16 = 5,
	VACCEL_ONNX_INT32 = 6,
	VACCEL_ONNX_INT64 = 7,
	VACCEL_ONNX_BOOL = 9,
	VACCEL_ONNX_FLOAT16 = 10,
	VACCEL_ONNX_UINT32 = 12,
	VACCEL_ONNX_UINT64 = 13,
	VACCEL_ONNX_BFLOAT16 = 16,
};

/* The shape of graph input `name` (vaccelctl's --input-shape NAME=D0,...);
 * it overrides the model's own, and fixes its symbolic dimensions. */
struct vaccel_onnx_input_shape {
	const char *name;
	const int64_t *dims;
	uint32_t rank;
};

/* A graph input given by value: a Reshape's shape, a Slice's starts, a
 * Resize's scales. Its value is folded into the graph as a constant, so the
 * shapes it sets are static, and it is no longer an input of the imported
 * graph. `type` is VACCEL_ONNX_INT64, VACCEL_ONNX_INT32 or
 * VACCEL_ONNX_FLOAT; `data` holds as many elements as `dims` give. */
struct vaccel_onnx_input_value {
	const char *name;
	const int64_t *dims;
	uint32_t rank;
	int32_t type;
	const void *data;
};

struct vaccel_onnx_options {
	uint32_t size; /* sizeof(struct vaccel_onnx_options) */
	uint32_t shape_count;
	const struct vaccel_onnx_input_shape *shapes;
	uint32_t value_count;
	const struct vaccel_onnx_input_value *values;
};

/* One input or output of an imported model. The pointers stay valid until
 * vaccel_onnx_free(). */
struct vaccel_onnx_port {
	const char *name;     /* the model's own */
	int32_t onnx_type;    /* enum vaccel_onnx_type: the model's data */
	uint32_t graph_dtype; /* the TOSA DType the graph holds (as vaccel_program_slot says) */
	uint32_t rank;
	const int64_t *dims;
	uint64_t model_bytes; /* the data in the model's type */
	uint64_t graph_bytes; /* the data in the graph's type: what a binding covers */
};

struct vaccel_onnx_model;

/* Imports the ONNX model in onnx[0..size) (the bytes of a .onnx file).
 * options may be NULL. On success *model is the import, freed with
 * vaccel_onnx_free(). */
VACCEL_ONNX_API int vaccel_onnx_import(const void *onnx, size_t size,
				       const struct vaccel_onnx_options *options,
				       struct vaccel_onnx_model **model);
/* vaccel_onnx_import() of the file at `path`; a file that cannot be read is
 * refused with its errno and a message naming it. */
VACCEL_ONNX_API int vaccel_onnx_import_file(const char *path,
					    const struct vaccel_onnx_options *options,
					    struct vaccel_onnx_model **model);
/* NULL is ignored. */
VACCEL_ONNX_API void vaccel_onnx_free(struct vaccel_onnx_model *model);

/* The TOSA 1.0 flatbuffer (for vaccel_program_load); valid until
 * vaccel_onnx_free(). */
VACCEL_ONNX_API const void *vaccel_onnx_tosa(const struct vaccel_onnx_model *model,
					     size_t *size);
VACCEL_ONNX_API uint32_t vaccel_onnx_input_count(const struct vaccel_onnx_model *model);
VACCEL_ONNX_API uint32_t vaccel_onnx_output_count(const struct vaccel_onnx_model *model);
/* Port `index` in the graph's order, which is the program's slot order:
 * inputs are slots 0..inputs-1, outputs follow. -EINVAL past the end. */
VACCEL_ONNX_API int vaccel_onnx_input(const struct vaccel_onnx_model *model, uint32_t index,
				      struct vaccel_onnx_port *port);
VACCEL_ONNX_API int vaccel_onnx_output(const struct vaccel_onnx_model *model, uint32_t index,
				       struct vaccel_onnx_port *port);

/* Input `index`'s data, model[0..model_bytes) in the model's type, written
 * to graph[0..graph_bytes) in the graph's: INT64 narrowed to INT32 with a
 * range check (-ERANGE naming the input, the element and the value), small
 * integers widened. Sizes other than the port's are -EINVAL. */
VACCEL_ONNX_API int vaccel_onnx_input_to_graph(const struct vaccel_onnx_model *model,
					       uint32_t index, const void *model_data,
					       size_t model_bytes, void *graph_data,
					       size_t graph_bytes);
/* Output `index`'s data as the graph wrote it, in the model's type: INT32
 * widened to INT64, narrower types keeping their low bits. */
VACCEL_ONNX_API int vaccel_onnx_output_from_graph(const struct vaccel_onnx_model *model,
						  uint32_t index, const void *graph_data,
						  size_t graph_bytes, void *model_data,
						  size_t model_bytes);

/* This thread's sentence for its last refused call; "" after a success.
 * Valid until the thread's next vaccel_onnx_* call. */
VACCEL_ONNX_API const char *vaccel_onnx_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
