// user_files.cpp - group(5) and passwd(5) lines, parsed.
#include "vaccel/daemon/user_files.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <string_view>

namespace vaccel::daemon {

namespace {

// The colon-separated fields of one line.
std::vector<std::string_view> fields_of(std::string_view line)
{
    std::vector<std::string_view> fields;
    std::size_t start = 0;
    for (;;) {
        const std::size_t colon = line.find(':', start);
        fields.push_back(line.substr(start, colon == std::string_view::npos ? colon : colon - start));
        if (colon == std::string_view::npos)
            return fields;
        start = colon + 1;
    }
}

// A decimal id that is the whole field.
std::optional<std::uint32_t> id_of(std::string_view field)
{
    std::uint32_t id = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), id);
    if (field.empty() || error != std::errc() || end != field.data() + field.size())
        return std::nullopt;
    return id;
}

// Calls `take` with the fields of each entry line of `file` (at least
// `min_fields` of them, a decimal id in the third) until it returns true.
void each_entry(const std::filesystem::path& file, std::size_t min_fields,
                const std::function<bool(const std::vector<std::string_view>&, std::uint32_t)>& take)
{
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line[0] == '+' || line[0] == '-')
            continue;
        const auto fields = fields_of(line);
        if (fields.size() < min_fields || fields[0].empty())
            continue;
        const auto id = id_of(fields[2]);
        if (!id)
            continue;
        if (take(fields, *id))
            return;
    }
}

GroupEntry group_of(const std::vector<std::string_view>& fields, std::uint32_t gid)
{
    GroupEntry entry;
    entry.name = fields[0];
    entry.gid = static_cast<gid_t>(gid);
    std::string_view members = fields[3];
    while (!members.empty()) {
        const std::size_t comma = members.find(',');
        const std::string_view member = members.substr(0, comma);
        if (!member.empty())
            entry.members.emplace_back(member);
        if (comma == std::string_view::npos)
            break;
        members.remove_prefix(comma + 1);
    }
    return entry;
}

}  // namespace

std::optional<GroupEntry> group_in_file(const std::filesystem::path& file, const std::string& name)
{
    std::optional<GroupEntry> found;
    each_entry(file, 4, [&](const auto& fields, std::uint32_t gid) {
        if (fields[0] != name)
            return false;
        found = group_of(fields, gid);
        return true;
    });
    return found;
}

std::optional<GroupEntry> group_with_gid_in_file(const std::filesystem::path& file, gid_t gid)
{
    std::optional<GroupEntry> found;
    each_entry(file, 4, [&](const auto& fields, std::uint32_t id) {
        if (id != gid)
            return false;
        found = group_of(fields, id);
        return true;
    });
    return found;
}

bool in_group_by_files(const std::filesystem::path& group_file,
                       const std::filesystem::path& passwd_file, uid_t uid, gid_t gid,
                       gid_t member_of)
{
    if (gid == member_of)
        return true;
    const auto user = user_name_in_file(passwd_file, uid);
    if (!user)
        return false;
    const auto group = group_with_gid_in_file(group_file, member_of);
    return group && std::ranges::find(group->members, *user) != group->members.end();
}

std::optional<std::string> user_name_in_file(const std::filesystem::path& file, uid_t uid)
{
    std::optional<std::string> found;
    each_entry(file, 7, [&](const auto& fields, std::uint32_t id) {
        if (id != uid)
            return false;
        found = std::string(fields[0]);
        return true;
    });
    return found;
}

}  // namespace vaccel::daemon
