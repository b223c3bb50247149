// SPDX-License-Identifier: GPL-2.0
/*
 * vm_stress.c - the hardened kernel path under pressure, run inside the VM
 * against vacceld (raw ioctls on /dev/vaccel, the ADD fixture's MODEL).
 * The rules proven are those of uapi/vaccel_server.h (fairness, detach,
 * accounting, pins) and uapi/vaccel.h ("Signals and /dev/vaccel"). Each
 * failed check prints one "vm_stress: line N: <why>" line. The checks
 * count (calls served, waits that ended, results); none bounds a time: a
 * loaded machine slows every step, and a step that hangs is caught by the
 * time limit /init runs it under (the step's line is then missing).
 * Commands:
 *
 *   no-starvation MODEL
 *       client A (a child process, one session) parks 200 EVENT_WAITs on a
 *       gated submission and floods short calls from 8 threads (2 of them
 *       also RUN the program without pause), counting each call served in
 *       memory shared with B;
 *       client B (this process, its own session) calls GET_VERSION and
 *       DEVICE_COUNT 40 times each and an ADD RUN 10 times while A floods:
 *       every one of B's calls is served, and A has at most
 *       A_CALLS_PER_B_CALL calls served per call of B's, on average.
 *       Starved, B would wait for A's 200 waits, which end only after B.
 *       Prints the counts and "VMTEST no-starvation PASS|FAIL".
 *   payload-memory MODEL DIR
 *       which memory a BUFFER_WRITE / BUFFER_READ / PROGRAM_LOAD payload
 *       may live in: anonymous (private and MAP_SHARED), a memfd, a tmpfs
 *       file and hugetlb memory move the bytes exactly; a MAP_SHARED or
 *       MAP_PRIVATE mapping of a file in DIR (a ramfs: not shmem) is
 *       refused with -EOPNOTSUPP and status Unsupported/BAD_VALUE naming
 *       the pointer, so is a range that is anonymous but for its last
 *       page, and the session keeps serving ("VMTEST payload-memory").
 *   interrupt MODEL CGROUP
 *       a caught SIGINT (no SA_RESTART) ends a long EVENT_WAIT with EINTR,
 *       the event untouched ("VMTEST interrupt"); with SA_RESTART the
 *       wait goes on, ending when its event completes or at its first
 *       absolute deadline, never before ("VMTEST interrupt-restart"); a
 *       waiter in the cgroup v2 leaf CGROUP is frozen by cgroup.freeze
 *       (cgroup.events "frozen 1"), does not return while frozen, and its
 *       wait completes once thawed ("VMTEST interrupt-freeze").
 *   park MODEL WAITS TIMEFILE
 *       WAITS threads of one session wait on a gated submission; prints
 *       "vm_stress: parked" when they are in; then each wait must fail with
 *       -ENODEV (DeviceLost, PEER_GONE), the session stays dead; how long
 *       after the CLOCK_REALTIME ns in TIMEFILE (written by whoever made
 *       the daemon let go) the last one ended is printed. Exit 0 when all
 *       of it held.
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
#include <stddef.h>
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

/*
 * What client A's flooders share: a stop flag and counters. It lives in a
 * MAP_SHARED page made before the fork, so client B reads A's count of
 * served calls around each of its own.
 */
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

/* Each served call of A's counts once, when it returns. */
static void *flooder_main(void *arg)
{
	struct flooder *me = arg;
	struct flood *f = me->flood;
	struct vaccel_get_version version;
	struct vaccel_device_count count;

	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		int ret;

		memset(&version, 0, sizeof(version));
		ret = call(me->s.fd, VACCEL_IOCTL_GET_VERSION, &version);
		__atomic_add_fetch(&f->calls, 1, __ATOMIC_RELAXED);
		memset(&count, 0, sizeof(count));
		ret |= call(me->s.fd, VACCEL_IOCTL_DEVICE_COUNT, &count);
		__atomic_add_fetch(&f->calls, 1, __ATOMIC_RELAXED);
		if (me->runs) {
			ret |= add_run(&me->s);
			__atomic_add_fetch(&f->calls, 1, __ATOMIC_RELAXED);
		}
		if (ret)
			__atomic_add_fetch(&f->errors, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Client A: parks the waits, floods (counting into `flood`), says 'r' on
 * `ready` once flooding; stops when `control` closes, raises the gate and
 * checks that every parked wait completed. Exit 0 when all of it held.
 */
static int flood_client(const char *model, struct flood *flood, int ready,
			int control)
{
	static struct waiter waits[PARKED_WAITS];
	static struct flooder flooders[FLOODERS];
	uint64_t gate, event;
	long long base;
	struct add s, flood_base;
	char byte;

	if (add_prepare(&s, model) || add_prepare_on(&flood_base, s.fd, model))
		return 1;
	for (int i = 0; i < FLOODERS; i++) {
		flooders[i].flood = flood;
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
	/* Flooding: every flooder has had calls served. */
	while (__atomic_load_n(&flood->calls, __ATOMIC_RELAXED) < 4 * FLOODERS)
		sleep_ms(10);
	if (write(ready, "r", 1) != 1)
		return 1;
	while (read(control, &byte, 1) == 1)
		;
	__atomic_store_n(&flood->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < FLOODERS; i++)
		pthread_join(flooders[i].thread, NULL);
	CHECK(flood->errors == 0, "client A: %lu of its flood's rounds failed",
	      flood->errors);
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

enum served_op { OP_VERSION, OP_COUNT, OP_RUN, SERVED_OPS };

static const char *const served_name[SERVED_OPS] = {
	"GET_VERSION", "DEVICE_COUNT", "RUN (ADD)",
};
static const int served_rounds[SERVED_OPS] = { 40, 40, 10 };

/*
 * A's calls served, on average, while one call of B's waits for its
 * answer, at most. B has one call in flight, A one per flooder: a fair
 * path serves B about once per FLOODERS of A's calls (the VM's two vCPUs
 * and B's own wake-up add a few). 32 times that share still fails a
 * starved B, which waits for A's 200 parked waits: they end only after B
 * is done, so B would not be served at all (the step then hangs into its
 * time limit and is reported missing).
 */
#define A_CALLS_PER_B_CALL	(32 * FLOODERS)

/* One call of `op` in B's session; 0 or -errno. */
static int served_call(const struct add *s, enum served_op op)
{
	struct vaccel_get_version version;
	struct vaccel_device_count count;

	memset(&version, 0, sizeof(version));
	memset(&count, 0, sizeof(count));
	if (op == OP_VERSION)
		return call(s->fd, VACCEL_IOCTL_GET_VERSION, &version);
	if (op == OP_COUNT)
		return call(s->fd, VACCEL_IOCTL_DEVICE_COUNT, &count);
	return add_run(s);
}

static int step_no_starvation(const char *model)
{
	unsigned long a_during[SERVED_OPS] = { 0 }, a_most[SERVED_OPS] = { 0 };
	unsigned long a_start, a_end;
	int b_served[SERVED_OPS] = { 0 };
	int ready[2], control[2], status;
	struct flood *flood;
	long long parked;
	struct add s;
	pid_t flooder;
	char byte;

	flood = mmap(NULL, sizeof(*flood), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (flood == MAP_FAILED || add_prepare(&s, model))
		return report("no-starvation");
	memset(flood, 0, sizeof(*flood));
	if (pipe(ready) || pipe(control))
		return report("no-starvation");
	flooder = fork();
	if (flooder == 0) {
		close(s.fd);
		close(ready[0]);
		close(control[1]);
		_exit(flood_client(model, flood, ready[1], control[0]));
	}
	close(ready[1]);
	close(control[0]);
	CHECK(read(ready[0], &byte, 1) == 1, "client A did not start its flood");
	if (failures)
		goto out;
	parked = read_number(DEBUGFS_REQUESTS);
	a_start = __atomic_load_n(&flood->calls, __ATOMIC_RELAXED);
	for (int round = 0; round < 40; round++) {
		for (int op = 0; op < SERVED_OPS; op++) {
			unsigned long before, served;
			int ret;

			if (round >= served_rounds[op])
				continue;
			before = __atomic_load_n(&flood->calls, __ATOMIC_RELAXED);
			ret = served_call(&s, op);
			served = __atomic_load_n(&flood->calls, __ATOMIC_RELAXED) -
				 before;
			CHECK(ret == 0, "client B: %s: %d", served_name[op], ret);
			if (ret)
				continue;
			b_served[op]++;
			a_during[op] += served;
			if (served > a_most[op])
				a_most[op] = served;
		}
	}
	a_end = __atomic_load_n(&flood->calls, __ATOMIC_RELAXED);
	printf("vm_stress: client A had %lu calls served while B was served %d, with %lld requests in the module (%d waits parked)\n",
	       a_end - a_start, b_served[OP_VERSION] + b_served[OP_COUNT] +
	       b_served[OP_RUN], parked, PARKED_WAITS);
	CHECK(parked >= PARKED_WAITS,
	      "the module holds %lld requests, not A's %d parked waits",
	      parked, PARKED_WAITS);
	CHECK(a_end - a_start >= 50,
	      "client A had only %lu calls served while B called: no flood to measure against",
	      a_end - a_start);
	for (int op = 0; op < SERVED_OPS; op++) {
		int n = served_rounds[op];

		printf("vm_stress: %s: B served %d of %d; A served %lu meanwhile, %lu per B call on average (%d allowed), %lu at most\n",
		       served_name[op], b_served[op], n, a_during[op],
		       b_served[op] ? a_during[op] / b_served[op] : 0,
		       A_CALLS_PER_B_CALL, a_most[op]);
		CHECK(b_served[op] == n, "%s: B was served %d of %d calls",
		      served_name[op], b_served[op], n);
		CHECK(a_during[op] <= (unsigned long)A_CALLS_PER_B_CALL * n,
		      "%s: A had %lu calls served during B's %d: more than %d per B call",
		      served_name[op], a_during[op], n, A_CALLS_PER_B_CALL);
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

/* No SA_RESTART: EINTR, the event still pending. */
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
	CHECK(w.returned_ns >= raised,
	      "the restarted wait returned %lld ms before the gate was raised",
	      (long long)(raised - w.returned_ns) / 1000000);
	CHECK(interrupts == 1, "the SIGINT handler ran %d times", (int)interrupts);
}

/*
 * SA_RESTART: a restarted wait still ends at the first one's deadline:
 * -ETIME, never before the deadline (a clock order, not a bound: load can
 * only make it later; how much later is printed).
 */
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
	CHECK(w.returned_ns >= deadline,
	      "a restarted wait ended %lld ms before its deadline",
	      ((long long)deadline - (long long)w.returned_ns) / 1000000);
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
	/* However long freezing takes; a freezer that never does hangs here. */
	while ((frozen = read_key(events, "frozen")) == 0)
		sleep_ms(50);
	CHECK(frozen == 1, "%s does not show 'frozen 1' after cgroup.freeze", events);
	printf("vm_stress: the waiting client froze in %llu ms\n",
	       (unsigned long long)(now_ns() - frozen_at) / 1000000);
	/* Its event completes while it is frozen: it must not return. */
	CHECK(gate_raise(s, gate, 1) == 0, "GATE_RAISE failed");
	sleep_ms(300);
	CHECK(waitpid(child, &status, WNOHANG) == 0,
	      "the frozen client ended while frozen (status %#x)", status);
	write_text(freeze, "0");
	CHECK(waitpid(child, &status, 0) == child, "waitpid of the thawed client: %s",
	      strerror(errno));
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

/* ------------------------------------------------------------------ */
/* payload-memory                                                      */
/* ------------------------------------------------------------------ */

#define PAYLOAD_BYTES (64U * 1024U)

/* A pattern that differs for each `seed` and byte. */
static void pattern(unsigned char *bytes, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		bytes[i] = (unsigned char)(i * 7 + seed * 131 + (i >> 9));
}

/*
 * Memory a payload may live in: BUFFER_WRITE from `from` and BUFFER_READ
 * into `to` (both PAYLOAD_BYTES) move the bytes exactly.
 */
static void payload_moves(int fd, uint64_t buffer, const char *what,
			  unsigned char *from, unsigned char *to,
			  unsigned int seed)
{
	int ret;

	pattern(from, PAYLOAD_BYTES, seed);
	ret = transfer(fd, VACCEL_IOCTL_BUFFER_WRITE, buffer, from, PAYLOAD_BYTES);
	CHECK(ret == 0, "BUFFER_WRITE from %s: %d", what, ret);
	memset(to, 0, PAYLOAD_BYTES);
	ret = transfer(fd, VACCEL_IOCTL_BUFFER_READ, buffer, to, PAYLOAD_BYTES);
	CHECK(ret == 0 && !memcmp(from, to, PAYLOAD_BYTES),
	      "BUFFER_READ into %s: %d, %s", what, ret,
	      ret ? "no data" : "the bytes differ");
}

/* A refused payload: -EOPNOTSUPP, Unsupported/BAD_VALUE naming `at`. */
static void payload_refused(int fd, unsigned long cmd, uint64_t buffer,
			    const char *what, void *at, uint64_t bytes)
{
	struct vaccel_buffer_transfer xfer;
	int ret;

	memset(&xfer, 0, sizeof(xfer));
	xfer.buffer = buffer;
	xfer.length = bytes;
	xfer.data = ptr(at);
	ret = call(fd, cmd, &xfer);
	CHECK(ret == -EOPNOTSUPP && xfer.status.error == VACCEL_E_UNSUPPORTED &&
	      xfer.status.detail == VACCEL_D_BAD_VALUE &&
	      xfer.status.arg0 == offsetof(struct vaccel_buffer_transfer, data) &&
	      xfer.status.arg1 == ptr(at),
	      "%s %s: %d (error %u detail %u arg0 %llu arg1 %#llx), not -EOPNOTSUPP Unsupported/BAD_VALUE naming the pointer",
	      cmd == VACCEL_IOCTL_BUFFER_WRITE ? "BUFFER_WRITE from" : "BUFFER_READ into",
	      what, ret, xfer.status.error, xfer.status.detail,
	      (unsigned long long)xfer.status.arg0,
	      (unsigned long long)xfer.status.arg1);
}

/* A file of PAYLOAD_BYTES holding the pattern of `seed`, mapped `flags`. */
static unsigned char *file_mapping(const char *path, int flags,
				   unsigned int seed)
{
	unsigned char bytes[4096];
	void *map;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK(fd >= 0, "cannot create %s: %s", path, strerror(errno));
	if (fd < 0)
		return NULL;
	for (unsigned int i = 0; i < PAYLOAD_BYTES / sizeof(bytes); i++) {
		pattern(bytes, sizeof(bytes), seed + i);
		if (write(fd, bytes, sizeof(bytes)) != sizeof(bytes)) {
			CHECK(0, "cannot write %s: %s", path, strerror(errno));
			close(fd);
			return NULL;
		}
	}
	map = mmap(NULL, PAYLOAD_BYTES, PROT_READ | PROT_WRITE, flags, fd, 0);
	close(fd);
	CHECK(map != MAP_FAILED, "cannot map %s: %s", path, strerror(errno));
	return map == MAP_FAILED ? NULL : map;
}

static int step_payload_memory(const char *model, const char *dir)
{
	unsigned char *anon, *shared, *memfd_map, *tmpfs_map, *huge, *file;
	unsigned char *private_file, *mixed, *back;
	struct vaccel_program_load load;
	const size_t huge_bytes = 2U << 20;
	char path[512];
	uint64_t buffer;
	struct add s;
	int fd, ret;

	if (add_prepare(&s, model))
		return report("payload-memory");
	buffer = buffer_alloc(s.fd, s.context, PAYLOAD_BYTES);
	back = malloc(PAYLOAD_BYTES);
	if (!buffer || !back)
		return report("payload-memory");

	/* What a payload may live in. */
	anon = mmap(NULL, PAYLOAD_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shared = mmap(NULL, PAYLOAD_BYTES, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = memfd_create("vm-payload", MFD_CLOEXEC);
	CHECK(fd >= 0 && ftruncate(fd, PAYLOAD_BYTES) == 0, "memfd: %s",
	      strerror(errno));
	memfd_map = mmap(NULL, PAYLOAD_BYTES, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
	close(fd);
	tmpfs_map = file_mapping("/tmp/vm-payload", MAP_SHARED, 1);
	/* One 2 MiB huge page, reserved here for this step. */
	write_text("/proc/sys/vm/nr_hugepages", "1");
	huge = mmap(NULL, huge_bytes, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	CHECK(anon != MAP_FAILED && shared != MAP_FAILED &&
	      memfd_map != MAP_FAILED && huge != MAP_FAILED,
	      "cannot map the allowed kinds of memory: %s", strerror(errno));
	if (failures || !tmpfs_map)
		return report("payload-memory");
	payload_moves(s.fd, buffer, "anonymous memory", anon, back, 2);
	payload_moves(s.fd, buffer, "MAP_SHARED|MAP_ANONYMOUS memory", shared,
		      anon, 3);
	payload_moves(s.fd, buffer, "a memfd", memfd_map, shared, 4);
	payload_moves(s.fd, buffer, "a tmpfs file", tmpfs_map, memfd_map, 5);
	payload_moves(s.fd, buffer, "hugetlb memory", huge, tmpfs_map, 6);

	/* What it may not: files of a filesystem that is not shmem. */
	snprintf(path, sizeof(path), "%s/vm-payload-shared", dir);
	file = file_mapping(path, MAP_SHARED, 7);
	snprintf(path, sizeof(path), "%s/vm-payload-private", dir);
	private_file = file_mapping(path, MAP_PRIVATE, 8);
	/* Anonymous, but for its last page: a ramfs file's. */
	mixed = mmap(NULL, PAYLOAD_BYTES, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK(mixed != MAP_FAILED && fd >= 0 &&
	      mmap(mixed + PAYLOAD_BYTES - 4096, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED,
	      "cannot map a file's page into anonymous memory: %s",
	      strerror(errno));
	if (fd >= 0)
		close(fd);
	if (failures || !file || !private_file)
		return report("payload-memory");
	memcpy(back, huge, PAYLOAD_BYTES);	/* the last write's: the buffer's now */
	payload_refused(s.fd, VACCEL_IOCTL_BUFFER_WRITE, buffer,
			"a ramfs file (MAP_SHARED)", file, PAYLOAD_BYTES);
	payload_refused(s.fd, VACCEL_IOCTL_BUFFER_READ, buffer,
			"a ramfs file (MAP_SHARED)", file, PAYLOAD_BYTES);
	payload_refused(s.fd, VACCEL_IOCTL_BUFFER_WRITE, buffer,
			"a ramfs file (MAP_PRIVATE)", private_file,
			PAYLOAD_BYTES);
	payload_refused(s.fd, VACCEL_IOCTL_BUFFER_READ, buffer,
			"a ramfs file (MAP_PRIVATE)", private_file,
			PAYLOAD_BYTES);
	payload_refused(s.fd, VACCEL_IOCTL_BUFFER_WRITE, buffer,
			"anonymous memory ending in a ramfs page", mixed,
			PAYLOAD_BYTES);
	payload_refused(s.fd, VACCEL_IOCTL_BUFFER_READ, buffer,
			"anonymous memory ending in a ramfs page", mixed,
			PAYLOAD_BYTES);
	/* A program's artifact is a payload too. */
	memset(&load, 0, sizeof(load));
	load.context = s.context;
	load.format = VACCEL_FORMAT_TOSA;
	load.payload = ptr(file);
	load.payload_bytes = PAYLOAD_BYTES;
	ret = call(s.fd, VACCEL_IOCTL_PROGRAM_LOAD, &load);
	CHECK(ret == -EOPNOTSUPP && load.status.error == VACCEL_E_UNSUPPORTED &&
	      load.status.detail == VACCEL_D_BAD_VALUE &&
	      load.status.arg0 == offsetof(struct vaccel_program_load, payload),
	      "PROGRAM_LOAD from a ramfs file: %d (error %u detail %u arg0 %llu), not -EOPNOTSUPP Unsupported/BAD_VALUE",
	      ret, load.status.error, load.status.detail,
	      (unsigned long long)load.status.arg0);
	/* Nothing was moved, and the session serves on. */
	memset(anon, 0, PAYLOAD_BYTES);
	ret = transfer(s.fd, VACCEL_IOCTL_BUFFER_READ, buffer, anon,
		       PAYLOAD_BYTES);
	CHECK(ret == 0 && !memcmp(anon, back, PAYLOAD_BYTES),
	      "after the refusals the buffer reads %d, %s", ret,
	      ret ? "no data" : "other bytes than the last write's");
	CHECK(add_run(&s) == 0, "a RUN after the refusals failed");
	close(s.fd);
	return report("payload-memory");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "no-starvation"))
		return step_no_starvation(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "payload-memory"))
		return step_payload_memory(argv[2], argv[3]);
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
	fprintf(stderr, "usage: vm_stress no-starvation MODEL | payload-memory MODEL DIR | "
		"interrupt MODEL CGROUP | "
		"park MODEL WAITS TIMEFILE | attach-busy | accounted CGROUP HEADROOM_KIB | "
		"memlock\n");
	return 2;
}
