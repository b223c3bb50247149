// user_files.hpp - the group and user files read directly (group(5),
// passwd(5)), without NSS.
//
// A statically linked vacceld cannot use glibc's NSS (getgrnam_r and
// friends load NSS modules with dlopen, which crashes a static binary on
// most hosts), so a static build resolves the admin group from these files
// alone (peer.cpp). Decides: a line is "name:password:id:..." with a
// decimal id; empty lines, comments ('#') and NIS compat entries ('+', '-')
// are skipped, as is any line that does not parse; the first entry of a
// name (or uid) wins, as in the files NSS module. A file that cannot be
// read finds nothing.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace vaccel::daemon {

struct GroupEntry {
    std::string name;
    gid_t gid = 0;
    std::vector<std::string> members;  // the fourth field, comma separated
};

// Group `name` in a group(5) file (/etc/group).
std::optional<GroupEntry> group_in_file(const std::filesystem::path& file, const std::string& name);
// The first group of id `gid` in a group(5) file.
std::optional<GroupEntry> group_with_gid_in_file(const std::filesystem::path& file, gid_t gid);
// The name of user `uid` in a passwd(5) file (/etc/passwd).
std::optional<std::string> user_name_in_file(const std::filesystem::path& file, uid_t uid);
// Whether the user `uid` whose primary group is `gid` belongs to group
// `member_of`: as its primary group, or listed by name among the members
// of that group in `group_file` (the user named by `passwd_file`).
bool in_group_by_files(const std::filesystem::path& group_file,
                       const std::filesystem::path& passwd_file, uid_t uid, gid_t gid,
                       gid_t member_of);

}  // namespace vaccel::daemon
