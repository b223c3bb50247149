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
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int kill9(pid_t pid, const char *path)
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
	if (kill(pid, SIGKILL)) {
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

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "kill9"))
		return kill9(atoi(argv[2]), argv[3]);
	if (argc == 5 && !strcmp(argv[1], "npy-compare"))
		return npy_compare(argv[2], argv[3], atof(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "wait-line"))
		return wait_line(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: vm_tools kill9 PID FILE | npy-compare GOT EXPECTED RTOL | "
		"wait-line FILE TEXT SECONDS\n");
	return 2;
}
