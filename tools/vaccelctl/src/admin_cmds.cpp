// admin_cmds.cpp - `vaccelctl sessions | tenants | containers |
// limits get|set|reset|mine | metrics`: the daemon's admin channel (`limits
// mine` is answered to every user; the rest to root and the admin group).
//
// Owns: one admin exchange per command and how its answer is shown. Decides:
// these commands always go to the daemon (never embedded: there is nothing
// to administer in process), and say so clearly when no daemon is
// reachable; --json prints the daemon's document (pretty-printed), the
// default an aligned table (admin_report.hpp); metrics print the Prometheus
// text exactly as it came.
#include <fmt/format.h>

#include "admin_report.hpp"
#include "commands.hpp"
#include "session.hpp"

namespace vaccel::ctl {

namespace {

Result<std::string> ask(bool verbose, std::uint32_t command, const std::string& request,
                        std::string_view what)
{
    auto session = Session::open_daemon(verbose, what);
    if (!session)
        return std::unexpected(session.error());
    return session->admin(command, request, what);
}

// A listing: the document as JSON, or the table `text_of` makes of it.
Result<void> list(const AdminOptions& options, std::uint32_t command, std::string_view what,
                  std::string_view list_key, std::string (*text_of)(const nlohmann::json&))
{
    auto answer = ask(options.verbose, command, "", what);
    if (!answer)
        return std::unexpected(answer.error());
    auto document = admin_document(*answer, what, list_key);
    if (!document)
        return std::unexpected(document.error());
    if (options.json)
        fmt::print("{}\n", document->dump(2));
    else
        fmt::print("{}", text_of(*document));
    return {};
}

}  // namespace

Result<void> sessions_command(const AdminOptions& options)
{
    return list(options, VACCEL_ADMIN_SESSIONS, "sessions", "sessions", sessions_text);
}

Result<void> tenants_command(const AdminOptions& options)
{
    return list(options, VACCEL_ADMIN_TENANTS, "tenants", "tenants", tenants_text);
}

Result<void> containers_command(const AdminOptions& options)
{
    return list(options, VACCEL_ADMIN_CONTAINERS, "containers", "containers", containers_text);
}

Result<void> limits_get_command(const AdminOptions& options)
{
    return list(options, VACCEL_ADMIN_LIMITS_GET, "limits get", "rules", limits_text);
}

Result<void> limits_mine_command(const AdminOptions& options)
{
    return list(options, VACCEL_ADMIN_MINE, "limits mine", "devices", mine_text);
}

Result<void> metrics_command(const AdminOptions& options)
{
    auto answer = ask(options.verbose, VACCEL_ADMIN_METRICS, "", "metrics");
    if (!answer)
        return std::unexpected(answer.error());
    fmt::print("{}", *answer);
    return {};
}

Result<void> limits_set_command(const LimitsChangeOptions& options)
{
    auto request = limits_set_request(options.selector, options.values);
    if (!request)
        return std::unexpected(request.error());
    auto answer = ask(options.verbose, VACCEL_ADMIN_LIMITS_SET, request->dump(), "limits set");
    if (!answer)
        return std::unexpected(answer.error());
    auto document = admin_document(*answer, "limits set", "");
    if (!document)
        return std::unexpected(document.error());
    if (options.json) {
        fmt::print("{}\n", document->dump(2));
        return {};
    }
    if (!document->contains("rule") || !(*document)["rule"].is_object())
        return refuse("the daemon's answer to 'limits set' lacks the \"rule\" it set");
    fmt::print("{}", limits_text(nlohmann::json{{"rules", {(*document)["rule"]}}}));
    return {};
}

Result<void> limits_reset_command(const LimitsChangeOptions& options)
{
    auto request = limits_reset_request(options.selector);
    if (!request)
        return std::unexpected(request.error());
    auto answer = ask(options.verbose, VACCEL_ADMIN_LIMITS_RESET, request->dump(), "limits reset");
    if (!answer)
        return std::unexpected(answer.error());
    auto document = admin_document(*answer, "limits reset", "");
    if (!document)
        return std::unexpected(document.error());
    if (options.json) {
        fmt::print("{}\n", document->dump(2));
        return {};
    }
    const std::string rule = selector_text((*request)["selector"]);
    const bool removed = document->value("removed", false);
    fmt::print("{}\n", removed ? fmt::format("rule {} removed", rule)
                               : fmt::format("no rule {}: nothing removed", rule));
    return {};
}

}  // namespace vaccel::ctl
