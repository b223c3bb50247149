// test_containers.cpp - the daemon's container registry
// (userspace/daemon/core/src/containers.cpp).
//
// Specifies: what may be registered (only a container's first process, pid
// 1 of a pid namespace of its own, as a createRuntime hook's state names; a
// process on the host is refused, naming why), the id and device checks,
// and that with nothing registered a session's identity is left as it is.
// Registration, attribution by cgroup and by namespace, and the end of a
// registration with its container run against real podman containers in
// tests/containers/run-container-test.sh.
#include "vaccel/daemon/containers.hpp"
#include "vaccel/daemon/peer.hpp"

#include <sched.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "cmocka.hpp"

using namespace vaccel;
using namespace vaccel::daemon;

namespace {

engine::SessionIdentity me()
{
    engine::SessionIdentity who;
    who.pid = ::getpid();
    who.uid = ::getuid();
    who.gid = ::getgid();
    who.cgroup = cgroup_of(::getpid());
    return who;
}

void host_process_cannot_register(void**)
{
    ContainerRegistry registry;
    auto added = registry.add(me(), "c1", ::getpid(), std::nullopt, 2);
    assert_false(added.has_value());
    assert_int_equal(static_cast<int>(added.error().code), static_cast<int>(Errc::invalid_argument));
    assert_int_equal(added.error().detail, VACCEL_D_ADMIN_REQUEST);
    assert_non_null(std::strstr(added.error().note.c_str(),
                                "is not a container's first process (pid 1 of a pid namespace "
                                "of its own)"));
    auto init = registry.add(me(), "c1", 1, std::nullopt, 2);
    assert_non_null(std::strstr(init.error().note.c_str(), "process 1 is not a container's"));
    assert_true(registry.list().empty());
}

void ids_and_devices_are_checked_first(void**)
{
    ContainerRegistry registry;
    assert_string_equal(container_id_problem("0123abcdef").c_str(), "");
    assert_non_null(std::strstr(container_id_problem("").c_str(), "1 to 128 characters"));
    assert_non_null(std::strstr(container_id_problem(std::string(129, 'a')).c_str(), "has 129"));
    assert_non_null(std::strstr(container_id_problem("a/b").c_str(), "is not"));
    auto bad_id = registry.add(me(), "../x", ::getpid(), std::nullopt, 2);
    assert_non_null(std::strstr(bad_id.error().note.c_str(), "is not"));
    auto bad_device = registry.add(me(), "c1", ::getpid(), std::vector<std::uint32_t>{0, 2}, 2);
    assert_non_null(std::strstr(bad_device.error().note.c_str(),
                                "device 2 does not exist: the daemon serves 2 device(s), 0 to 1"));
}

void nothing_registered_leaves_identity_alone(void**)
{
    ContainerRegistry registry;
    const engine::SessionIdentity who = me();
    const engine::SessionIdentity same = registry.attribute(who);
    assert_string_equal(same.cgroup.c_str(), who.cgroup.c_str());
    assert_true(same.container.empty());
    assert_false(same.devices.has_value());
    assert_false(registry.remove("c1"));
}

void place_of_reads_namespaces(void**)
{
    const ProcessPlace here = place_of(::getpid());
    assert_true(here.mount_ns.known());
    assert_true(here.pid_ns.known());
    assert_true(place_of(::getpid()).mount_ns == here.mount_ns);
    assert_false(place_of(0x7ffffff0).mount_ns.known());
}

// A cgroup of its own under this process's, in the hierarchy of the "0::"
// line (cgroup v2, or the unified one of a hybrid layout); removed at the
// end.
class TestCgroup {
public:
    TestCgroup()
    {
        const std::string mine = cgroup_of(::getpid());
        for (const char* root : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
            const std::string parent = std::string(root) + (mine == "/" ? "" : mine);
            const std::string dir = fmt::format("{}/vaccel-test-{}", parent, ::getpid());
            if (::access((parent + "/cgroup.procs").c_str(), W_OK) == 0 &&
                ::mkdir(dir.c_str(), 0755) == 0) {
                dir_ = dir;
                path_ = fmt::format("{}/vaccel-test-{}", mine == "/" ? "" : mine, ::getpid());
                return;
            }
        }
        fail_msg("cannot make a cgroup under %s (cgroup v2 or hybrid, as root)", mine.c_str());
    }
    ~TestCgroup() { ::rmdir(dir_.c_str()); }
    void take(pid_t pid) const
    {
        const int fd = ::open((dir_ + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
        const std::string text = std::to_string(pid);
        assert_true(fd >= 0 && ::write(fd, text.data(), text.size()) ==
                                   static_cast<ssize_t>(text.size()));
        ::close(fd);
    }
    const std::string& path() const { return path_; }

private:
    std::string dir_;
    std::string path_;  // as /proc/<pid>/cgroup names it
};

// A container's first process as far as the registry can tell: pid 1 of a
// new pid namespace (made with unshare(2)), moved into `cgroup`, alive until
// end() (or this process's end: both its processes die with their parent).
class FirstProcess {
public:
    explicit FirstProcess(const TestCgroup& cgroup)
    {
        int pids[2];
        assert_int_equal(::pipe(pids), 0);
        outer_ = ::fork();
        if (outer_ == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::unshare(CLONE_NEWPID) != 0)
                ::_exit(1);
            const pid_t first = ::fork();
            if (first == 0) {
                ::prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;)
                    ::pause();  // until end() kills it
            }
            (void)!::write(pids[1], &first, sizeof first);
            int status = 0;
            ::waitpid(first, &status, 0);
            ::_exit(0);
        }
        ::close(pids[1]);
        assert_int_equal(::read(pids[0], &pid_, sizeof pid_), sizeof pid_);
        ::close(pids[0]);
        cgroup.take(pid_);
    }
    ~FirstProcess() { end(); }
    pid_t pid() const { return pid_; }
    void end()
    {
        if (outer_ <= 0)
            return;
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(outer_, &status, 0);
        outer_ = 0;
    }

private:
    pid_t outer_ = 0;
    pid_t pid_ = 0;
};

void assert_refused(const Result<ContainerView>& added, const std::string& sentence)
{
    assert_false(added.has_value());
    assert_int_equal(added.error().detail, VACCEL_D_ADMIN_REQUEST);
    if (added.error().note.find(sentence) == std::string::npos)
        fail_msg("refused with \"%s\", not \"%s\"", added.error().note.c_str(), sentence.c_str());
}

void registration_is_one_per_id_process_and_cgroup(void**)
{
    if (::geteuid() != 0)
        fail_msg("this test makes pid namespaces with unshare(2): run it as root");
    ContainerRegistry registry;
    const TestCgroup cgroup;
    FirstProcess first(cgroup);
    FirstProcess second(cgroup);
    assert_string_equal(cgroup_of(first.pid()).c_str(), cgroup.path().c_str());

    // Registering from inside the container's cgroup would make the
    // registering process the container's.
    engine::SessionIdentity inside = me();
    inside.cgroup = cgroup.path() + "/sub";
    assert_refused(registry.add(inside, "c1", first.pid(), std::nullopt, 2),
                   fmt::format("process {}'s cgroup {} holds the registering process (pid {})",
                               first.pid(), cgroup.path(), ::getpid()));
    // An administrator outside it registers it, with the cgroup read from it.
    const engine::SessionIdentity admin = me();
    auto added = registry.add(admin, "c1", first.pid(), std::vector<std::uint32_t>{0}, 2);
    if (!added)
        fail_msg("not registered: %s", added.error().note.c_str());
    assert_string_equal(added->cgroup.c_str(), cgroup.path().c_str());
    assert_int_equal(added->first_pid, first.pid());

    // Neither another id for the same process, nor the same id for another.
    assert_refused(registry.add(admin, "c2", first.pid(), std::nullopt, 2),
                   fmt::format("process {} (cgroup {}) is registered already, as container c1",
                               first.pid(), cgroup.path()));
    assert_refused(registry.add(admin, "c1", second.pid(), std::nullopt, 2),
                   fmt::format("container c1 is registered with its first process pid {}, not {}",
                               first.pid(), second.pid()));
    // Nor another process of the same cgroup under another id.
    assert_refused(registry.add(admin, "c3", second.pid(), std::nullopt, 2),
                   fmt::format("process {} (cgroup {}) is registered already, as container c1",
                               second.pid(), cgroup.path()));
    // The same id and process again widens the devices.
    auto widened = registry.add(admin, "c1", first.pid(), std::vector<std::uint32_t>{1}, 2);
    assert_true(widened.has_value());
    assert_true(widened->devices == (std::vector<std::uint32_t>{0, 1}));
    assert_int_equal(registry.list().size(), 1);

    // A session of the cgroup is the container's, with its devices.
    engine::SessionIdentity member = me();
    member.cgroup = cgroup.path() + "/sub";
    const engine::SessionIdentity mine = registry.attribute(member);
    assert_string_equal(mine.container.c_str(), "c1");
    assert_true(mine.devices == (std::vector<std::uint32_t>{0, 1}));

    // The registration ends with its first process.
    first.end();
    assert_true(registry.list().empty());
    assert_true(registry.attribute(member).container.empty());
    second.end();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_process_cannot_register),
        cmocka_unit_test(ids_and_devices_are_checked_first),
        cmocka_unit_test(nothing_registered_leaves_identity_alone),
        cmocka_unit_test(place_of_reads_namespaces),
        cmocka_unit_test(registration_is_one_per_id_process_and_cgroup),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
