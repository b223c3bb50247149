// SPDX-License-Identifier: GPL-2.0
/*
 * vm_stress.c - the hardened kernel path under pressure, run inside the VM
 * against vacceld (raw ioctls on /dev/vaccel, the ADD fixture's MODEL).
 * The rules proven are those of uapi/vaccel_server.h (fairness, detach,
 * accounting, pins) and uapi/vaccel.h ("Signals and /dev/vaccel"). Each
 * failed check prints one "vm_stress: line N: <why>" line. Commands:
 *
 *   no-starvation MODEL
 *       client A (a child process, one session) parks 200 EVENT_WAITs on a
 *       gated submission and floods short calls from 8 threads (2 of them
 *       also RUN the program without pause);
 *       client B (this process, its own session) times GET_VERSION,
 *       DEVICE_COUNT and an ADD RUN unloaded, then while A floods: the
 *       slowest loaded call of each op must end within 10x the slowest
 *       unloaded one (worst against worst: the VM's two emulated vCPUs
 *       give single calls a scheduling tail either way, which a median
 *       would not share). Starved, B would wait for A's 200 waits to end.
 *       Prints the medians and worsts and "VMTEST no-starvation PASS|FAIL".
 *   interrupt MODEL CGROUP
 *       a caught SIGINT (no SA_RESTART) ends a long EVENT_WAIT at once with
 *       EINTR, the event untouched ("VMTEST interrupt"); with SA_RESTART the
 *       wait goes on, ending when its event completes or at its first
 *       absolute deadline ("VMTEST interrupt-restart"); a waiter in the
 *       cgroup v2 leaf CGROUP is frozen by cgroup.freeze (cgroup.events
 *       "frozen 1" within 5 s), does not return while frozen, and its wait
 *       completes once thawed ("VMTEST interrupt-freeze").
 *   park MODEL WAITS TIMEFILE
 *       WAITS threads of one session wait on a gated submission; prints
 *       "vm_stress: parked" when they are in; then each wait must fail with
 *       -ENODEV (DeviceLost, PEER_GONE) less than 2 s after the
 *       CLOCK_REALTIME ns in TIMEFILE (written by whoever made the daemon
 *       let go), and the session stays dead. Exit 0 when all of it held.
 *   attach-busy
 *       opening /dev/vaccel-server fails with EBUSY (a daemon is attached).
 *   accounted CGROUP HEADROOM_KIB
 *       a child in the cgroup v2 leaf CGROUP (memory.max set) fills its
 *       memory to HEADROOM_KIB below memory.max, then opens sessions until
 *       the kernel refuses (ENOMEM) or the cgroup's OOM killer ends it;
 *       memory.events must show the limit reached (max > 0), memory.peak
 *       stay <= memory.max. Exit 0 when all of it held.
 *   memlock
 *       uid 65534 with RLIMIT_MEMLOCK 0 writes 8 MiB into a Host buffer
 *       through /dev/vaccel and reads them back exactly: pins last one
 *       copy, nothing is locked long-term ("VMTEST accounted-memlock").
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define VM_PROGRAM "vm_stress"
#include "vm_add.h"

#define DEBUGFS_REQUESTS "/sys/kernel/debug/vaccel/requests"

/* A small file's first number; -1 (said why) if unreadable. */
static long long read_number(const char *path)
{
	long long value = -1;
	FILE *file = fopen(path, "r");

	if (!file || fscanf(file, "%lld", &value) != 1) {
		CHECK(0, "cannot read a number from %s: %s", path,
		      strerror(errno));
		value = -1;
	}
	if (file)
		fclose(file);
	return value;
}

/* The value of `key` in a flat-keyed file (cgroup.events, memory.events). */
static long long read_key(const char *path, const char *key)
{
	char name[64];
	long long value;
	FILE *file = fopen(path, "r");

	if (!file) {
		CHECK(0, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while (fscanf(file, "%63s %lld", name, &value) == 2) {
		if (!strcmp(name, key)) {
			fclose(file);
			return value;
		}
	}
	fclose(file);
	CHECK(0, "%s has no key %s", path, key);
	return -1;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? write(fd, text, strlen(text)) : -1;
	int saved = errno;

	if (fd >= 0)
		close(fd);
	CHECK(n == (ssize_t)strlen(text), "cannot write '%s' to %s: %s", text,
	      path, strerror(saved));
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Moves the calling process into the cgroup directory `cgroup`. */
static int join_cgroup(const char *cgroup)
{
	char path[512], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return write_text(path, pid);
}

static pthread_t thread_start(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t thread;
	int ret;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	ret = pthread_create(&thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (ret) {
		printf("vm_stress: pthread_create: %s\n", strerror(ret));
		exit(1);
	}
	return thread;
}

/* Waits until the module holds `want` requests (10 s at most). */
static int requests_reach(long long want)
{
	long long alive = -1;

	for (int i = 0; i < 200; i++) {
		alive = read_number(DEBUGFS_REQUESTS);
		if (alive < 0 || alive >= want)
			break;
		sleep_ms(50);
	}
	CHECK(alive >= want, "the module holds %lld requests, %lld expected (waits not parked)",
	      alive, want);
	return alive >= want ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* A waiter thread: one EVENT_WAIT, its result and when it returned.   */
/* ------------------------------------------------------------------ */

struct waiter {
	int fd;
	uint64_t event, deadline_ns;
	pthread_t thread;
	int ret;
	struct vaccel_event_wait wait;
	uint64_t returned_ns, returned_real_ns;
	int done;		/* set (atomically) once the call returned */
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->ret = event_wait(w->fd, w->event, w->deadline_ns, &w->wait);
	w->returned_ns = now_ns();
	w->returned_real_ns = realtime_ns();
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void waiter_start(struct waiter *w, int fd, uint64_t event,
			 uint64_t deadline_ns)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->event = event;
	w->deadline_ns = deadline_ns;
	w->thread = thread_start(waiter_main, w);
}

/* ------------------------------------------------------------------ */
/* no-starvation                                                       */
/* ------------------------------------------------------------------ */

#define PARKED_WAITS 200
#define FLOODERS 8

/* What client A's flooders share: a stop flag and counters. */
struct flood {
	int stop;
	unsigned long calls;
	unsigned long errors;
};

/*
 * One flooder: its own buffers in a context and queue of its own (the
 * parked submission holds its queue back: a queue runs in order). The
 * first RUNNERS of them also RUN the program each round: the device then
 * always has work of A's (fairness of the device itself is not what is
 * measured, so A keeps at most RUNNERS runs in it).
 */
#define RUNNERS 2

struct flooder {
	struct flood *flood;
	struct add s;
	int runs;
	pthread_t thread;
};

static void *flooder_main(void *arg)
{
	struct flooder *me = arg;
	struct flood *f = me->flood;
	struct vaccel_get_version version;
	struct vaccel_device_count count;

	for (unsigned long i = 0; !__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE);
	     i++) {
		int ret;

		memset(&version, 0, sizeof(version));
		ret = call(me->s.fd, VACCEL_IOCTL_GET_VERSION, &version);
		memset(&count, 0, sizeof(count));
		ret |= call(me->s.fd, VACCEL_IOCTL_DEVICE_COUNT, &count);
		if (me->runs)
			ret |= add_run(&me->s);
		__atomic_add_fetch(&f->calls, me->runs ? 3 : 2, __ATOMIC_RELAXED);
		if (ret)
			__atomic_add_fetch(&f->errors, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Client A: parks the waits, floods, says 'r' on `ready` once flooding,
 * then answers every byte on `control` with the calls made so far; stops
 * when `control` closes, raises the gate and checks that every parked wait
 * completed. Exit 0 when all of it held.
 */
static int flood_client(const char *model, int ready, int control)
{
	static struct waiter waits[PARKED_WAITS];
	static struct flooder flooders[FLOODERS];
	struct flood flood = { 0 };
	unsigned long calls;
	uint64_t gate, event;
	long long base;
	struct add s, flood_base;
	char byte;

	if (add_prepare(&s, model) || add_prepare_on(&flood_base, s.fd, model))
		return 1;
	for (int i = 0; i < FLOODERS; i++) {
		flooders[i].flood = &flood;
		flooders[i].s = flood_base;
		flooders[i].runs = i < RUNNERS;
		flooders[i].s.a = buffer_alloc(s.fd, flood_base.context, ADD_A_BYTES);
		flooders[i].s.b = buffer_alloc(s.fd, flood_base.context, ADD_B_BYTES);
		flooders[i].s.c = buffer_alloc(s.fd, flood_base.context, ADD_C_BYTES);
		if (!flooders[i].s.a || !flooders[i].s.b || !flooders[i].s.c)
			return 1;
	}
	gate = gate_create(&s);
	event = gate ? submit_gated(&s, gate) : 0;
	base = read_number(DEBUGFS_REQUESTS);
	if (!event || base < 0)
		return 1;
	for (int i = 0; i < PARKED_WAITS; i++)
		waiter_start(&waits[i], s.fd, event, now_ns() + 120000000000ULL);
	if (requests_reach(base + PARKED_WAITS))
		return 1;
	for (int i = 0; i < FLOODERS; i++)
		flooders[i].thread = thread_start(flooder_main, &flooders[i]);
	sleep_ms(200);
	if (write(ready, "r", 1) != 1)
		return 1;
	while (read(control, &byte, 1) == 1) {
		calls = __atomic_load_n(&flood.calls, __ATOMIC_RELAXED);
		if (write(ready, &calls, sizeof(calls)) != sizeof(calls))
			break;
	}
	__atomic_store_n(&flood.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < FLOODERS; i++)
		pthread_join(flooders[i].thread, NULL);
	CHECK(flood.errors == 0, "client A: %lu of its flood's rounds failed",
	      flood.errors);
	CHECK(gate_raise(&s, gate, 1) == 0, "client A: GATE_RAISE failed");
	for (int i = 0; i < PARKED_WAITS; i++) {
		pthread_join(waits[i].thread, NULL);
		if (waits[i].ret || waits[i].wait.done_count != 1) {
			CHECK(0, "client A: parked wait %d ended %d (error %u detail %u), not done",
			      i, waits[i].ret, waits[i].wait.status.error,
			      waits[i].wait.status.detail);
			break;
		}
	}
	return failures ? 1 : 0;
}

enum timed_op { OP_VERSION, OP_COUNT, OP_RUN, TIMED_OPS };

static const char *const timed_name[TIMED_OPS] = {
	"GET_VERSION", "DEVICE_COUNT", "RUN (ADD)",
};
static const int timed_rounds[TIMED_OPS] = { 40, 40, 10 };

/* One call of `op` in B's session; its time in ns (0 if it failed). */
static uint64_t timed_call(const struct add *s, enum timed_op op)
{
	struct vaccel_get_version version;
	struct vaccel_device_count count;
	uint64_t start = now_ns();
	int ret;

	memset(&version, 0, sizeof(version));
	memset(&count, 0, sizeof(count));
	if (op == OP_VERSION)
		ret = call(s->fd, VACCEL_IOCTL_GET_VERSION, &version);
	else if (op == OP_COUNT)
		ret = call(s->fd, VACCEL_IOCTL_DEVICE_COUNT, &count);
	else
		ret = add_run(s);
	CHECK(ret == 0, "client B: %s: %d", timed_name[op], ret);
	return ret ? 0 : now_ns() - start + 1;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The times of every op's rounds, interleaved as a client would call. */
static void measure(const struct add *s, uint64_t times[TIMED_OPS][40])
{
	for (int round = 0; round < 40; round++)
		for (int op = 0; op < TIMED_OPS; op++)
			if (round < timed_rounds[op])
				times[op][round] = timed_call(s, op);
}

static int step_no_starvation(const char *model)
{
	uint64_t unloaded[TIMED_OPS][40], loaded[TIMED_OPS][40];
	int ready[2], control[2], status;
	unsigned long calls_before = 0, calls_after = 0;
	struct add s;
	pid_t flooder;
	char byte;

	if (add_prepare(&s, model))
		return report("no-starvation");
	for (int i = 0; i < 3; i++)	/* warm the path */
		timed_call(&s, OP_RUN);
	measure(&s, unloaded);
	if (pipe(ready) || pipe(control))
		return report("no-starvation");
	flooder = fork();
	if (flooder == 0) {
		close(s.fd);
		close(ready[0]);
		close(control[1]);
		_exit(flood_client(model, ready[1], control[0]));
	}
	close(ready[1]);
	close(control[0]);
	CHECK(read(ready[0], &byte, 1) == 1, "client A did not start its flood");
	if (failures)
		goto out;
	CHECK(write(control[1], "m", 1) == 1, "client A is gone");
	CHECK(read(ready[0], &calls_before, sizeof(calls_before)) == sizeof(calls_before),
	      "client A is gone");
	measure(&s, loaded);
	CHECK(write(control[1], "m", 1) == 1, "client A is gone");
	CHECK(read(ready[0], &calls_after, sizeof(calls_after)) == sizeof(calls_after),
	      "client A is gone");
	printf("vm_stress: client A made %lu calls while B measured, with %d waits parked\n",
	       calls_after - calls_before, PARKED_WAITS);
	CHECK(calls_after - calls_before >= 50,
	      "client A made only %lu calls while B measured: no flood to measure against",
	      calls_after - calls_before);
	for (int op = 0; op < TIMED_OPS; op++) {
		uint64_t sorted[40], loaded_sorted[40], median, bound, worst;
		int n = timed_rounds[op];

		memcpy(sorted, unloaded[op], sizeof(sorted));
		qsort(sorted, (size_t)n, sizeof(sorted[0]), compare_u64);
		memcpy(loaded_sorted, loaded[op], sizeof(loaded_sorted));
		qsort(loaded_sorted, (size_t)n, sizeof(loaded_sorted[0]),
		      compare_u64);
		median = sorted[n / 2];
		bound = sorted[n - 1];
		worst = loaded_sorted[n - 1];
		printf("vm_stress: %s: unloaded median %llu us worst %llu us, loaded median %llu us worst %llu us (limit %llu us, 10x the unloaded worst)\n",
		       timed_name[op], (unsigned long long)median / 1000,
		       (unsigned long long)bound / 1000,
		       (unsigned long long)loaded_sorted[n / 2] / 1000,
		       (unsigned long long)worst / 1000,
		       (unsigned long long)bound * 10 / 1000);
		CHECK(bound > 0 && worst <= bound * 10,
		      "%s: a call under A's flood took %llu us, more than 10x the slowest unloaded call (%llu us)",
		      timed_name[op], (unsigned long long)worst / 1000,
		      (unsigned long long)bound / 1000);
	}
out:
	close(control[1]);	/* stops A, whatever happened */
	waitpid(flooder, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "client A (parked waits and flood) ended with status %#x", status);
	close(s.fd);
	return report("no-starvation");
}

/* ------------------------------------------------------------------ */
/* interrupt                                                           */
/* ------------------------------------------------------------------ */

static volatile sig_atomic_t interrupts;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupts++;
}

static void catch_sigint(int flags)
{
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	action.sa_handler = on_interrupt;
	action.sa_flags = flags;
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	interrupts = 0;
}

/* No SA_RESTART: EINTR within 1 s, the event still pending. */
static void interrupt_eintr(const struct add *s, uint64_t event)
{
	struct waiter w;
	uint64_t sent;
	int before = failures;

	catch_sigint(0);
	waiter_start(&w, s->fd, event, now_ns() + 30000000000ULL);
	sleep_ms(300);
	sent = now_ns();
	pthread_kill(w.thread, SIGINT);
	pthread_join(w.thread, NULL);
	CHECK(w.ret == -EINTR, "EVENT_WAIT under SIGINT without SA_RESTART: %d, not -EINTR",
	      w.ret);
	CHECK(w.returned_ns - sent < 1000000000ULL,
	      "EVENT_WAIT returned %llu ms after SIGINT (1000 ms allowed)",
	      (unsigned long long)(w.returned_ns - sent) / 1000000);
	CHECK(interrupts == 1, "the SIGINT handler ran %d times", (int)interrupts);
	CHECK(event_state(s->fd, event) == VACCEL_EVENT_PENDING,
	      "the interrupted wait's event is not PENDING any more");
	printf("vm_stress: EVENT_WAIT returned EINTR %llu ms after SIGINT\n",
	       (unsigned long long)(w.returned_ns - sent) / 1000000);
	printf("VMTEST interrupt %s\n", failures > before ? "FAIL" : "PASS");
}

/* SA_RESTART: the wait survives SIGINT and ends with its event. */
static void interrupt_restart_event(const struct add *s, uint64_t gate,
				    uint64_t event)
{
	struct waiter w;
	uint64_t raised;

	catch_sigint(SA_RESTART);
	waiter_start(&w, s->fd, event, now_ns() + 30000000000ULL);
	sleep_ms(300);
	pthread_kill(w.thread, SIGINT);
	sleep_ms(500);
	CHECK(!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE),
	      "EVENT_WAIT under SA_RESTART returned after SIGINT (%d) instead of waiting on",
	      w.ret);
	raised = now_ns();
	CHECK(gate_raise(s, gate, 1) == 0, "GATE_RAISE failed");
	pthread_join(w.thread, NULL);
	CHECK(w.ret == 0 && w.wait.done_count == 1,
	      "the restarted wait ended %d (error %u detail %u, done %u), not with its event",
	      w.ret, w.wait.status.error, w.wait.status.detail,
	      w.wait.done_count);
	CHECK(w.returned_ns >= raised && w.returned_ns - raised < 5000000000ULL,
	      "the restarted wait returned %lld ms after the gate was raised",
	      (long long)(w.returned_ns - raised) / 1000000);
	CHECK(interrupts == 1, "the SIGINT handler ran %d times", (int)interrupts);
}

/* SA_RESTART: a restarted wait still ends at the first one's deadline. */
static void interrupt_restart_deadline(const struct add *s)
{
	struct vaccel_handle_release release;
	uint64_t gate = gate_create(s);
	uint64_t event = gate ? submit_gated(s, gate) : 0;
	uint64_t deadline = now_ns() + 1500000000ULL;
	struct waiter w;

	if (!event)
		return;
	catch_sigint(SA_RESTART);
	waiter_start(&w, s->fd, event, deadline);
	sleep_ms(300);
	pthread_kill(w.thread, SIGINT);
	pthread_join(w.thread, NULL);
	CHECK(w.ret == -ETIME && w.wait.status.error == VACCEL_E_DEADLINE_EXPIRED,
	      "a restarted wait with a deadline ended %d (error %u), not -ETIME",
	      w.ret, w.wait.status.error);
	CHECK(w.returned_ns >= deadline &&
	      w.returned_ns - deadline < 1000000000ULL,
	      "a restarted wait ended %lld ms from its deadline (0 .. 1000 allowed)",
	      ((long long)w.returned_ns - (long long)deadline) / 1000000);
	CHECK(interrupts == 1, "the SIGINT handler ran %d times", (int)interrupts);
	printf("vm_stress: a restarted wait ended %lld ms after its absolute deadline\n",
	       ((long long)w.returned_ns - (long long)deadline) / 1000000);
	memset(&release, 0, sizeof(release));
	release.handle = gate;
	CHECK(call(s->fd, VACCEL_IOCTL_GATE_DESTROY, &release) == 0,
	      "GATE_DESTROY failed");
}

/* A waiter process in `cgroup` is frozen, then thawed; its wait completes. */
static void interrupt_freeze(const struct add *s, const char *cgroup)
{
	char freeze[512], events[512], byte;
	uint64_t gate = gate_create(s);
	uint64_t event = gate ? submit_gated(s, gate) : 0;
	uint64_t frozen_at;
	int ready[2], status = 0;
	long long frozen = 0;
	pid_t child;

	if (!event || pipe(ready))
		return;
	child = fork();
	if (child == 0) {
		struct vaccel_event_wait wait;
		int ret;

		/* The parent's session, shared: its gate completes the event. */
		if (join_cgroup(cgroup) || write(ready[1], "r", 1) != 1)
			_exit(2);
		ret = event_wait(s->fd, event, now_ns() + 30000000000ULL, &wait);
		if (ret || wait.done_count != 1) {
			printf("vm_stress: the frozen waiter's wait ended %d (error %u), not with its event\n",
			       ret, wait.status.error);
			_exit(1);
		}
		_exit(0);
	}
	close(ready[1]);
	CHECK(read(ready[0], &byte, 1) == 1, "the waiter did not join %s", cgroup);
	close(ready[0]);
	sleep_ms(300);
	snprintf(freeze, sizeof(freeze), "%s/cgroup.freeze", cgroup);
	snprintf(events, sizeof(events), "%s/cgroup.events", cgroup);
	frozen_at = now_ns();
	write_text(freeze, "1");
	for (int i = 0; i < 100 && frozen != 1; i++) {
		frozen = read_key(events, "frozen");
		if (frozen != 1)
			sleep_ms(50);
	}
	CHECK(frozen == 1, "%s does not show 'frozen 1' 5 s after cgroup.freeze", events);
	printf("vm_stress: the waiting client froze in %llu ms\n",
	       (unsigned long long)(now_ns() - frozen_at) / 1000000);
	/* Its event completes while it is frozen: it must not return. */
	CHECK(gate_raise(s, gate, 1) == 0, "GATE_RAISE failed");
	sleep_ms(300);
	CHECK(waitpid(child, &status, WNOHANG) == 0,
	      "the frozen client ended while frozen (status %#x)", status);
	write_text(freeze, "0");
	for (int i = 0; i < 100; i++) {
		if (waitpid(child, &status, WNOHANG) == child)
			break;
		sleep_ms(50);
		if (i == 99) {
			CHECK(0, "the thawed client's wait did not complete in 5 s");
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
		}
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the thawed client ended with status %#x", status);
	CHECK(read_key(events, "frozen") == 0, "%s still shows frozen after the thaw", events);
}

static int step_interrupt(const char *model, const char *cgroup)
{
	uint64_t gate, event;
	struct add s;
	int before;

	if (add_prepare(&s, model) || !(gate = gate_create(&s)) ||
	    !(event = submit_gated(&s, gate))) {
		report("interrupt");
		report("interrupt-restart");
		return report("interrupt-freeze");
	}
	interrupt_eintr(&s, event);
	before = failures;
	interrupt_restart_event(&s, gate, event);
	interrupt_restart_deadline(&s);
	printf("VMTEST interrupt-restart %s\n", failures > before ? "FAIL" : "PASS");
	signal(SIGINT, SIG_DFL);
	before = failures;
	interrupt_freeze(&s, cgroup);
	printf("VMTEST interrupt-freeze %s\n", failures > before ? "FAIL" : "PASS");
	close(s.fd);
	return failures ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* park (detach), attach-busy                                          */
/* ------------------------------------------------------------------ */

static int step_park(const char *model, int count, const char *time_file)
{
	struct vaccel_get_version version;
	struct waiter *waits = calloc((size_t)count, sizeof(*waits));
	uint64_t gate, event, last = 0;
	long long signalled;
	struct add s;
	int ret;

	if (!waits || count < 1 || add_prepare(&s, model) ||
	    !(gate = gate_create(&s)) || !(event = submit_gated(&s, gate)))
		return 1;
	for (int i = 0; i < count; i++)
		waiter_start(&waits[i], s.fd, event, now_ns() + 60000000000ULL);
	sleep_ms(500);
	printf("vm_stress: parked %d waits\n", count);
	for (int i = 0; i < count; i++) {
		struct waiter *w = &waits[i];

		pthread_join(w->thread, NULL);
		CHECK(w->ret == -ENODEV &&
		      w->wait.status.error == VACCEL_E_DEVICE_LOST &&
		      w->wait.status.detail == VACCEL_D_PEER_GONE,
		      "parked wait %d ended %d (error %u detail %u), not DeviceLost/PEER_GONE",
		      i, w->ret, w->wait.status.error, w->wait.status.detail);
		if (w->returned_real_ns > last)
			last = w->returned_real_ns;
	}
	signalled = read_number(time_file);
	if (signalled > 0) {
		long long delay = ((long long)last - signalled) / 1000000;

		printf("vm_stress: %d parked waits ended at most %lld ms after the daemon was told to go\n",
		       count, delay);
		CHECK(delay < 2000, "a parked wait ended %lld ms after the daemon was told to go (2000 allowed)",
		      delay);
	}
	memset(&version, 0, sizeof(version));
	ret = call(s.fd, VACCEL_IOCTL_GET_VERSION, &version);
	CHECK(ret == -ENODEV && version.status.error == VACCEL_E_DEVICE_LOST,
	      "the dead session's GET_VERSION: %d, not -ENODEV", ret);
	close(s.fd);
	free(waits);
	return failures ? 1 : 0;
}

static int step_attach_busy(void)
{
	int fd = open("/dev/vaccel-server", O_RDWR | O_CLOEXEC);

	CHECK(fd < 0 && errno == EBUSY,
	      "a second daemon's open of /dev/vaccel-server: fd %d (%s), not EBUSY",
	      fd, fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	return failures ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* accounted, memlock                                                  */
/* ------------------------------------------------------------------ */

/* What the child of `accounted` did, in memory the parent shares. */
struct accounted_progress {
	unsigned long sessions;		/* opened so far */
	long long filled_current;	/* memory.current once filled */
};

/* The child of `accounted`: never returns. */
static void accounted_child(const char *cgroup, long long headroom,
			    struct accounted_progress *progress)
{
	struct rlimit files = { 65536, 65536 };
	char current_path[512];
	long long max, current;
	unsigned long sessions = 0;
	size_t filled = 0;
	int fd;

	if (join_cgroup(cgroup) || setrlimit(RLIMIT_NOFILE, &files))
		_exit(2);
	snprintf(current_path, sizeof(current_path), "%s/memory.max", cgroup);
	max = read_number(current_path);
	snprintf(current_path, sizeof(current_path), "%s/memory.current", cgroup);
	if (max <= 0)
		_exit(2);
	/* User memory up to `headroom` below the limit: it cannot be reclaimed. */
	while ((current = read_number(current_path)) >= 0 &&
	       current + headroom < max) {
		size_t chunk = 64 * 1024;
		char *bytes = malloc(chunk);

		if (!bytes)
			break;
		memset(bytes, 0x5a, chunk);
		filled += chunk;
	}
	printf("vm_stress: the child filled %zu KiB; memory.current %lld of %lld\n",
	       filled / 1024, current, max);
	progress->filled_current = current;
	for (;;) {
		fd = open("/dev/vaccel", O_RDWR);
		if (fd < 0)
			break;
		sessions++;
		__atomic_store_n(&progress->sessions, sessions, __ATOMIC_RELEASE);
	}
	printf("vm_stress: the child opened %lu sessions, then the open failed: %s; memory.current %lld\n",
	       sessions, strerror(errno), read_number(current_path));
	_exit(errno == ENOMEM ? 0 : 3);
}

static int step_accounted(const char *cgroup, long long headroom_kib)
{
	struct accounted_progress *progress;
	char path[512];
	long long max, peak, hit, oom_kill;
	int status;
	pid_t child;

	/* Touched here first: charged to this process's cgroup, not the child's. */
	progress = mmap(NULL, sizeof(*progress), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (progress == MAP_FAILED)
		return 1;
	memset(progress, 0, sizeof(*progress));
	child = fork();
	if (child == 0)
		accounted_child(cgroup, headroom_kib * 1024, progress);
	waitpid(child, &status, 0);
	if (WIFSIGNALED(status))
		printf("vm_stress: the child was killed by signal %d (the cgroup's OOM killer)\n",
		       WTERMSIG(status));
	CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
	      (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL),
	      "the child ended with status %#x: not refused by ENOMEM nor killed by the cgroup's OOM killer (3: another error stopped its opens first)",
	      status);
	snprintf(path, sizeof(path), "%s/memory.max", cgroup);
	max = read_number(path);
	snprintf(path, sizeof(path), "%s/memory.peak", cgroup);
	peak = read_number(path);
	snprintf(path, sizeof(path), "%s/memory.events", cgroup);
	hit = read_key(path, "max");
	oom_kill = read_key(path, "oom_kill");
	printf("vm_stress: %s: memory.max %lld, memory.peak %lld, events max %lld oom_kill %lld\n",
	       cgroup, max, peak, hit, oom_kill);
	printf("vm_stress: the child opened %lu sessions from memory.current %lld before it was stopped\n",
	       progress->sessions, progress->filled_current);
	CHECK(progress->sessions > 0,
	      "the child opened no session: the limit was reached before the module allocated anything");
	CHECK(peak >= 0 && peak <= max, "memory.peak %lld passed memory.max %lld", peak, max);
	CHECK(hit > 0, "memory.events shows no 'max' event: the sessions never reached the limit");
	return failures ? 1 : 0;
}

#define MEMLOCK_BYTES (8U << 20)

static int step_memlock(void)
{
	struct rlimit none = { 0, 0 };
	struct vaccel_context_create context;
	unsigned char *data, *back;
	uint64_t buffer;
	int fd, ret;

	if (setrlimit(RLIMIT_MEMLOCK, &none) || setgid(65534) || setuid(65534)) {
		CHECK(0, "cannot become uid 65534 with RLIMIT_MEMLOCK 0: %s",
		      strerror(errno));
		return report("accounted-memlock");
	}
	fd = open("/dev/vaccel", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0, "open /dev/vaccel: %s", strerror(errno));
	if (fd < 0)
		return report("accounted-memlock");
	memset(&context, 0, sizeof(context));
	ret = call(fd, VACCEL_IOCTL_CONTEXT_CREATE, &context);
	CHECK(ret == 0, "CONTEXT_CREATE: %d", ret);
	buffer = ret ? 0 : buffer_alloc(fd, context.context, MEMLOCK_BYTES);
	data = malloc(MEMLOCK_BYTES);
	back = malloc(MEMLOCK_BYTES);
	if (!buffer || !data || !back)
		return report("accounted-memlock");
	for (size_t i = 0; i < MEMLOCK_BYTES; i++)
		data[i] = (unsigned char)(i * 131 + (i >> 16));
	ret = transfer(fd, VACCEL_IOCTL_BUFFER_WRITE, buffer, data, MEMLOCK_BYTES);
	CHECK(ret == 0, "BUFFER_WRITE of 8 MiB with RLIMIT_MEMLOCK 0: %d", ret);
	memset(back, 0, MEMLOCK_BYTES);
	ret = transfer(fd, VACCEL_IOCTL_BUFFER_READ, buffer, back, MEMLOCK_BYTES);
	CHECK(ret == 0 && !memcmp(data, back, MEMLOCK_BYTES),
	      "BUFFER_READ of 8 MiB with RLIMIT_MEMLOCK 0: %d, %s", ret,
	      ret ? "no data" : "the bytes differ");
	free(data);
	free(back);
	close(fd);
	return report("accounted-memlock");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "no-starvation"))
		return step_no_starvation(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "interrupt"))
		return step_interrupt(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "park"))
		return step_park(argv[2], atoi(argv[3]), argv[4]);
	if (argc == 2 && !strcmp(argv[1], "attach-busy"))
		return step_attach_busy();
	if (argc == 4 && !strcmp(argv[1], "accounted"))
		return step_accounted(argv[2], atoll(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "memlock"))
		return step_memlock();
	fprintf(stderr, "usage: vm_stress no-starvation MODEL | interrupt MODEL CGROUP | "
		"park MODEL WAITS TIMEFILE | attach-busy | accounted CGROUP HEADROOM_KIB | "
		"memlock\n");
	return 2;
}
