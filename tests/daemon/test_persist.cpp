// test_persist.cpp - writing the policy back: round trips through the file,
// run-time changes that survive a reopen, and failures that leave the old
// file (and the running policy) exactly as they were.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "vaccel/daemon/config.hpp"

using namespace vaccel::daemon;
namespace fs = std::filesystem;

namespace {

const char* const original = "[daemon]\nsocket = \"/run/a.sock\"\n\n"
                             "[[rule]]\nuid = 1000\nmemory = \"1G\" # one gig\n";

// A fresh directory per test, removed afterwards.
struct TempDir {
    fs::path path;
    TempDir()
    {
        std::string pattern = (fs::temp_directory_path() / "vaccel-persist-XXXXXX").string();
        assert_non_null(mkdtemp(pattern.data()));
        path = pattern;
    }
    ~TempDir()
    {
        chmod(path.c_str(), 0700);
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

std::string read_file(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_file(const fs::path& path, const std::string& text)
{
    std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::string> entries(const fs::path& dir)
{
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
        names.push_back(entry.path().filename().string());
    return names;
}

Config rich_config()
{
    Config c;
    c.daemon.devices = std::vector<std::string>{"cpu", "odd \"name\"\\"};
    c.daemon.socket = "/run/vaccel/x.sock";
    c.daemon.admin_group = "ops";
    RuleLimits all;
    all.contexts = 3;
    all.memory_bytes = 1536ull << 20;
    all.buffers = 0;
    all.programs = 9;
    all.queues = 2;
    all.events = 4294967295u;
    all.weight = 1000;
    all.priority = TenantPriority::latency;
    all.device_share = 333;
    assert_true(c.policy.set(Selector::fallback(), all).has_value());
    RuleLimits odd;
    odd.memory_bytes = 12345;  // no unit fits
    assert_true(c.policy.set(Selector::uid(4294967294u), odd).has_value());
    RuleLimits huge;
    huge.memory_bytes = 18446744073709551615ull;  // beyond a TOML integer
    assert_true(c.policy.set(Selector::gid(0), huge).has_value());
    const Selector odd_cgroup = Selector::cgroup_prefix("/a \"quoted\"/b\\c");
    assert_true(c.policy.set(odd_cgroup, RuleLimits{}).has_value());
    return c;
}

void written_config_reparses_to_same_config(void**)
{
    const Config c = rich_config();
    auto again = parse_config(write_config(c), "written.toml");
    if (!again)
        fail_msg("%s\n%s", again.error().message().c_str(), write_config(c).c_str());
    assert_true(*again == c);
}

void persist_then_load_round_trips(void**)
{
    TempDir dir;
    const fs::path file = dir.path / "vacceld.toml";
    const Config c = rich_config();
    assert_true(persist_config(c, file).has_value());
    auto loaded = load_config(file);
    assert_true(loaded.has_value());
    assert_true(*loaded == c);
    // Only the file itself: no temporary left behind.
    assert_int_equal(entries(dir.path).size(), 1);
}

void set_rule_persists_and_survives_reopen(void**)
{
    TempDir dir;
    const fs::path file = dir.path / "vacceld.toml";
    write_file(file, original);
    auto opened = ConfigFile::open(file);
    assert_true(opened.has_value());
    RuleLimits change;
    change.contexts = 4;
    change.weight = 250;
    assert_true(opened->set_rule(Selector::uid(1000), change).has_value());

    auto reopened = ConfigFile::open(file);
    assert_true(reopened.has_value());
    assert_true(reopened->config() == opened->config());
    const Rule* rule = reopened->config().policy.find(Selector::uid(1000));
    assert_non_null(rule);
    assert_int_equal(*rule->limits.memory_bytes, 1ull << 30);  // kept from the file
    assert_int_equal(*rule->limits.contexts, 4);
    assert_int_equal(*rule->limits.weight, 250);
    assert_string_equal(reopened->config().daemon.socket.c_str(), "/run/a.sock");
}

void reset_rule_persists(void**)
{
    TempDir dir;
    const fs::path file = dir.path / "vacceld.toml";
    write_file(file, original);
    auto opened = ConfigFile::open(file);
    assert_true(opened->reset_rule(Selector::uid(1000)).has_value());
    auto reopened = ConfigFile::open(file);
    assert_int_equal(reopened->config().policy.rules().size(), 0);
}

void reset_of_absent_rule_changes_nothing(void**)
{
    TempDir dir;
    const fs::path file = dir.path / "vacceld.toml";
    write_file(file, original);
    auto opened = ConfigFile::open(file);
    auto refused = opened->reset_rule(Selector::gid(9));
    assert_false(refused.has_value());
    assert_string_equal(refused.error().reason.c_str(),
                        "there is no rule for gid 9 to reset; `vaccelctl limits get` lists the "
                        "rules");
    assert_string_equal(read_file(file).c_str(), original);
}

void invalid_change_changes_neither_file_nor_policy(void**)
{
    TempDir dir;
    const fs::path file = dir.path / "vacceld.toml";
    write_file(file, original);
    auto opened = ConfigFile::open(file);
    const Config before = opened->config();
    RuleLimits bad;
    bad.weight = 0;
    assert_false(opened->set_rule(Selector::uid(1000), bad).has_value());
    assert_true(opened->config() == before);
    assert_string_equal(read_file(file).c_str(), original);
}

void missing_file_opens_as_defaults_and_first_change_creates_it(void**)
{
    TempDir dir;
    const fs::path file = dir.path / "vacceld.toml";
    auto opened = ConfigFile::open(file);
    assert_true(opened.has_value());
    assert_true(opened->config() == Config{});
    RuleLimits change;
    change.events = 64;
    assert_true(opened->set_rule(Selector::fallback(), change).has_value());
    auto loaded = load_config(file);
    assert_true(loaded.has_value());
    assert_int_equal(*loaded->policy.find(Selector::fallback())->limits.events, 64);
    struct stat st {};
    assert_int_equal(stat(file.c_str(), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
}

void persist_keeps_file_mode(void**)
{
    TempDir dir;
    const fs::path file = dir.path / "vacceld.toml";
    write_file(file, original);
    assert_int_equal(chmod(file.c_str(), 0640), 0);
    auto opened = ConfigFile::open(file);
    assert_true(opened->set_rule(Selector::gid(5), RuleLimits{}).has_value());
    struct stat st {};
    assert_int_equal(stat(file.c_str(), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
}

void failed_write_leaves_old_file_and_policy_intact(void**)
{
    TempDir dir;
    const fs::path file = dir.path / "vacceld.toml";
    write_file(file, original);
    auto opened = ConfigFile::open(file);
    const Config before = opened->config();
    // A file-size limit makes the write of the temporary file fail (EFBIG),
    // root or not; the kernel's SIGXFSZ is ignored so write() just fails.
    RuleLimits change;
    change.contexts = 1;
    struct sigaction ignore {}, old_action {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ignore, &old_action);
    rlimit old_limit{};
    getrlimit(RLIMIT_FSIZE, &old_limit);
    rlimit tiny = old_limit;
    tiny.rlim_cur = 16;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &tiny), 0);
    auto refused = opened->set_rule(Selector::uid(1000), change);
    setrlimit(RLIMIT_FSIZE, &old_limit);
    sigaction(SIGXFSZ, &old_action, nullptr);

    assert_false(refused.has_value());
    assert_int_equal(refused.error().sys_errno, EFBIG);
    assert_string_equal(refused.error().file.c_str(), file.c_str());
    assert_string_equal(read_file(file).c_str(), original);
    assert_true(opened->config() == before);
    const auto names = entries(dir.path);
    assert_int_equal(names.size(), 1);
    assert_string_equal(names[0].c_str(), "vacceld.toml");
}

// The child's half of the unwritable-directory test: it may not write the
// directory, tries a change, and exits 0 only if the change was refused
// with EACCES and its running policy is unchanged.
int try_change_without_write_access(const fs::path& file)
{
    auto opened = ConfigFile::open(file);
    if (!opened)
        return 10;
    const Config before = opened->config();
    RuleLimits change;
    change.weight = 7;
    auto refused = opened->set_rule(Selector::uid(1000), change);
    if (refused.has_value())
        return 11;
    if (refused.error().sys_errno != EACCES)
        return 12;
    return opened->config() == before ? 0 : 13;
}

void unwritable_directory_leaves_old_file_intact(void**)
{
    TempDir dir;
    const fs::path file = dir.path / "vacceld.toml";
    write_file(file, original);
    assert_int_equal(chmod(file.c_str(), 0644), 0);
    // Root ignores directory permissions, so as root the attempt runs in a
    // child that has given up root for "nobody"; otherwise in a child that
    // faces a read-only directory.
    assert_int_equal(chmod(dir.path.c_str(), geteuid() == 0 ? 0755 : 0555), 0);
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(20);
        _exit(try_change_without_write_access(file));
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_string_equal(read_file(file).c_str(), original);
    assert_int_equal(entries(dir.path).size(), 1);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(written_config_reparses_to_same_config),
        cmocka_unit_test(persist_then_load_round_trips),
        cmocka_unit_test(set_rule_persists_and_survives_reopen),
        cmocka_unit_test(reset_rule_persists),
        cmocka_unit_test(reset_of_absent_rule_changes_nothing),
        cmocka_unit_test(invalid_change_changes_neither_file_nor_policy),
        cmocka_unit_test(missing_file_opens_as_defaults_and_first_change_creates_it),
        cmocka_unit_test(persist_keeps_file_mode),
        cmocka_unit_test(failed_write_leaves_old_file_and_policy_intact),
        cmocka_unit_test(unwritable_directory_leaves_old_file_intact),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
