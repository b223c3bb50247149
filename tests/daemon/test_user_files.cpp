// test_user_files.cpp - the group(5) and passwd(5) reader a static vacceld
// resolves its admin group with (no NSS), on real files.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cmocka.hpp"
#include "vaccel/daemon/user_files.hpp"

using namespace vaccel::daemon;

namespace {

// A private directory holding `group` and `passwd` files; removed at the end.
struct UserFiles {
    std::filesystem::path directory;
    std::filesystem::path group, passwd;

    UserFiles(const std::string& group_text, const std::string& passwd_text)
    {
        char pattern[] = "/tmp/vaccel-userfiles-XXXXXX";
        assert_non_null(::mkdtemp(pattern));
        directory = pattern;
        group = directory / "group";
        passwd = directory / "passwd";
        std::ofstream(group) << group_text;
        std::ofstream(passwd) << passwd_text;
    }
    ~UserFiles() { std::filesystem::remove_all(directory); }
};

const char* const group_text =
    "# local groups\n"
    "root:x:0:\n"
    "\n"
    "+nisgroup:*:77:alice\n"
    "broken line without fields\n"
    "badid:x:12a:alice\n"
    "vaccel-admin:x:990:alice,,bob\n"
    "vaccel-admin:x:991:mallory\n"
    "users:x:100:\n"
    "wheel:x:10:carol";  // no final newline

const char* const passwd_text =
    "root:x:0:0:root:/root:/bin/sh\n"
    "alice:x:1000:100:Alice:/home/alice:/bin/sh\n"
    "bob:x:1001:100::/home/bob:/bin/sh\n"
    "carol:x:1002:990::/home/carol:/bin/sh\n"
    "dave:x:1003:100\n"  // too few fields: not a user
    "alice:x:2000:100::/home/alice2:/bin/sh\n";

void group_is_found_by_name_with_its_members(void**)
{
    UserFiles files(group_text, passwd_text);
    auto admin = group_in_file(files.group, "vaccel-admin");
    assert_true(admin.has_value());
    assert_int_equal(admin->gid, 990);  // the first entry of the name wins
    assert_int_equal(admin->members.size(), 2);
    assert_string_equal(admin->members[0].c_str(), "alice");
    assert_string_equal(admin->members[1].c_str(), "bob");
    auto wheel = group_in_file(files.group, "wheel");
    assert_true(wheel.has_value());
    assert_int_equal(wheel->gid, 10);
    assert_int_equal(wheel->members.size(), 1);
    assert_int_equal(group_in_file(files.group, "root")->members.size(), 0);
}

void lines_that_are_no_group_entries_are_skipped(void**)
{
    UserFiles files(group_text, passwd_text);
    assert_false(group_in_file(files.group, "+nisgroup").has_value());
    assert_false(group_in_file(files.group, "nisgroup").has_value());
    assert_false(group_in_file(files.group, "badid").has_value());
    assert_false(group_in_file(files.group, "broken line without fields").has_value());
    assert_false(group_in_file(files.group, "nosuch").has_value());
    assert_false(group_in_file(files.directory / "absent", "root").has_value());
}

void users_are_found_by_uid(void**)
{
    UserFiles files(group_text, passwd_text);
    assert_string_equal(user_name_in_file(files.passwd, 1001)->c_str(), "bob");
    assert_string_equal(user_name_in_file(files.passwd, 2000)->c_str(), "alice");
    assert_false(user_name_in_file(files.passwd, 1003).has_value());
    assert_false(user_name_in_file(files.passwd, 4242).has_value());
}

void membership_is_the_primary_group_or_a_listed_member(void**)
{
    UserFiles files(group_text, passwd_text);
    // alice and bob are listed in gid 990, carol has it as primary group.
    assert_true(in_group_by_files(files.group, files.passwd, 1000, 100, 990));
    assert_true(in_group_by_files(files.group, files.passwd, 1001, 100, 990));
    assert_true(in_group_by_files(files.group, files.passwd, 1002, 990, 990));
    // mallory is listed only under the second, shadowed entry's gid 991.
    assert_false(in_group_by_files(files.group, files.passwd, 1003, 100, 990));
    assert_false(in_group_by_files(files.group, files.passwd, 4242, 100, 990));
    assert_false(in_group_by_files(files.group, files.passwd, 1000, 100, 10));
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(group_is_found_by_name_with_its_members),
        cmocka_unit_test(lines_that_are_no_group_entries_are_skipped),
        cmocka_unit_test(users_are_found_by_uid),
        cmocka_unit_test(membership_is_the_primary_group_or_a_listed_member),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
