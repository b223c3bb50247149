/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The accelerator contract ABI of /dev/vaccel.
 *
 * One header for every party: the kernel module (kmod/), the daemon
 * (vacceld), libvaccel and the wire protocol of the socket transport. Only
 * <linux/types.h> and <linux/ioctl.h> are included, so it compiles as C and
 * C++ in kernel and user space.
 *
 * Rules (the kernel's DRM/accel uapi conventions):
 *  - fixed-width __u32/__u64 fields, user pointers as __u64;
 *  - every struct is padded to a multiple of 8 bytes with explicit fields
 *    named pad/reserved that must be zero: non-zero is refused;
 *  - unknown flags are refused;
 *  - timeouts and deadlines are absolute CLOCK_MONOTONIC nanoseconds;
 *  - each ioctl returns 0 or a negative errno (the mapping is below), and
 *    writes the contract error and a detail into the struct's leading
 *    `struct vaccel_status`, which the caller must zero on entry;
 *  - handles are opaque, non-zero, and meaningful only inside the session
 *    (open file or socket connection) that created them;
 *  - open() of /dev/vaccel fails with -EDQUOT past the opener's per-user
 *    session cap (module parameter max_sessions_per_user) or its tenant's
 *    sessions total (the daemon's rule);
 *  - a user pointer must point at anonymous, shmem (memfd, tmpfs, a
 *    BUFFER_MAP mapping) or hugetlb memory: a file mapping of any other
 *    filesystem is refused with -EOPNOTSUPP, status Unsupported /
 *    VACCEL_D_BAD_VALUE (arg0 = the pointer field's offset), before any of
 *    its pages is touched (libvaccel stages such bytes and retries).
 *
 * tests/abi checks every size and offset below, compiled as C and as C++.
 */
#ifndef VACCEL_UAPI_VACCEL_H
#define VACCEL_UAPI_VACCEL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * 1.1: host gates, kernel launch, device state and loss,
 * VACCEL_LIMIT_GATES. vaccel_device_limits and vaccel_context_limits grew
 * by 8 bytes each, so the ioctls that carry them changed number; 1.0 was
 * never released outside this repository (docs/adr/0009).
 * 1.2: VACCEL_IOCTL_DEVICE_TOSA, a device's TOSA capability descriptors
 * (docs/adr/0014-tosa-descriptors.md). Nothing of 1.1 moved.
 * 1.3: VACCEL_FORMAT_SPIRV, raw SPIR-V compute kernels for Vulkan devices
 * (docs/adr/0013-vulkan-backend.md). Nothing of 1.2 moved.
 * 1.4: VACCEL_IOCTL_RUN (submit and wait in one request, no event handle)
 * and VACCEL_IOCTL_BUFFER_MAP (a Host or Shared buffer mapped into the
 * client), docs/adr/0019-fast-path.md. Nothing of 1.3 moved.
 * 2.0: the ioctl type moved from 0xAC (registered to
 * linux/raw.h in the kernel's ioctl-number table) to VACCEL_IOCTL_BASE
 * 0xA7, which that table leaves free; every VACCEL_IOCTL_* number changed,
 * nothing else did: the structs, opcodes and wire are those of 1.4
 * (docs/adr/0021-hardened-kernel-path.md).
 * 2.1: containers. The admin commands CONTAINERS,
 * CONTAINER_ADD and CONTAINER_REMOVE (a CDI hook tells the daemon which
 * devices a container was given) and VACCEL_D_DEVICE_NOT_GRANTED, the
 * refusal of a context on a device the session's container was not given
 * (docs/adr/0023-containers-through-cdi.md). Nothing of 2.0 moved.
 * 2.2: tenants. Limits are a tenant's totals across its
 * sessions; vaccel_status.scope (the old pad) says whose limit a
 * VACCEL_D_LIMIT refusal hit, VACCEL_LIMIT_SESSIONS caps a tenant's open
 * sessions, VACCEL_ADMIN_TENANTS reports each tenant's use
 * (docs/adr/0024-tenants.md). Nothing of 2.1 moved.
 * 2.3 (this header): VACCEL_ADMIN_MINE, the caller's own rule, limits
 * and use, answered to any caller (not only administrators). Nothing of
 * 2.2 moved.
 */
#define VACCEL_ABI_MAJOR 2
#define VACCEL_ABI_MINOR 3

/* Capabilities reported by VACCEL_IOCTL_GET_VERSION. */
#define VACCEL_CAP_TOSA		(1ULL << 0)	/* TOSA 1.0 programs */
#define VACCEL_CAP_CUDA_PTX	(1ULL << 1)	/* raw CUDA PTX programs */
#define VACCEL_CAP_DEADLINES	(1ULL << 2)	/* submit deadlines (per device) */
#define VACCEL_CAP_GATES	(1ULL << 3)	/* host gates, submit_after */
#define VACCEL_CAP_LAUNCH	(1ULL << 4)	/* raw kernel launch */
/* VACCEL_IOCTL_DEVICE_TOSA: TOSA capability descriptors (ABI 1.2) */
#define VACCEL_CAP_TOSA_DESCRIPTORS	(1ULL << 5)
/* VACCEL_IOCTL_RUN and VACCEL_IOCTL_BUFFER_MAP (ABI 1.4) */
#define VACCEL_CAP_RUN		(1ULL << 6)
#define VACCEL_CAP_BUFFER_MAP	(1ULL << 7)
#define VACCEL_CAP_ALL		((1ULL << 8) - 1)

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/*
 * The contract's errors. An ioctl that fails returns the negative errno in
 * the comment and stores the code in vaccel_status.error.
 */
enum vaccel_error {
	VACCEL_OK = 0,
	VACCEL_E_UNSUPPORTED = 1,	/* -EOPNOTSUPP: not offered at all */
	VACCEL_E_INCOMPATIBLE = 2,	/* -ENOEXEC: offered, not for this */
	VACCEL_E_INVALID_ARGUMENT = 3,	/* -EINVAL */
	VACCEL_E_OUT_OF_BOUNDS = 4,	/* -ERANGE */
	VACCEL_E_OUT_OF_MEMORY = 5,	/* -ENOMEM */
	VACCEL_E_RESOURCE_LIMIT = 6,	/* -EDQUOT */
	VACCEL_E_DEVICE_LOST = 7,	/* -ENODEV */
	VACCEL_E_BUSY = 8,		/* -EBUSY */
	VACCEL_E_PERMISSION_DENIED = 9,	/* -EACCES */
	VACCEL_E_DEADLINE_EXPIRED = 10,	/* -ETIME */
	VACCEL_E_EXTERNAL = 11,		/* -EIO: arg0 = domain, arg1 = code */
	/* -ECANCELED: the work never ran (a CANCELLED event's failure) */
	VACCEL_E_CANCELLED = 12,
	VACCEL_E_COUNT = 13,
};

/*
 * What exactly was refused. arg0/arg1 of vaccel_status carry the values
 * named in each comment; libvaccel turns them into a sentence.
 */
enum vaccel_detail {
	VACCEL_D_NONE = 0,
	VACCEL_D_UNKNOWN_HANDLE = 1,	/* arg0 = the handle */
	VACCEL_D_WRONG_HANDLE_KIND = 2,	/* arg0 = the handle */
	VACCEL_D_RESERVED_NONZERO = 3,	/* arg0 = byte offset in the struct */
	VACCEL_D_UNKNOWN_FLAGS = 4,	/* arg0 = the unknown bits */
	VACCEL_D_BAD_SIZE = 5,		/* arg0 = size given, arg1 = expected */
	VACCEL_D_UNKNOWN_OPCODE = 6,	/* arg0 = opcode */
	VACCEL_D_NO_DEVICE = 7,		/* arg0 = index, arg1 = device count */
	VACCEL_D_BAD_VALUE = 8,		/* arg0 = field id, arg1 = value */
	VACCEL_D_RANGE = 9,		/* arg0 = offset, arg1 = bytes */
	VACCEL_D_IN_USE = 10,		/* arg0 = users (children/in flight) */
	VACCEL_D_IN_FLIGHT = 11,	/* arg0 = buffer, arg1 = submissions */
	VACCEL_D_ACCESS = 12,		/* arg0 = access asked, arg1 = allowed */
	VACCEL_D_USAGE = 13,		/* arg0 = usage needed, arg1 = usage */
	VACCEL_D_BINDING_SLOT = 14,	/* arg0 = binding index, arg1 = slot */
	VACCEL_D_BINDING_DUPLICATE = 15, /* arg0 = binding index, arg1 = slot */
	VACCEL_D_BINDING_ALIAS = 16,	/* arg0 = binding index, arg1 = other */
	VACCEL_D_BINDING_SIZE = 17,	/* arg0 = binding index, arg1 = needed */
	VACCEL_D_BINDING_MISSING = 18,	/* arg0 = slot, arg1 = slot count */
	VACCEL_D_BINDING_CONTEXT = 19,	/* arg0 = binding index */
	/* arg0 = limit value, arg1 = in use; vaccel_status.limit names it */
	VACCEL_D_LIMIT = 20,
	VACCEL_D_TOSA_VERSION = 21,	/* arg0 = major, arg1 = minor */
	VACCEL_D_TOSA_MALFORMED = 22,	/* arg0 = reason (enum below) */
	VACCEL_D_TOSA_OPERATOR = 23,	/* arg0 = TOSA Op, arg1 = DType */
	VACCEL_D_TOSA_DTYPE = 24,	/* arg0 = DType, arg1 = TOSA Op */
	VACCEL_D_TOSA_GRAPH = 25,	/* arg0 = reason (enum below) */
	VACCEL_D_FORMAT = 26,		/* arg0 = program format */
	VACCEL_D_TARGET = 27,		/* target identity not admitted */
	VACCEL_D_WAIT_TIMEOUT = 28,	/* arg0 = events not yet done */
	VACCEL_D_DEADLINE = 29,		/* deadlines not honoured here */
	VACCEL_D_NOT_COMPLETE = 30,	/* arg0 = event */
	VACCEL_D_EXECUTION = 31,	/* arg0 = operator index */
	VACCEL_D_PEER_GONE = 32,	/* the daemon went away */
	VACCEL_D_NOT_ADMIN = 33,	/* arg0 = uid, arg1 = gid of the peer */
	/* arg0 = byte offset of the fault in the request document */
	VACCEL_D_ADMIN_REQUEST = 34,
	VACCEL_D_KERNEL_ARG_TAG = 35,	/* arg0 = byte offset, arg1 = tag */
	/* arg0 = offset of the record's tag, arg1 = value bytes missing */
	VACCEL_D_KERNEL_ARG_TRUNCATED = 36,
	/* arg0 = offset of the first zero byte after the last record,
	 * arg1 = how many follow
	 */
	VACCEL_D_KERNEL_ARG_TRAILING = 37,
	/* arg0 = record index, arg1 = the slot no binding carries */
	VACCEL_D_KERNEL_ARG_POINTER = 38,
	VACCEL_D_KERNEL_ENTRY = 39,	/* the program has no such entry point */
	VACCEL_D_LAUNCH_DIMS = 40,	/* arg0 = field id, arg1 = value */
	VACCEL_D_DEVICE_STATE = 41,	/* arg0 = device index: it is lost */
	/* arg0 = event: accepted, not confirmed; the event reports it */
	VACCEL_D_INDETERMINATE = 42,
	VACCEL_D_GATE_DESTROYED = 43,	/* arg1 = the value it awaited */
	VACCEL_D_SESSION_CLOSED = 44,	/* cancelled by session teardown */
	/* arg0 = argument index (or count given), arg1 = tag (or count)
	 * the entry expects
	 */
	VACCEL_D_KERNEL_SIGNATURE = 45,
	/* arg0 = descriptor index, arg1 = the device's descriptor count */
	VACCEL_D_NO_TOSA_DESCRIPTOR = 46,
	/* arg0 = the buffer, arg1 = its enum vaccel_domain (ABI 1.4) */
	VACCEL_D_DOMAIN = 47,
	/* arg0 = device index, arg1 = the devices the session's container
	 * was given, one bit per index below 64 (ABI 2.1)
	 */
	VACCEL_D_DEVICE_NOT_GRANTED = 48,
	VACCEL_D_COUNT = 49,
};

/*
 * vaccel_status.scope: who a VACCEL_D_LIMIT refusal's limit belongs to
 * (ABI 2.2). A tenant's limits are totals across all its sessions on one
 * device; arg0 is then the tenant's total and arg1 its use.
 */
enum vaccel_limit_scope {
	VACCEL_SCOPE_CONTEXT = 0,	/* one context's own cap */
	VACCEL_SCOPE_UID = 1,		/* tenant: the user of the session */
	VACCEL_SCOPE_GID = 2,		/* tenant: its primary group */
	VACCEL_SCOPE_CGROUP = 3,	/* tenant: a cgroup subtree */
	VACCEL_SCOPE_CONTAINER = 4,	/* tenant: a registered container */
	VACCEL_SCOPE_DEVICE = 5,	/* the device's own, all tenants */
	VACCEL_SCOPE_COUNT = 6,
};
#define VACCEL_SCOPE_KIND(scope)	((scope) & 0xfU)
#define VACCEL_SCOPE_DEVICE_INDEX(scope)	(((scope) >> 4) & 0xfffU)
#define VACCEL_SCOPE_SESSIONS(scope)	(((scope) >> 16) & 0xffffU)
#define VACCEL_SCOPE_MAKE(kind, device, sessions) \
	(((kind) & 0xfU) | (((device) & 0xfffU) << 4) | \
	 (((sessions) > 0xffffU ? 0xffffU : (sessions)) << 16))

/* vaccel_status.limit: which limit a VACCEL_D_LIMIT refusal hit. */
enum vaccel_limit_kind {
	VACCEL_LIMIT_NONE = 0,
	VACCEL_LIMIT_CONTEXTS = 1,
	VACCEL_LIMIT_MEMORY_BYTES = 2,
	VACCEL_LIMIT_BUFFERS = 3,
	VACCEL_LIMIT_PROGRAMS = 4,
	VACCEL_LIMIT_QUEUES = 5,
	VACCEL_LIMIT_EVENTS = 6,
	VACCEL_LIMIT_BINDINGS = 7,
	VACCEL_LIMIT_BUFFER_BYTES = 8,
	VACCEL_LIMIT_ARTIFACT_BYTES = 9,
	VACCEL_LIMIT_HANDLES = 10,
	VACCEL_LIMIT_GATES = 11,
	VACCEL_LIMIT_KERNEL_ARGS = 12,		/* records in one argv */
	VACCEL_LIMIT_KERNEL_ARGS_BYTES = 13,	/* bytes of one argv */
	VACCEL_LIMIT_SESSIONS = 14,		/* a tenant's open sessions (ABI 2.2) */
	VACCEL_LIMIT_COUNT = 15,
};

/* Reasons carried by VACCEL_D_TOSA_MALFORMED / VACCEL_D_TOSA_GRAPH. */
enum vaccel_tosa_reason {
	VACCEL_TOSA_NOT_FLATBUFFER = 1,	/* verifier refused the bytes */
	VACCEL_TOSA_NO_IDENTIFIER = 2,	/* file identifier is not "TOSA" */
	VACCEL_TOSA_UNKNOWN_TENSOR = 3,	/* a name refers to no tensor */
	VACCEL_TOSA_BAD_SHAPE = 4,	/* negative, dynamic or mismatched */
	VACCEL_TOSA_BAD_DATA = 5,	/* constant data shorter than shape */
	VACCEL_TOSA_BAD_ATTRIBUTE = 6,	/* missing or inconsistent attribute */
	VACCEL_TOSA_REGIONS = 7,	/* more regions/blocks than admitted */
	VACCEL_TOSA_CYCLE = 8,		/* no execution order exists */
	VACCEL_TOSA_EXTERNAL_DATA = 9,	/* offset/size tensors */
	VACCEL_TOSA_ARITY = 10,		/* wrong operand count */
	VACCEL_TOSA_CONTROL_FLOW = 11,	/* COND_IF/WHILE_LOOP not admitted */
	VACCEL_TOSA_VARIABLES = 12,	/* variables not admitted */
};

/*
 * Leads every ioctl struct. In: all zero. Out: the contract result.
 */
struct vaccel_status {
	__u32 error;	/* enum vaccel_error */
	__u32 detail;	/* enum vaccel_detail */
	__u32 limit;	/* enum vaccel_limit_kind, for VACCEL_D_LIMIT */
	/*
	 * For VACCEL_D_LIMIT (ABI 2.2; 0 elsewhere): whose limit it is.
	 * Bits 0-3: enum vaccel_limit_scope; bits 4-15: the device index;
	 * bits 16-31: the tenant's open sessions (saturating at 0xffff).
	 * Read it with the VACCEL_SCOPE_* macros below.
	 */
	__u32 scope;
	__u64 arg0;	/* detail-specific, see enum vaccel_detail */
	__u64 arg1;
};

/* ------------------------------------------------------------------ */
/* Enumerations of the contract                                        */
/* ------------------------------------------------------------------ */

enum vaccel_device_class {
	VACCEL_CLASS_OTHER = 0,	/* CPU and anything else */
	VACCEL_CLASS_GPU = 1,
	VACCEL_CLASS_NPU = 2,
};

/* Memory capabilities of a device (vaccel_device_info.memory_caps). */
#define VACCEL_MEM_HOST_VISIBLE	(1U << 0)
#define VACCEL_MEM_DEVICE_LOCAL	(1U << 1)
#define VACCEL_MEM_SHARED	(1U << 2)

enum vaccel_domain {
	VACCEL_DOMAIN_HOST = 1,		/* host memory the device reads */
	VACCEL_DOMAIN_DEVICE = 2,	/* device-local memory */
	VACCEL_DOMAIN_SHARED = 3,	/* host-visible and device-local */
};

/* Buffer usage (what the buffer may be used for). */
#define VACCEL_USAGE_STORAGE		(1U << 0)	/* bound to submissions */
#define VACCEL_USAGE_TRANSFER_SRC	(1U << 1)	/* read_buffer */
#define VACCEL_USAGE_TRANSFER_DST	(1U << 2)	/* write_buffer */
#define VACCEL_USAGE_ALL		((1U << 3) - 1)

/* Access of a binding, and the access a buffer allows. */
#define VACCEL_ACCESS_READ	(1U << 0)
#define VACCEL_ACCESS_WRITE	(1U << 1)
#define VACCEL_ACCESS_RW	(VACCEL_ACCESS_READ | VACCEL_ACCESS_WRITE)

/* Properties of an allocation (vaccel_buffer_alloc.properties). */
#define VACCEL_PROP_HOST_VISIBLE	(1U << 0)
#define VACCEL_PROP_DEVICE_LOCAL	(1U << 1)
#define VACCEL_PROP_COHERENT		(1U << 2)
#define VACCEL_PROP_DIRECT_BINDING	(1U << 3)

/*
 * Program formats. Kernel formats (all but TOSA) are loaded with an all-zero
 * target and run with VACCEL_IOCTL_LAUNCH, which names the entry point.
 */
enum vaccel_program_format {
	VACCEL_FORMAT_TOSA = 1,		/* TOSA 1.0 flatbuffer */
	VACCEL_FORMAT_CUDA_PTX = 2,	/* PTX text */
	VACCEL_FORMAT_CUDA_CUBIN = 3,	/* CUDA ELF cubin */
	/* the CPU's built-in kernels: the library name "vaccel.builtin",
	 * without NUL
	 */
	VACCEL_FORMAT_CPU_BUILTIN = 4,
	/* a SPIR-V module (little-endian words) with GLCompute entry points,
	 * run on Vulkan devices: scalar arguments are its push constants,
	 * pointer arguments its storage buffers (docs/adr/0013)
	 */
	VACCEL_FORMAT_SPIRV = 5,
	VACCEL_FORMAT_COUNT = 6,
};
#define VACCEL_FORMAT_BIT(f)	(1U << (f))

/* TOSA profiles and extensions (vaccel_tosa_target). */
#define VACCEL_TOSA_PRO_INT	(1U << 0)
#define VACCEL_TOSA_PRO_FP	(1U << 1)

#define VACCEL_TOSA_EXT_INT16		(1ULL << 0)
#define VACCEL_TOSA_EXT_INT4		(1ULL << 1)
#define VACCEL_TOSA_EXT_BF16		(1ULL << 2)
#define VACCEL_TOSA_EXT_FP8E4M3		(1ULL << 3)
#define VACCEL_TOSA_EXT_FP8E5M2		(1ULL << 4)
#define VACCEL_TOSA_EXT_FFT		(1ULL << 5)
#define VACCEL_TOSA_EXT_VARIABLE	(1ULL << 6)
#define VACCEL_TOSA_EXT_CONTROLFLOW	(1ULL << 7)
#define VACCEL_TOSA_EXT_DOUBLEROUND	(1ULL << 8)
#define VACCEL_TOSA_EXT_INEXACTROUND	(1ULL << 9)
#define VACCEL_TOSA_EXT_DYNAMIC		(1ULL << 10)

enum vaccel_tosa_level {
	VACCEL_TOSA_LEVEL_NONE = 0,
	VACCEL_TOSA_LEVEL_8K = 1,
};

/* A TOSA target identity: version, profiles, level, extensions. */
struct vaccel_tosa_target {
	__u16 major;
	__u16 minor;
	__u32 profiles;		/* VACCEL_TOSA_PRO_* */
	__u32 level;		/* enum vaccel_tosa_level */
	__u32 pad;
	__u64 extensions;	/* VACCEL_TOSA_EXT_* */
};

#define VACCEL_MAX_TOSA_TARGETS	4

/*
 * A TOSA capability descriptor: what one exact target of a device admits
 * (VACCEL_IOCTL_DEVICE_TOSA). Arrays are indexed by the TOSA 1.0 enum
 * value (DType of tosa.fbs, Op of tosa.fbs: 0 .. 75), with room for later
 * TOSA versions; entries past the values TOSA defines are zero.
 */
#define VACCEL_TOSA_MAX_DTYPES	32
#define VACCEL_TOSA_MAX_OPS	96

/* Roles a dtype may take in a block (vaccel_tosa_dtype_caps.roles). */
#define VACCEL_TOSA_ROLE_INPUT		(1U << 0)	/* a block input */
#define VACCEL_TOSA_ROLE_OUTPUT		(1U << 1)	/* a block output */
#define VACCEL_TOSA_ROLE_CONSTANT	(1U << 2)	/* serialized data */
#define VACCEL_TOSA_ROLE_INTERMEDIATE	(1U << 3)	/* inside the block */
#define VACCEL_TOSA_ROLE_ALL		((1U << 4) - 1)

/* Restrictions on an admitted operator (vaccel_tosa_op_caps.constraints). */
#define VACCEL_TOSA_OPC_PROPAGATING_NAN		(1U << 0) /* nan_mode PROPAGATE */
#define VACCEL_TOSA_OPC_ZERO_PADDING		(1U << 1) /* pool padding 0 */
#define VACCEL_TOSA_OPC_CONSTANT_PARAMETERS	(1U << 2) /* shape operands */
#define VACCEL_TOSA_OPC_ZERO_ZERO_POINTS	(1U << 3) /* serialized zeros */
#define VACCEL_TOSA_OPC_ZERO_SHIFT		(1U << 4) /* MUL's shift 0 */
#define VACCEL_TOSA_OPC_ALL			((1U << 5) - 1)

/* vaccel_tosa_envelope.runtime_conditions. */
enum vaccel_tosa_runtime_conditions {
	/* a graph with a condition TOSA leaves to run time is refused */
	VACCEL_TOSA_RUNTIME_NONE = 0,
	/* REQUIRE conditions may stay; mandated error checks may not */
	VACCEL_TOSA_RUNTIME_ADVISORY = 1,
};

struct vaccel_tosa_dtype_caps {
	__u32 roles;		/* VACCEL_TOSA_ROLE_*; 0 = not admitted */
	/* 1: only as a constant an operator takes as a compile-time
	 * parameter (e.g. MUL's shift), never as a computed tensor
	 */
	__u32 parameter_only;
};

struct vaccel_tosa_op_caps {
	__u8 present;		/* 1: the operator is admitted, 0: it is not */
	__u8 pad;
	__u16 constraints;	/* VACCEL_TOSA_OPC_* */
	/* bit n: the operator takes TOSA DType n as an operand or result;
	 * 0 = the descriptor does not say (any dtype admitted in its role)
	 */
	__u32 dtypes;
};

/* The whole-graph boundary no operator entry expresses. */
struct vaccel_tosa_envelope {
	__u32 max_regions;
	__u32 max_blocks;	/* over all regions */
	__u32 dynamic_shapes;	/* 0 or 1 */
	__u32 runtime_conditions; /* enum vaccel_tosa_runtime_conditions */
};

struct vaccel_tosa_descriptor {
	struct vaccel_tosa_target target;
	__u32 descriptor_count;	/* how many descriptors the device has */
	__u32 pad;
	struct vaccel_tosa_envelope envelope;
	struct vaccel_tosa_dtype_caps dtypes[VACCEL_TOSA_MAX_DTYPES];
	struct vaccel_tosa_op_caps operators[VACCEL_TOSA_MAX_OPS];
	__u64 reserved[2];
};
#define VACCEL_NAME_LEN		64

/* A device's own limits (per context unless said otherwise). */
struct vaccel_device_limits {
	__u32 max_contexts;		/* per device, all sessions */
	__u32 max_buffers;
	__u32 max_programs;
	__u32 max_queues;
	__u32 max_events;		/* events alive per context */
	__u32 max_bindings;		/* per submission */
	__u64 max_buffer_bytes;		/* one allocation */
	__u64 max_artifact_bytes;	/* one program payload */
	__u64 max_memory_bytes;		/* all buffers of one context */
	__u32 max_gates;		/* host gates alive per context */
	__u32 pad;
};

/* vaccel_device_info.state. A lost device fails every later call. */
enum vaccel_device_state {
	VACCEL_DEVICE_OK = 0,
	VACCEL_DEVICE_LOST = 1,	/* a fault or reset: serves nothing more */
};

struct vaccel_device_info {
	__u8 uuid[16];
	__u32 device_class;	/* enum vaccel_device_class */
	__u32 vendor_id;
	__u32 device_id;
	__u32 pci_domain;	/* PCI location, valid if pci_valid */
	__u8 pci_bus;
	__u8 pci_device;
	__u8 pci_function;
	__u8 pci_valid;
	__u32 memory_caps;	/* VACCEL_MEM_* */
	char name[VACCEL_NAME_LEN];	/* NUL-terminated */
	char driver[VACCEL_NAME_LEN];	/* backend and driver, NUL-terminated */
	__u64 memory_bytes;	/* memory the device offers in all */
	struct vaccel_device_limits limits;
	__u32 formats;		/* VACCEL_FORMAT_BIT(enum vaccel_program_format) */
	__u32 tosa_target_count;
	struct vaccel_tosa_target tosa_targets[VACCEL_MAX_TOSA_TARGETS];
	__u64 flags;		/* VACCEL_CAP_* this device honours */
	__u32 state;		/* enum vaccel_device_state, when queried */
	__u32 pad;
	__u64 reserved[3];
};

/* ------------------------------------------------------------------ */
/* ioctl argument structs                                              */
/* ------------------------------------------------------------------ */

struct vaccel_get_version {
	struct vaccel_status status;
	__u32 major;		/* out */
	__u32 minor;		/* out */
	__u64 capabilities;	/* out: VACCEL_CAP_* */
	__u64 reserved[2];
};

struct vaccel_device_count {
	struct vaccel_status status;
	__u32 count;		/* out */
	__u32 pad;
};

struct vaccel_device_query {
	struct vaccel_status status;
	__u32 index;		/* in: 0 .. count - 1 */
	__u32 pad;
	struct vaccel_device_info info;	/* out */
};

/* Descriptor `index` of device `device` (0 .. descriptor_count - 1). */
struct vaccel_device_tosa {
	struct vaccel_status status;
	__u32 device;		/* in: device index */
	__u32 index;		/* in: descriptor index */
	__u32 flags;		/* in: none defined, must be 0 */
	__u32 pad;
	__u64 reserved;		/* must be 0 */
	struct vaccel_tosa_descriptor descriptor;	/* out */
};

struct vaccel_context_create {
	struct vaccel_status status;
	__u32 device;		/* in: device index */
	__u32 flags;		/* in: none defined, must be 0 */
	__u64 context;		/* out: handle */
};

/* Destroy/free/unload of one object: context, buffer, program, queue, event. */
struct vaccel_handle_release {
	struct vaccel_status status;
	__u64 handle;		/* in */
};

/* The largest alignment a buffer may ask for (64 KiB: large pages). */
#define VACCEL_MAX_ALIGNMENT	(64ULL * 1024ULL)

struct vaccel_buffer_alloc {
	struct vaccel_status status;
	__u64 context;		/* in */
	__u64 bytes;		/* in: > 0 */
	/* in: a power of two <= VACCEL_MAX_ALIGNMENT, 0 = device default */
	__u64 alignment;
	__u32 domain;		/* in: enum vaccel_domain */
	__u32 usage;		/* in: VACCEL_USAGE_* (non-empty) */
	__u32 access;		/* in: VACCEL_ACCESS_* allowed to bindings */
	__u32 flags;		/* in: none defined, must be 0 */
	__u64 buffer;		/* out: handle */
	__u64 allocation_bytes;	/* out: real size of the allocation */
	__u64 measured_alignment; /* out: alignment of the real address */
	__u32 properties;	/* out: VACCEL_PROP_* */
	__u32 pad;
};

/*
 * VACCEL_IOCTL_BUFFER_MAP (ABI 1.4): lets the client map a Host or Shared
 * buffer's memory and use it in place (a Device buffer is refused). Through
 * /dev/vaccel: mmap() the client's open file at map_offset, map_bytes long.
 * Over the socket the reply passes the buffer's memfd: mmap() it at
 * map_offset. The mapping stays valid until the client unmaps it or the
 * buffer is freed. The host must not touch bytes that a submission in
 * flight binds until its event is done (the same rule as BUFFER_WRITE).
 */
struct vaccel_buffer_map {
	struct vaccel_status status;
	__u64 buffer;		/* in */
	__u32 flags;		/* in: none defined, must be 0 */
	__u32 pad;
	__u64 map_offset;	/* out: where to mmap() */
	__u64 map_bytes;	/* out: the buffer's size in bytes */
	__u64 reserved[2];
};

/* write_buffer and read_buffer. */
struct vaccel_buffer_transfer {
	struct vaccel_status status;
	__u64 buffer;		/* in */
	__u64 offset;		/* in */
	__u64 length;		/* in: > 0 */
	__u64 data;		/* in: user pointer of length bytes */
	__u32 flags;		/* in: none defined, must be 0 */
	__u32 pad;
};

struct vaccel_program_load {
	struct vaccel_status status;
	__u64 context;		/* in */
	__u32 format;		/* in: enum vaccel_program_format */
	__u32 flags;		/* in: none defined, must be 0 */
	struct vaccel_tosa_target target; /* in: all zero = device default */
	__u64 payload;		/* in: user pointer */
	__u64 payload_bytes;	/* in */
	__u64 program;		/* out: handle */
	__u32 input_count;	/* out: slots 0 .. input_count - 1 */
	__u32 output_count;	/* out: the slots after the inputs */
};

/* Roles of a program's slots. */
enum vaccel_slot_role {
	VACCEL_SLOT_INPUT = 1,	/* bound with VACCEL_ACCESS_READ */
	VACCEL_SLOT_OUTPUT = 2,	/* bound with VACCEL_ACCESS_WRITE */
};

#define VACCEL_MAX_RANK	8

/* The binding interface of a loaded program, one slot at a time. */
struct vaccel_program_slot {
	struct vaccel_status status;
	__u64 program;		/* in */
	__u32 slot;		/* in */
	__u32 role;		/* out: enum vaccel_slot_role */
	__u32 dtype;		/* out: TOSA DType */
	__u32 rank;		/* out */
	__s64 shape[VACCEL_MAX_RANK]; /* out */
	__u64 bytes;		/* out: exact bytes a binding must cover */
	/* out: tensor name, NUL-terminated, truncated if longer */
	char name[VACCEL_NAME_LEN];
};

struct vaccel_queue_create {
	struct vaccel_status status;
	__u64 context;		/* in */
	__u32 flags;		/* in: none defined, must be 0 */
	__u32 pad;
	__u64 queue;		/* out: handle */
};

struct vaccel_binding {
	__u32 slot;		/* program slot */
	__u32 access;		/* VACCEL_ACCESS_READ or _WRITE */
	__u64 buffer;		/* handle */
	__u64 offset;
	__u64 bytes;
};

#define VACCEL_MAX_BINDINGS	64

struct vaccel_submit {
	struct vaccel_status status;
	__u64 queue;		/* in */
	__u64 program;		/* in */
	__u64 bindings;		/* in: user pointer to vaccel_binding[] */
	__u32 binding_count;	/* in: 1 .. VACCEL_MAX_BINDINGS */
	__u32 flags;		/* in: none defined, must be 0 */
	__u64 deadline_ns;	/* in: absolute CLOCK_MONOTONIC, 0 = none */
	__u64 event;		/* out: handle */
};

enum vaccel_event_state {
	VACCEL_EVENT_PENDING = 1,
	VACCEL_EVENT_COMPLETE = 2,
	VACCEL_EVENT_FAILED = 3,	/* failure says why */
	VACCEL_EVENT_CANCELLED = 4,
};

/*
 * VACCEL_IOCTL_RUN (ABI 1.4): a SUBMIT and the wait for its end in one
 * request. The submission is checked exactly as SUBMIT checks it (status
 * says why it was refused; state is then 0). Once accepted, the call
 * returns when the work has ended: state is COMPLETE, FAILED or CANCELLED,
 * and failure says why for the last two. No event handle is made, though
 * the submission counts against max_events while it runs. deadline_ns is
 * the submission's deadline, as in SUBMIT.
 */
struct vaccel_run {
	struct vaccel_status status;
	__u64 queue;		/* in */
	__u64 program;		/* in */
	__u64 bindings;		/* in: user pointer to vaccel_binding[] */
	__u32 binding_count;	/* in: 1 .. VACCEL_MAX_BINDINGS */
	__u32 flags;		/* in: none defined, must be 0 */
	__u64 deadline_ns;	/* in: absolute CLOCK_MONOTONIC, 0 = none */
	__u32 state;		/* out: enum vaccel_event_state, 0 if refused */
	__u32 pad;
	struct vaccel_status failure;	/* out: for FAILED and CANCELLED */
	__u64 reserved[2];
};

struct vaccel_event_poll {
	struct vaccel_status status;
	__u64 event;		/* in */
	__u32 state;		/* out: enum vaccel_event_state */
	__u32 pad;
	struct vaccel_status failure;	/* out: for VACCEL_EVENT_FAILED */
};

#define VACCEL_WAIT_ALL		(1U << 0)	/* else: any one */
#define VACCEL_MAX_WAIT_EVENTS	64

struct vaccel_event_wait {
	struct vaccel_status status;
	__u64 events;		/* in: user pointer to __u64 handles */
	__u32 count;		/* in: 1 .. VACCEL_MAX_WAIT_EVENTS */
	__u32 flags;		/* in: VACCEL_WAIT_* */
	__u64 timeout_ns;	/* in: absolute CLOCK_MONOTONIC, 0 = poll */
	__u32 first_done;	/* out: index of the first event done */
	__u32 done_count;	/* out: events done when it returned */
};

/* Effective limits of a context and its current use. */
struct vaccel_context_limits {
	struct vaccel_status status;
	__u64 context;		/* in */
	struct vaccel_device_limits limits;	/* out: effective */
	__u64 used_memory_bytes;	/* out */
	__u32 used_buffers;	/* out */
	__u32 used_programs;	/* out */
	__u32 used_queues;	/* out */
	__u32 used_events;	/* out */
	__u32 used_gates;	/* out */
	__u32 pad;
};

/*
 * Host gates. A gate is a 64-bit timeline of a context, starting at 0, that
 * only the host moves. Raising it to a value at or below the current one
 * changes nothing, so raises may arrive in any order. A submission made
 * after (gate, value) starts once the gate reaches value. Destroying a gate
 * cancels every submission still waiting on it (event CANCELLED, failure
 * VACCEL_D_GATE_DESTROYED). Destroy with VACCEL_IOCTL_GATE_DESTROY and a
 * struct vaccel_handle_release.
 */
struct vaccel_gate_create {
	struct vaccel_status status;
	__u64 context;		/* in */
	__u32 flags;		/* in: none defined, must be 0 */
	__u32 pad;
	__u64 gate;		/* out: handle */
	__u64 reserved;
};

/* GATE_RAISE (value in) and GATE_VALUE (value out). */
struct vaccel_gate_value {
	struct vaccel_status status;
	__u64 gate;		/* in */
	__u64 value;		/* in: raise to; out: current value */
	__u32 flags;		/* in: none defined, must be 0 */
	__u32 pad;
	__u64 reserved;
};

/* SUBMIT that starts only when `gate` reaches `value`. */
struct vaccel_submit_after {
	struct vaccel_status status;
	__u64 queue;		/* in */
	__u64 program;		/* in */
	__u64 bindings;		/* in: user pointer to vaccel_binding[] */
	__u32 binding_count;	/* in: 1 .. VACCEL_MAX_BINDINGS */
	__u32 flags;		/* in: none defined, must be 0 */
	__u64 gate;		/* in: a gate of the queue's context */
	__u64 value;		/* in: start when the gate reaches it */
	__u64 event;		/* out: handle */
	__u64 reserved[2];
};

/*
 * Kernel launch. The argument buffer is a sequence of records, each a tag
 * byte and its little-endian value, no padding:
 *   0x01 i32, 0x02 i64, 0x03 f32, 0x04 f64, 0x05 u32, 0x06 u64 (4 or 8
 *   bytes); 0x07 pointer: __u32 slot, __u32 bytes: the device address of
 *   the buffer bound at that slot plus the binding's offset; the kernel
 *   touches at most `bytes` bytes from there (at most the binding's bytes).
 * At most VACCEL_MAX_KERNEL_ARGS records and VACCEL_MAX_KERNEL_ARGS_BYTES
 * bytes. `payload` points to binding_count struct vaccel_binding followed
 * by argv_bytes argument bytes (on the wire: the message's payload).
 */
#define VACCEL_ARG_I32		0x01
#define VACCEL_ARG_I64		0x02
#define VACCEL_ARG_F32		0x03
#define VACCEL_ARG_F64		0x04
#define VACCEL_ARG_U32		0x05
#define VACCEL_ARG_U64		0x06
#define VACCEL_ARG_PTR		0x07

#define VACCEL_MAX_KERNEL_ARGS		128
#define VACCEL_MAX_KERNEL_ARGS_BYTES	4096
#define VACCEL_ENTRY_LEN		256

struct vaccel_launch_dims {
	__u32 grid[3];		/* blocks per dimension, each >= 1 */
	__u32 block[3];		/* threads per block, each >= 1 */
	__u32 shared_bytes;	/* dynamic shared memory per block */
	__u32 flags;		/* none defined, must be 0 */
};

struct vaccel_launch {
	struct vaccel_status status;
	__u64 queue;		/* in */
	__u64 program;		/* in: a kernel-format program */
	__u64 payload;		/* in: user pointer, see above */
	__u32 binding_count;	/* in: 0 .. VACCEL_MAX_BINDINGS */
	__u32 argv_bytes;	/* in: 0 .. VACCEL_MAX_KERNEL_ARGS_BYTES */
	__u64 deadline_ns;	/* in: absolute CLOCK_MONOTONIC, 0 = none */
	__u64 event;		/* out: handle */
	struct vaccel_launch_dims dims;	/* in */
	__u32 flags;		/* in: none defined, must be 0 */
	__u32 pad;
	__u64 reserved[2];
	/* in: NUL-terminated entry point, zero after the NUL */
	char entry[VACCEL_ENTRY_LEN];
};

/* ------------------------------------------------------------------ */
/* ioctl numbers; the nr doubles as the wire opcode                    */
/* ------------------------------------------------------------------ */

/*
 * Signals and /dev/vaccel: a caught signal interrupts a call that waits in
 * the module. A request the daemon has not yet taken is withdrawn and the
 * call restarts (transparently under SA_RESTART, else it fails with EINTR
 * and changed nothing). EVENT_WAIT is withdrawn even once taken - waiting
 * changes nothing and its deadline is absolute, so a restarted wait ends
 * when the first would have. Any other request the daemon has taken is
 * answered before the call returns (its work is short; a RUN's is bounded
 * by its deadline); fatal signals still end the caller at once. A waiting
 * EVENT_WAIT caller can be frozen (cgroup freezer, suspend).
 */
#define VACCEL_IOCTL_BASE	0xA7

enum vaccel_op {
	VACCEL_OP_GET_VERSION = 0x00,
	VACCEL_OP_DEVICE_COUNT = 0x01,
	VACCEL_OP_DEVICE_QUERY = 0x02,
	VACCEL_OP_CONTEXT_CREATE = 0x03,
	VACCEL_OP_CONTEXT_DESTROY = 0x04,
	VACCEL_OP_BUFFER_ALLOC = 0x05,
	VACCEL_OP_BUFFER_FREE = 0x06,
	VACCEL_OP_BUFFER_WRITE = 0x07,
	VACCEL_OP_BUFFER_READ = 0x08,
	VACCEL_OP_PROGRAM_LOAD = 0x09,
	VACCEL_OP_PROGRAM_UNLOAD = 0x0a,
	VACCEL_OP_PROGRAM_SLOT = 0x0b,
	VACCEL_OP_QUEUE_CREATE = 0x0c,
	VACCEL_OP_QUEUE_DESTROY = 0x0d,
	VACCEL_OP_SUBMIT = 0x0e,
	VACCEL_OP_EVENT_POLL = 0x0f,
	VACCEL_OP_EVENT_WAIT = 0x10,
	VACCEL_OP_EVENT_DESTROY = 0x11,
	VACCEL_OP_CONTEXT_LIMITS = 0x12,
	VACCEL_OP_GATE_CREATE = 0x13,
	VACCEL_OP_GATE_RAISE = 0x14,
	VACCEL_OP_GATE_VALUE = 0x15,
	VACCEL_OP_GATE_DESTROY = 0x16,
	VACCEL_OP_SUBMIT_AFTER = 0x17,
	VACCEL_OP_LAUNCH = 0x18,
	VACCEL_OP_DEVICE_TOSA = 0x19,
	VACCEL_OP_RUN = 0x1a,
	VACCEL_OP_BUFFER_MAP = 0x1b,
	VACCEL_OP_COUNT = 0x1c,
};

#define VACCEL_IOCTL_GET_VERSION \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_GET_VERSION, struct vaccel_get_version)
#define VACCEL_IOCTL_DEVICE_COUNT \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_DEVICE_COUNT, struct vaccel_device_count)
#define VACCEL_IOCTL_DEVICE_QUERY \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_DEVICE_QUERY, struct vaccel_device_query)
#define VACCEL_IOCTL_CONTEXT_CREATE \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_CONTEXT_CREATE, struct vaccel_context_create)
#define VACCEL_IOCTL_CONTEXT_DESTROY \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_CONTEXT_DESTROY, struct vaccel_handle_release)
#define VACCEL_IOCTL_BUFFER_ALLOC \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_BUFFER_ALLOC, struct vaccel_buffer_alloc)
#define VACCEL_IOCTL_BUFFER_FREE \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_BUFFER_FREE, struct vaccel_handle_release)
#define VACCEL_IOCTL_BUFFER_WRITE \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_BUFFER_WRITE, struct vaccel_buffer_transfer)
#define VACCEL_IOCTL_BUFFER_READ \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_BUFFER_READ, struct vaccel_buffer_transfer)
#define VACCEL_IOCTL_PROGRAM_LOAD \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_PROGRAM_LOAD, struct vaccel_program_load)
#define VACCEL_IOCTL_PROGRAM_UNLOAD \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_PROGRAM_UNLOAD, struct vaccel_handle_release)
#define VACCEL_IOCTL_PROGRAM_SLOT \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_PROGRAM_SLOT, struct vaccel_program_slot)
#define VACCEL_IOCTL_QUEUE_CREATE \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_QUEUE_CREATE, struct vaccel_queue_create)
#define VACCEL_IOCTL_QUEUE_DESTROY \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_QUEUE_DESTROY, struct vaccel_handle_release)
#define VACCEL_IOCTL_SUBMIT \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_SUBMIT, struct vaccel_submit)
#define VACCEL_IOCTL_EVENT_POLL \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_EVENT_POLL, struct vaccel_event_poll)
#define VACCEL_IOCTL_EVENT_WAIT \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_EVENT_WAIT, struct vaccel_event_wait)
#define VACCEL_IOCTL_EVENT_DESTROY \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_EVENT_DESTROY, struct vaccel_handle_release)
#define VACCEL_IOCTL_CONTEXT_LIMITS \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_CONTEXT_LIMITS, struct vaccel_context_limits)
#define VACCEL_IOCTL_GATE_CREATE \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_GATE_CREATE, struct vaccel_gate_create)
#define VACCEL_IOCTL_GATE_RAISE \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_GATE_RAISE, struct vaccel_gate_value)
#define VACCEL_IOCTL_GATE_VALUE \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_GATE_VALUE, struct vaccel_gate_value)
#define VACCEL_IOCTL_GATE_DESTROY \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_GATE_DESTROY, struct vaccel_handle_release)
#define VACCEL_IOCTL_SUBMIT_AFTER \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_SUBMIT_AFTER, struct vaccel_submit_after)
#define VACCEL_IOCTL_LAUNCH \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_LAUNCH, struct vaccel_launch)
#define VACCEL_IOCTL_DEVICE_TOSA \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_DEVICE_TOSA, struct vaccel_device_tosa)
#define VACCEL_IOCTL_RUN \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_RUN, struct vaccel_run)
#define VACCEL_IOCTL_BUFFER_MAP \
	_IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_BUFFER_MAP, struct vaccel_buffer_map)

/* ------------------------------------------------------------------ */
/* Wire protocol (socket transport and daemon side of the module)      */
/* ------------------------------------------------------------------ */

/*
 * A message is: vaccel_msg_header, then args_bytes of the op's ioctl
 * struct, then payload_bytes of payload. User pointers inside the struct
 * are meaningless on the wire and must be zero in requests; the payload
 * carries the bytes they point to:
 *  - BUFFER_WRITE request: the data (length bytes);
 *  - BUFFER_READ response: the data (length bytes);
 *  - PROGRAM_LOAD request: the artifact (payload_bytes bytes);
 *  - SUBMIT, SUBMIT_AFTER and RUN request: binding_count struct vaccel_binding;
 *  - LAUNCH request: binding_count struct vaccel_binding, then argv_bytes;
 *  - EVENT_WAIT request: count __u64 handles.
 *  - ADMIN request and response: a document (see struct vaccel_admin).
 * Every other message has no payload. A response echoes opcode and seq.
 * A BUFFER_MAP response on the socket passes the buffer's memfd
 * (VACCEL_MSG_PASSES_FD, exactly one fd, no payload).
 *
 * Large payloads (socket transport): a payload over VACCEL_MSG_INLINE_MAX
 * travels in a memfd passed with the message (SCM_RIGHTS, exactly one fd)
 * and the header carries VACCEL_MSG_PAYLOAD_FD; payload_bytes is then the
 * size of the payload at offset 0 of that file and nothing follows the
 * struct. A BUFFER_READ request of more than VACCEL_MSG_INLINE_MAX bytes
 * passes the memfd that is to receive the data (payload_bytes 0, the file at
 * least `length` bytes long); its response carries VACCEL_MSG_PAYLOAD_FD,
 * payload_bytes = length, no fd and no inline bytes: the data is in the
 * requester's file.
 */
#define VACCEL_MSG_MAGIC	0x31434156U	/* "VAC1" little-endian */
#define VACCEL_MSG_RESPONSE	(1U << 0)	/* header.flags */
#define VACCEL_MSG_PAYLOAD_FD	(1U << 1)	/* payload in a passed memfd */
/* SESSION_NOTIFY's and BUFFER_MAP's answers: one descriptor, not a payload */
#define VACCEL_MSG_PASSES_FD	(1U << 2)
#define VACCEL_MSG_INLINE_MAX	(64U * 1024U)	/* largest inline payload */

struct vaccel_msg_header {
	__u32 magic;		/* VACCEL_MSG_MAGIC */
	__u16 opcode;		/* enum vaccel_op */
	__u16 flags;		/* VACCEL_MSG_* */
	__u32 args_bytes;	/* exactly sizeof the op's struct */
	__u32 payload_bytes;
	__u64 seq;		/* chosen by the requester, echoed */
	__u64 session;		/* 0 on the socket; module session id */
};

/* ------------------------------------------------------------------ */
/* Administration (socket transport only; root or the admin group)     */
/* ------------------------------------------------------------------ */

/*
 * VACCEL_OP_ADMIN is a wire opcode with no ioctl: the daemon serves it on
 * its socket to root and to members of its configured admin group, and
 * refuses everyone else with PermissionDenied / VACCEL_D_NOT_ADMIN; only
 * VACCEL_ADMIN_MINE, which shows nothing but the caller's own, is served
 * to every caller. The
 * request payload is a UTF-8 JSON document (may be empty for the listing
 * commands); the response payload is a JSON document, except for METRICS,
 * which answers in the Prometheus text exposition format.
 * docs/protocol.md describes each document.
 */
#define VACCEL_OP_ADMIN		0x20

enum vaccel_admin_command {
	VACCEL_ADMIN_DEVICES = 1,	/* devices with their use */
	VACCEL_ADMIN_SESSIONS = 2,	/* sessions with identity and use */
	VACCEL_ADMIN_LIMITS_GET = 3,	/* the policy rules */
	VACCEL_ADMIN_LIMITS_SET = 4,	/* {selector, values}: set and persist */
	VACCEL_ADMIN_LIMITS_RESET = 5,	/* {selector}: remove and persist */
	VACCEL_ADMIN_METRICS = 6,	/* Prometheus text */
	/* ABI 2.1: containers and the devices each was given */
	VACCEL_ADMIN_CONTAINERS = 7,	/* the registered containers */
	VACCEL_ADMIN_CONTAINER_ADD = 8,	/* {id, devices}: from the CDI hook */
	VACCEL_ADMIN_CONTAINER_REMOVE = 9, /* {id}: the container stopped */
	/* ABI 2.2: each tenant's use against its totals */
	VACCEL_ADMIN_TENANTS = 10,
	/* ABI 2.3: the caller's own rule, limits and use; any caller */
	VACCEL_ADMIN_MINE = 11,
	VACCEL_ADMIN_COUNT = 12,
};

struct vaccel_admin {
	struct vaccel_status status;
	__u32 command;		/* in: enum vaccel_admin_command */
	__u32 flags;		/* in: none defined, must be 0 */
	__u64 reserved;		/* must be 0 */
};

/*
 * VACCEL_OP_SESSION_NOTIFY is a wire opcode with no ioctl (socket transport):
 * a successful answer passes one descriptor along (SCM_RIGHTS; header flag
 * VACCEL_MSG_PASSES_FD, no payload), an eventfd that becomes
 * readable when an event of this session completes (for submissions made
 * after the request) and is cleared by the daemon when the session next
 * sends EVENT_POLL or EVENT_WAIT. Clients poll it and never read it. On
 * /dev/vaccel, poll() on the client's own file gives the same readiness.
 */
#define VACCEL_OP_SESSION_NOTIFY	0x21

struct vaccel_session_notify {
	struct vaccel_status status;
	__u32 flags;		/* in: none defined, must be 0 */
	__u32 pad;
	__u64 reserved;		/* must be 0 */
};

#ifdef __cplusplus
}
#endif

#endif /* VACCEL_UAPI_VACCEL_H */
