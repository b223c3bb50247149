// test_identity.cpp - who a socket peer is and whether it administers,
// against a real vacceld on a private socket (and AdminAuthority in
// process): identity and admin power come from the kernel, never from
// inside a container.
//
// Specifies (each case a ctest of its own, label hostile; run as root):
//  - root whose mount, pid or user namespace is not the host's (made here
//    with unshare(2), as a container's are) is refused the admin channel
//    with PermissionDenied / VACCEL_D_NOT_ADMIN (uid 0, gid 0), and the
//    limit it tried to set is not set;
//  - a peer whose connecting process exited before the daemon read it
//    (the daemon stopped meanwhile, the socket held by a child) gets no
//    session: the connection is closed, the log says why, and the admin
//    session list does not show it;
//  - AdminAuthority refuses container and namespaced peers with no lookup,
//    asks the user database once per (uid, gid) within an answer's
//    lifetime, keeps at most cache_bound answers (the oldest goes), drops
//    them when the admin group changes, and refuses with the same exact
//    error each time.
#include <sched.h>
#include <sys/syscall.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "daemon_support.hpp"
#include "vaccel/daemon/admin_authority.hpp"

using namespace vaccel;
using namespace vaccel::test;
using nlohmann::json;

namespace {

constexpr const char* limit_everyone =
    R"({"selector":{"default":true},"limits":{"contexts":0}})";

void require_root()
{
    if (::geteuid() != 0)
        fail_msg("this test makes namespaces with unshare(2) and stops a daemon: run it as root");
}

// Writes `text` to a /proc file of this process; false on failure.
bool write_file(const char* path, const char* text)
{
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const auto length = static_cast<ssize_t>(std::strlen(text));
    const bool ok = ::write(fd, text, std::strlen(text)) == length;
    ::close(fd);
    return ok;
}

// In a child: the status of an ADMIN LIMITS_SET sent from there, as the
// child's exit code: 0 refused exactly as NOT_ADMIN of uid 0 gid 0,
// 1 accepted, 2 refused otherwise, 3+ the setup failed.
int limits_set_status_code(const std::string& socket)
{
    const UniqueFd fd = connect_to(socket);
    if (!fd)
        return 3;
    vaccel_admin args{};
    args.command = VACCEL_ADMIN_LIMITS_SET;
    const std::string_view document = limit_everyone;
    auto request = encode_request(VACCEL_OP_ADMIN, 9, 0, bytes_of(args),
                                  std::as_bytes(std::span(document.data(), document.size())));
    if (::send(fd.get(), request.data(), request.size(), 0) != static_cast<ssize_t>(request.size()))
        return 4;
    std::vector<std::byte> reply(8192);
    const ssize_t n = ::recv(fd.get(), reply.data(), reply.size(), 0);
    if (n <= 0)
        return 5;
    auto view = decode_response(std::span(reply).first(static_cast<std::size_t>(n)));
    if (!view || view->header.seq != 9)
        return 6;
    vaccel_status status{};
    std::memcpy(&status, view->args.data(), sizeof status);
    if (status.error == VACCEL_OK)
        return 1;
    if (status.error == VACCEL_E_PERMISSION_DENIED && status.detail == VACCEL_D_NOT_ADMIN &&
        status.arg0 == 0 && status.arg1 == 0)
        return 0;
    return 2;
}

int wait_code(pid_t child)
{
    int status = 0;
    if (::waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return 100;
    return WEXITSTATUS(status);
}

// The namespaces to make before the request: CLONE_NEWNS, CLONE_NEWPID
// (then the request comes from the namespace's pid 1) or CLONE_NEWUSER
// (with root mapped to root: uid_map "0 0 1").
void root_in_namespace_is_not_admin(int flags)
{
    require_root();
    DaemonProcess daemon;
    const pid_t child = ::fork();
    if (child == 0) {
        if (::unshare(flags) != 0)
            ::_exit(20);
        if ((flags & CLONE_NEWUSER) != 0 &&
            (!write_file("/proc/self/uid_map", "0 0 1") ||
             !write_file("/proc/self/setgroups", "deny") ||
             !write_file("/proc/self/gid_map", "0 0 1")))
            ::_exit(21);
        if ((flags & CLONE_NEWPID) != 0) {
            const pid_t first = ::fork();  // pid 1 of the new namespace
            if (first == 0)
                ::_exit(::getpid() == 1 ? limits_set_status_code(daemon.socket()) : 22);
            ::_exit(wait_code(first));
        }
        ::_exit(limits_set_status_code(daemon.socket()));
    }
    const int code = wait_code(child);
    if (code != 0)
        fail_msg("root in a new namespace (flags %#x): code %d (1: the daemon let it "
                 "administer; 2: refused otherwise)",
                 static_cast<unsigned>(flags), code);
    // Nothing changed: the host's admin sees no rule.
    WireClient admin(daemon.socket());
    const json rules = json::parse(admin.admin(VACCEL_ADMIN_LIMITS_GET).text())["rules"];
    assert_int_equal(rules.size(), 0);
    // And the host's root administers.
    assert_int_equal(admin.admin(VACCEL_ADMIN_LIMITS_SET, limit_everyone).status().error,
                     VACCEL_OK);
}

void root_in_new_mount_namespace_is_not_admin(void**) { root_in_namespace_is_not_admin(CLONE_NEWNS); }
void root_in_new_pid_namespace_is_not_admin(void**) { root_in_namespace_is_not_admin(CLONE_NEWPID); }
void root_in_new_user_namespace_is_not_admin(void**) { root_in_namespace_is_not_admin(CLONE_NEWUSER); }

char process_state(pid_t pid)
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
}

void peer_that_exits_before_it_is_read_gets_no_session(void**)
{
    require_root();
    DaemonProcess daemon;
    // Stopped, the daemon accepts nothing: the connection waits in the
    // backlog while its connecting process exits and is reaped.
    daemon.signal(SIGSTOP);
    for (int i = 0; i < 500 && process_state(daemon.pid()) != 'T'; ++i)
        ::usleep(1000);
    assert_int_equal(process_state(daemon.pid()), 'T');

    int go[2];
    int result[2];
    assert_int_equal(::pipe(go), 0);
    assert_int_equal(::pipe(result), 0);
    const pid_t connector = ::fork();
    if (connector == 0) {
        const UniqueFd fd = connect_to(daemon.socket());
        if (!fd)
            ::_exit(30);
        if (::fork() == 0) {
            // The holder: asks for the version once told to, says what
            // came back ('c' closed, 's' served, 'e' setup failed), and
            // keeps the connection until the parent closes `go`.
            ::close(go[1]);
            ::close(result[0]);
            char byte = 0;
            char outcome = 'e';
            if (::read(go[0], &byte, 1) == 1) {
                vaccel_get_version version{};
                auto request =
                    encode_request(VACCEL_OP_GET_VERSION, 1, 0, bytes_of(version), {});
                std::vector<std::byte> reply(4096);
                pollfd p{fd.get(), POLLIN, 0};
                if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) !=
                    static_cast<ssize_t>(request.size()))
                    outcome = 'c';
                else if (::poll(&p, 1, 10000) == 1)
                    outcome = ::recv(fd.get(), reply.data(), reply.size(), 0) > 0 ? 's' : 'c';
            }
            (void)!::write(result[1], &outcome, 1);
            while (::read(go[0], &byte, 1) > 0) {
            }
            ::_exit(0);
        }
        ::_exit(0);  // the connecting process exits at once
    }
    ::close(go[0]);
    ::close(result[1]);
    assert_int_equal(wait_code(connector), 0);  // reaped: its pid is free
    daemon.signal(SIGCONT);

    // The daemon reads the peer now; then the holder asks.
    WireClient admin(daemon.socket());
    assert_int_equal(admin.call(VACCEL_OP_GET_VERSION, vaccel_get_version{}).status().error,
                     VACCEL_OK);
    assert_int_equal(::write(go[1], "g", 1), 1);
    char outcome = 0;
    assert_int_equal(::read(result[0], &outcome, 1), 1);
    const json sessions = json::parse(admin.admin(VACCEL_ADMIN_SESSIONS).text())["sessions"];
    ::close(go[1]);  // the holder ends
    ::close(result[0]);
    if (outcome != 'c' || sessions.size() != 1)
        fail_msg("a process gone when the daemon read it got a session (holder: '%c'; "
                 "sessions: %s)",
                 outcome, sessions.dump().c_str());
    assert_int_equal(sessions[0]["pid"].get<int>(), ::getpid());
    const std::string log = daemon.log_text();
    assert_non_null(std::strstr(log.c_str(), "vacceld: a connection was refused: "));
}

// ---- AdminAuthority in process -----------------------------------------------------

engine::SessionIdentity host_peer(uid_t uid, gid_t gid)
{
    engine::SessionIdentity who;
    who.pid = 1234;
    who.uid = uid;
    who.gid = gid;
    who.host_namespaces = true;
    return who;
}

void assert_refusal(const Error& error, uid_t uid, gid_t gid, const char* sentence)
{
    assert_int_equal(static_cast<int>(error.code), static_cast<int>(Errc::permission_denied));
    assert_int_equal(error.detail, VACCEL_D_NOT_ADMIN);
    assert_int_equal(error.arg0, uid);
    assert_int_equal(error.arg1, gid);
    assert_string_equal(error.note.c_str(), sentence);
}

void admin_refusals_are_cheap_cached_and_exact(void**)
{
    int asked = 0;
    daemon::AdminAuthority authority(50, [&](uid_t uid, gid_t, gid_t) {
        ++asked;
        return uid == 1001;  // 1001 is in the admin group by a supplementary group
    });

    // Root inside a container, or outside the host's namespaces: refused
    // at the first look, never asked about.
    engine::SessionIdentity contained = host_peer(0, 0);
    contained.container = "c1";
    engine::SessionIdentity namespaced = host_peer(0, 0);
    namespaced.host_namespaces = false;
    for (int i = 0; i < 100; ++i) {
        assert_int_equal(static_cast<int>(authority.look(contained)),
                         static_cast<int>(daemon::AdminLook::not_admin));
        assert_false(authority.resolve(contained));
        assert_int_equal(static_cast<int>(authority.look(namespaced)),
                         static_cast<int>(daemon::AdminLook::not_admin));
        assert_false(authority.resolve(namespaced));
    }
    assert_refusal(authority.refusal(contained), 0, 0,
                   "a session of a registered container never administers, whatever its uid; "
                   "administer from the host");
    assert_refusal(authority.refusal(namespaced), 0, 0,
                   "a process whose user, pid or mount namespace is not the host's (a "
                   "container's) never administers, whatever its uid; administer from the host");
    // Root on the host, and the admin group as primary group: no lookup.
    assert_int_equal(static_cast<int>(authority.look(host_peer(0, 0))),
                     static_cast<int>(daemon::AdminLook::admin));
    assert_true(authority.resolve(host_peer(1000, 50)));
    assert_int_equal(asked, 0);
    assert_int_equal(authority.lookups(), 0);

    // A host user who is not root: asked once, then answered from the cache.
    assert_int_equal(static_cast<int>(authority.look(host_peer(1000, 1000))),
                     static_cast<int>(daemon::AdminLook::ask));
    for (int i = 0; i < 100; ++i)
        assert_false(authority.resolve(host_peer(1000, 1000)));
    assert_int_equal(asked, 1);
    assert_refusal(authority.refusal(host_peer(1000, 1000)), 1000, 1000,
                   "only root and the admin group may administer");
    assert_true(authority.resolve(host_peer(1001, 1001)));
    assert_true(authority.resolve(host_peer(1001, 1001)));
    assert_int_equal(asked, 2);

    // A new admin group drops every answer.
    authority.set_admin_group(51);
    assert_false(authority.resolve(host_peer(1000, 1000)));
    assert_int_equal(asked, 3);

    // At most cache_bound answers: filling it with new uids evicts the oldest.
    authority.set_admin_group(50);
    asked = 0;
    const auto bound = static_cast<uid_t>(daemon::AdminAuthority::cache_bound);
    for (uid_t uid = 2000; uid < 2000 + bound; ++uid)
        assert_false(authority.resolve(host_peer(uid, uid)));
    assert_int_equal(asked, bound);
    assert_false(authority.resolve(host_peer(2000 + bound - 1, 2000 + bound - 1)));
    assert_int_equal(asked, bound);  // still cached
    assert_false(authority.resolve(host_peer(9999, 9999)));  // evicts uid 2000
    assert_int_equal(asked, bound + 1);
    assert_false(authority.resolve(host_peer(2001, 2001)));
    assert_int_equal(asked, bound + 1);  // still cached
    assert_false(authority.resolve(host_peer(2000, 2000)));
    assert_int_equal(asked, bound + 2);  // was evicted: asked again
    // With no admin group only root administers, and nobody is asked.
    authority.set_admin_group(std::nullopt);
    assert_false(authority.resolve(host_peer(1001, 1001)));
    assert_int_equal(asked, bound + 2);
}

}  // namespace

int main(int argc, char** argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test(root_in_new_mount_namespace_is_not_admin),
        cmocka_unit_test(root_in_new_pid_namespace_is_not_admin),
        cmocka_unit_test(root_in_new_user_namespace_is_not_admin),
        cmocka_unit_test(peer_that_exits_before_it_is_read_gets_no_session),
        cmocka_unit_test(admin_refusals_are_cheap_cached_and_exact),
    };
    // argv[1] names one case (ctest runs each on its own).
    std::vector<CMUnitTest> chosen;
    for (const CMUnitTest& test : all)
        if (argc < 2 || std::strcmp(argv[1], test.name) == 0)
            chosen.push_back(test);
    if (chosen.empty()) {
        std::fprintf(stderr, "test_identity: no case named %s\n", argv[1]);
        return 2;
    }
    return _cmocka_run_group_tests("identity", chosen.data(), chosen.size(), nullptr, nullptr);
}
