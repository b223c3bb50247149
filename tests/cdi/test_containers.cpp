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

#include <unistd.h>

#include <cstring>

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

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_process_cannot_register),
        cmocka_unit_test(ids_and_devices_are_checked_first),
        cmocka_unit_test(nothing_registered_leaves_identity_alone),
        cmocka_unit_test(place_of_reads_namespaces),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
