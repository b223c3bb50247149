// SPDX-License-Identifier: GPL-2.0
/*
 * vm_tools.c - small helpers the VM test's /init needs and busybox lacks.
 *
 *   vm_tools kill9 PID FILE       writes CLOCK_REALTIME ns to FILE, then
 *                                 sends SIGKILL to PID (the file is written
 *                                 first, so a delay measured from it can
 *                                 only be overstated)
 *   vm_tools npy-compare GOT EXPECTED RTOL
 *                                 two float32 .npy files of the same size:
 *                                 RTOL 0 = the data bytes are identical;
 *                                 else |got - expected| <= RTOL * |expected|
 *                                 for every element. Exit 0 when they match,
 *                                 1 (saying where) when not, 2 on a bad file.
 *   vm_tools wait-line FILE TEXT SECONDS
 *                                 waits until FILE holds a line containing
 *                                 TEXT; exit 1 after SECONDS without it
 *   vm_tools signal NAME PID FILE as kill9, with signal NAME (KILL, TERM,
 *                                 INT or USR1)
 *   vm_tools wait-exit PID        waits until process PID has exited
 *                                 (pidfd_open and poll: a child or not; a
 *                                 pid already gone has exited); no time
 *                                 limit: the caller's bounds a hang
 *   vm_tools cap-mask CAPS        prints the mask of CAPS (capability names
 *                                 as a systemd unit lists them, space
 *                                 separated; "" for none) as
 *                                 /proc/PID/status shows capability sets
 *   vm_tools cap-exec BOUNDING AMBIENT NNP PROGRAM [ARG...]
 *                                 runs PROGRAM (uid unchanged) as systemd
 *                                 starts a unit with
 *                                 CapabilityBoundingSet=BOUNDING,
 *                                 AmbientCapabilities=AMBIENT and
 *                                 NoNewPrivileges=NNP (yes|no): every
 *                                 capability outside BOUNDING dropped from
 *                                 the bounding set, the effective,
 *                                 permitted and inheritable sets set to
 *                                 BOUNDING, the ambient set to AMBIENT.
 *                                 Inverted lists ("~CAP_...") are refused.
 */
#include <errno.h>
#include <linux/capability.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int send_signal(int sig, pid_t pid, const char *path)
{
	struct timespec now;
	FILE *file = fopen(path, "w");

	if (!file) {
		printf("vm_tools: cannot write %s: %s\n", path, strerror(errno));
		return 2;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	fprintf(file, "%llu\n", (unsigned long long)now.tv_sec * 1000000000ULL +
		(unsigned long long)now.tv_nsec);
	fclose(file);
	if (kill(pid, sig)) {
		printf("vm_tools: kill %d: %s\n", (int)pid, strerror(errno));
		return 1;
	}
	return 0;
}

/* The data of a version 1 or 2 .npy file; NULL (said why) if unreadable. */
static unsigned char *npy_data(const char *path, size_t *bytes)
{
	unsigned char *all = NULL, *data;
	size_t size = 0, header, start;
	FILE *file = fopen(path, "rb");
	long end;

	if (!file || fseek(file, 0, SEEK_END) || (end = ftell(file)) < 0 ||
	    fseek(file, 0, SEEK_SET)) {
		printf("vm_tools: cannot read %s\n", path);
		goto fail;
	}
	size = (size_t)end;
	all = malloc(size + 1);
	if (!all || fread(all, 1, size, file) != size || size < 12 ||
	    memcmp(all, "\x93NUMPY", 6)) {
		printf("vm_tools: %s is not a .npy file\n", path);
		goto fail;
	}
	if (all[6] == 1) {
		header = all[8] | (size_t)all[9] << 8;
		start = 10 + header;
	} else {
		header = all[8] | (size_t)all[9] << 8 | (size_t)all[10] << 16 |
			 (size_t)all[11] << 24;
		start = 12 + header;
	}
	if (start > size || !memmem(all, start, "'<f4'", 5)) {
		printf("vm_tools: %s does not hold little-endian float32\n", path);
		goto fail;
	}
	fclose(file);
	*bytes = size - start;
	data = malloc(*bytes + 1);
	memcpy(data, all + start, *bytes);
	free(all);
	return data;
fail:
	if (file)
		fclose(file);
	free(all);
	return NULL;
}

static int npy_compare(const char *got_path, const char *want_path, double rtol)
{
	size_t got_bytes, want_bytes;
	unsigned char *got = npy_data(got_path, &got_bytes);
	unsigned char *want = npy_data(want_path, &want_bytes);
	int ret = 0;

	if (!got || !want)
		return 2;
	if (got_bytes != want_bytes) {
		printf("vm_tools: %s has %zu data bytes, %s %zu\n", got_path,
		       got_bytes, want_path, want_bytes);
		return 1;
	}
	if (rtol == 0) {
		for (size_t i = 0; i < got_bytes; i++) {
			if (got[i] != want[i]) {
				printf("vm_tools: data byte %zu differs: %u, expected %u\n",
				       i, got[i], want[i]);
				return 1;
			}
		}
	} else {
		for (size_t i = 0; i + 4 <= got_bytes; i += 4) {
			float a, b;

			memcpy(&a, got + i, 4);
			memcpy(&b, want + i, 4);
			if (!(fabs((double)a - (double)b) <= rtol * fabs((double)b))) {
				printf("vm_tools: element %zu is %.9g, expected %.9g (rtol %g)\n",
				       i / 4, a, b, rtol);
				ret = 1;
				break;
			}
		}
	}
	free(got);
	free(want);
	return ret;
}

static int wait_line(const char *path, const char *text, int seconds)
{
	char line[4096];

	for (int tenths = 0; tenths < seconds * 10; tenths++) {
		FILE *file = fopen(path, "r");

		while (file && fgets(line, sizeof(line), file)) {
			if (strstr(line, text)) {
				fclose(file);
				return 0;
			}
		}
		if (file)
			fclose(file);
		usleep(100000);
	}
	printf("vm_tools: no line with '%s' in %s after %d s\n", text, path, seconds);
	return 1;
}

static int wait_exit(pid_t pid)
{
	struct pollfd exited = { .events = POLLIN };

	exited.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (exited.fd < 0) {
		if (errno == ESRCH)
			return 0;
		printf("vm_tools: pidfd_open %d: %s\n", (int)pid, strerror(errno));
		return 2;
	}
	while (poll(&exited, 1, -1) < 0 && errno == EINTR)
		;
	close(exited.fd);
	return 0;
}

#define CAP_ENTRY(name) [name] = #name
static const char *const cap_names[] = {
	CAP_ENTRY(CAP_CHOWN), CAP_ENTRY(CAP_DAC_OVERRIDE),
	CAP_ENTRY(CAP_DAC_READ_SEARCH), CAP_ENTRY(CAP_FOWNER),
	CAP_ENTRY(CAP_FSETID), CAP_ENTRY(CAP_KILL), CAP_ENTRY(CAP_SETGID),
	CAP_ENTRY(CAP_SETUID), CAP_ENTRY(CAP_SETPCAP),
	CAP_ENTRY(CAP_LINUX_IMMUTABLE), CAP_ENTRY(CAP_NET_BIND_SERVICE),
	CAP_ENTRY(CAP_NET_BROADCAST), CAP_ENTRY(CAP_NET_ADMIN),
	CAP_ENTRY(CAP_NET_RAW), CAP_ENTRY(CAP_IPC_LOCK),
	CAP_ENTRY(CAP_IPC_OWNER), CAP_ENTRY(CAP_SYS_MODULE),
	CAP_ENTRY(CAP_SYS_RAWIO), CAP_ENTRY(CAP_SYS_CHROOT),
	CAP_ENTRY(CAP_SYS_PTRACE), CAP_ENTRY(CAP_SYS_PACCT),
	CAP_ENTRY(CAP_SYS_ADMIN), CAP_ENTRY(CAP_SYS_BOOT),
	CAP_ENTRY(CAP_SYS_NICE), CAP_ENTRY(CAP_SYS_RESOURCE),
	CAP_ENTRY(CAP_SYS_TIME), CAP_ENTRY(CAP_SYS_TTY_CONFIG),
	CAP_ENTRY(CAP_MKNOD), CAP_ENTRY(CAP_LEASE), CAP_ENTRY(CAP_AUDIT_WRITE),
	CAP_ENTRY(CAP_AUDIT_CONTROL), CAP_ENTRY(CAP_SETFCAP),
	CAP_ENTRY(CAP_MAC_OVERRIDE), CAP_ENTRY(CAP_MAC_ADMIN),
	CAP_ENTRY(CAP_SYSLOG), CAP_ENTRY(CAP_WAKE_ALARM),
	CAP_ENTRY(CAP_BLOCK_SUSPEND), CAP_ENTRY(CAP_AUDIT_READ),
	CAP_ENTRY(CAP_PERFMON), CAP_ENTRY(CAP_BPF),
	CAP_ENTRY(CAP_CHECKPOINT_RESTORE),
};
#define CAP_NAMES (sizeof(cap_names) / sizeof(cap_names[0]))

/* The mask of a space-separated list of capability names; -1 if bad. */
static int cap_mask(const char *list, uint64_t *mask)
{
	char copy[4096], *save = NULL, *name;

	*mask = 0;
	if (strlen(list) >= sizeof(copy))
		return -1;
	strcpy(copy, list);
	for (name = strtok_r(copy, " \t", &save); name;
	     name = strtok_r(NULL, " \t", &save)) {
		size_t cap;

		if (name[0] == '~') {
			printf("vm_tools: inverted capability lists (%s) are not supported\n",
			       name);
			return -1;
		}
		for (cap = 0; cap < CAP_NAMES; cap++)
			if (cap_names[cap] && !strcasecmp(name, cap_names[cap]))
				break;
		if (cap == CAP_NAMES) {
			printf("vm_tools: unknown capability %s\n", name);
			return -1;
		}
		*mask |= 1ULL << cap;
	}
	return 0;
}

static int cap_exec(const char *bounding_list, const char *ambient_list,
		    const char *nnp, char **argv)
{
	struct __user_cap_header_struct header = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	uint64_t bounding, ambient;
	FILE *file = fopen("/proc/sys/kernel/cap_last_cap", "r");
	int last = -1;

	if (!file || fscanf(file, "%d", &last) != 1 || last < 0 || last > 63) {
		printf("vm_tools: cannot read /proc/sys/kernel/cap_last_cap\n");
		return 2;
	}
	fclose(file);
	if (cap_mask(bounding_list, &bounding) || cap_mask(ambient_list, &ambient))
		return 2;
	for (int cap = 0; cap <= last; cap++) {
		if (!(bounding & (1ULL << cap)) &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) {
			printf("vm_tools: PR_CAPBSET_DROP %d: %s\n", cap, strerror(errno));
			return 2;
		}
	}
	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = data[0].inheritable =
		(uint32_t)bounding;
	data[1].effective = data[1].permitted = data[1].inheritable =
		(uint32_t)(bounding >> 32);
	if (syscall(SYS_capset, &header, data)) {
		printf("vm_tools: capset: %s\n", strerror(errno));
		return 2;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)) {
		printf("vm_tools: clearing the ambient set: %s\n", strerror(errno));
		return 2;
	}
	for (int cap = 0; cap <= last; cap++) {
		if ((ambient & (1ULL << cap)) &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0)) {
			printf("vm_tools: raising ambient %d: %s\n", cap, strerror(errno));
			return 2;
		}
	}
	if (!strcmp(nnp, "yes") && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		printf("vm_tools: PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
		return 2;
	}
	execv(argv[0], argv);
	printf("vm_tools: exec %s: %s\n", argv[0], strerror(errno));
	return 127;
}

static int signal_number(const char *name)
{
	if (!strcmp(name, "KILL"))
		return SIGKILL;
	if (!strcmp(name, "TERM"))
		return SIGTERM;
	if (!strcmp(name, "INT"))
		return SIGINT;
	if (!strcmp(name, "USR1"))
		return SIGUSR1;
	return -1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "kill9"))
		return send_signal(SIGKILL, atoi(argv[2]), argv[3]);
	if (argc == 5 && !strcmp(argv[1], "signal") && signal_number(argv[2]) > 0)
		return send_signal(signal_number(argv[2]), atoi(argv[3]), argv[4]);
	if (argc == 3 && !strcmp(argv[1], "cap-mask")) {
		uint64_t mask;

		if (cap_mask(argv[2], &mask))
			return 2;
		printf("%016llx\n", (unsigned long long)mask);
		return 0;
	}
	if (argc >= 6 && !strcmp(argv[1], "cap-exec"))
		return cap_exec(argv[2], argv[3], argv[4], argv + 5);
	if (argc == 5 && !strcmp(argv[1], "npy-compare"))
		return npy_compare(argv[2], argv[3], atof(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "wait-line"))
		return wait_line(argv[2], argv[3], atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "wait-exit"))
		return wait_exit(atoi(argv[2]));
	fprintf(stderr, "usage: vm_tools kill9 PID FILE | signal KILL|TERM|INT|USR1 PID FILE | "
		"npy-compare GOT EXPECTED RTOL | wait-line FILE TEXT SECONDS | wait-exit PID | "
		"cap-mask CAPS | "
		"cap-exec BOUNDING AMBIENT yes|no PROGRAM [ARG...]\n");
	return 2;
}
