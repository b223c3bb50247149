// admin.cpp - the admin service: permission, commands, request documents
// and persistence of limits.
#include "vaccel/daemon/admin.hpp"

#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "vaccel/daemon/peer.hpp"
#include "vaccel/daemon/reactor.hpp"
#include "vaccel/daemon/size.hpp"

namespace vaccel::daemon {

namespace {

using nlohmann::json;

Error bad_document(std::uint64_t offset, std::string why)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_ADMIN_REQUEST, offset).with_note(std::move(why));
}

// Parses a request document; the error names the byte where parsing failed.
Result<json> parse_document(std::string_view text)
{
    // Invariant: nlohmann reports parse errors by exception; it is caught
    // here and never crosses this function.
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        return fail(bad_document(e.byte > 0 ? e.byte - 1 : 0,
                                 fmt::format("the request document is not JSON: {}", e.what())));
    }
}

Result<std::uint64_t> unsigned_of(const json& value, std::string_view key, bool sizes = false)
{
    if (value.is_number_unsigned())
        return value.get<std::uint64_t>();
    if (sizes && value.is_string())
        if (auto bytes = parse_size(value.get<std::string>()))
            return *bytes;
    return fail(bad_document(0, fmt::format("\"{}\" must be a non-negative integer{}", key,
                                            sizes ? " or a size such as \"2G\"" : "")));
}

Result<Selector> selector_of(const json& document)
{
    if (!document.is_object() || !document.contains("selector"))
        return fail(bad_document(0, "the document needs a \"selector\" object"));
    const json& s = document["selector"];
    if (!s.is_object() || s.size() != 1)
        return fail(bad_document(0, "\"selector\" must hold exactly one of uid, gid, cgroup, default"));
    // Ownership: items() yields proxies that refer into `s`; copy the key
    // and keep a reference to the value (owned by `document`), never a
    // reference into the temporary proxy.
    const auto only = s.begin();
    const std::string key = only.key();
    const json& value = only.value();
    Selector selector;
    if (key == "uid" || key == "gid") {
        auto id = unsigned_of(value, key);
        if (!id || *id > UINT32_MAX)
            return fail(bad_document(0, fmt::format("\"{}\" must be a 32-bit id", key)));
        selector = key == "uid" ? Selector::uid(static_cast<uid_t>(*id))
                                : Selector::gid(static_cast<gid_t>(*id));
    } else if (key == "cgroup") {
        if (!value.is_string())
            return fail(bad_document(0, "\"cgroup\" must be a path string"));
        selector = Selector::cgroup_prefix(value.get<std::string>());
    } else if (key == "default") {
        if (value != true)
            return fail(bad_document(0, "\"default\" must be true"));
        selector = Selector::fallback();
    } else {
        return fail(bad_document(0, fmt::format("unknown selector \"{}\"", key)));
    }
    if (auto problem = selector_problem(selector); !problem.empty())
        return fail(bad_document(0, problem));
    return selector;
}

// "context": {"memory_bytes": ..., "buffers": ...}: per-context caps.
Result<ContextCaps> context_caps_of(const json& value)
{
    if (!value.is_object())
        return fail(bad_document(0, "\"context\" must be an object of per-context caps"));
    ContextCaps caps;
    for (const auto& [key, item] : value.items()) {
        auto number = unsigned_of(item, key, key == "memory_bytes");
        if (!number)
            return fail(std::move(number.error()));
        if (key == "memory_bytes") {
            caps.memory_bytes = *number;
            continue;
        }
        if (*number > UINT32_MAX)
            return fail(bad_document(0, fmt::format("\"context.{}\" is out of range", key)));
        const auto value32 = static_cast<std::uint32_t>(*number);
        if (key == "buffers")
            caps.buffers = value32;
        else if (key == "programs")
            caps.programs = value32;
        else if (key == "queues")
            caps.queues = value32;
        else if (key == "events")
            caps.events = value32;
        else if (key == "gates")
            caps.gates = value32;
        else
            return fail(bad_document(
                0, fmt::format("\"context.{}\" is not a per-context cap (memory_bytes, buffers, "
                               "programs, queues, events, gates)",
                               key)));
    }
    return caps;
}

Result<RuleLimits> limits_of(const json& document)
{
    if (!document.contains("limits") || !document["limits"].is_object())
        return fail(bad_document(0, "the document needs a \"limits\" object"));
    RuleLimits limits;
    for (const auto& [key, value] : document["limits"].items()) {
        if (key == "context") {
            auto caps = context_caps_of(value);
            if (!caps)
                return fail(std::move(caps.error()));
            limits.context = *caps;
            continue;
        }
        if (key == "priority") {
            const auto priority =
                value.is_string() ? priority_of(value.get<std::string>()) : std::nullopt;
            if (!priority)
                return fail(bad_document(
                    0, "\"priority\" must be \"latency\" or \"batch\""));
            limits.priority = *priority;
            continue;
        }
        if (key == "device_share") {
            const auto share =
                value.is_string() ? share_of(value.get<std::string>()) : std::nullopt;
            if (!share)
                return fail(bad_document(0, "\"device_share\" must be a percentage string "
                                            "from \"0.1%\" to \"100%\", e.g. \"30%\""));
            limits.device_share = *share;
            continue;
        }
        auto number = unsigned_of(value, key, key == "memory_bytes");
        if (!number)
            return fail(std::move(number.error()));
        if (key == "memory_bytes") {
            limits.memory_bytes = *number;
            continue;
        }
        if (*number > UINT32_MAX)
            return fail(bad_document(0, fmt::format("\"{}\" is out of range", key)));
        const auto value32 = static_cast<std::uint32_t>(*number);
        if (key == "contexts")
            limits.contexts = value32;
        else if (key == "buffers")
            limits.buffers = value32;
        else if (key == "programs")
            limits.programs = value32;
        else if (key == "queues")
            limits.queues = value32;
        else if (key == "events")
            limits.events = value32;
        else if (key == "gates")
            limits.gates = value32;
        else if (key == "sessions")
            limits.sessions = value32;
        else if (key == "weight")
            limits.weight = value32;
        else
            return fail(bad_document(0, fmt::format("unknown limit \"{}\"", key)));
    }
    return limits;
}

json selector_json(const Selector& selector)
{
    switch (selector.kind) {
    case SelectorKind::uid:
        return {{"uid", selector.id}};
    case SelectorKind::gid:
        return {{"gid", selector.id}};
    case SelectorKind::cgroup:
        return {{"cgroup", selector.cgroup}};
    case SelectorKind::fallback:
        break;
    }
    return {{"default", true}};
}

json rule_json(const Rule& rule)
{
    json out{{"selector", selector_json(rule.selector)}};
    const RuleLimits& l = rule.limits;
    if (l.contexts) out["contexts"] = *l.contexts;
    if (l.memory_bytes) out["memory_bytes"] = *l.memory_bytes;
    if (l.buffers) out["buffers"] = *l.buffers;
    if (l.programs) out["programs"] = *l.programs;
    if (l.queues) out["queues"] = *l.queues;
    if (l.events) out["events"] = *l.events;
    if (l.gates) out["gates"] = *l.gates;
    if (l.sessions) out["sessions"] = *l.sessions;
    if (l.weight) out["weight"] = *l.weight;
    if (l.priority) out["priority"] = priority_name(*l.priority);
    if (l.device_share) out["device_share"] = share_text(*l.device_share);
    const ContextCaps& c = l.context;
    if (!c.empty()) {
        json caps = json::object();
        if (c.memory_bytes) caps["memory_bytes"] = *c.memory_bytes;
        if (c.buffers) caps["buffers"] = *c.buffers;
        if (c.programs) caps["programs"] = *c.programs;
        if (c.queues) caps["queues"] = *c.queues;
        if (c.events) caps["events"] = *c.events;
        if (c.gates) caps["gates"] = *c.gates;
        out["context"] = caps;
    }
    return out;
}

Error config_refusal(const ConfigError& error)
{
    if (error.sys_errno != 0)
        return Error::of(Errc::external, VACCEL_D_NONE, 0, static_cast<std::uint64_t>(error.sys_errno))
            .with_note(error.message());
    return bad_document(0, error.message());
}

std::string_view text_of(const std::vector<std::byte>& bytes)
{
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

std::string limits_document(const Policy& policy)
{
    json rules = json::array();
    for (const Rule& rule : policy.rules())
        rules.push_back(rule_json(rule));
    return json{{"rules", rules}}.dump();
}

std::string devices_document(engine::DeviceManager& devices)
{
    json list = json::array();
    for (std::uint32_t i = 0; i < devices.count(); ++i) {
        engine::Device& device = *devices.device(i);
        const vaccel_device_info& info = device.info();
        const engine::DeviceStats stats = device.stats();
        const char* klass = info.device_class == VACCEL_CLASS_GPU   ? "gpu"
                            : info.device_class == VACCEL_CLASS_NPU ? "npu"
                                                                    : "other";
        list.push_back({{"index", i},
                        {"name", std::string(info.name, strnlen(info.name, VACCEL_NAME_LEN))},
                        {"driver", std::string(info.driver, strnlen(info.driver, VACCEL_NAME_LEN))},
                        {"class", klass},
                        {"state", device.state() == backend::DeviceState::lost ? "lost" : "ok"},
                        {"memory_bytes", info.memory_bytes},
                        {"sessions", stats.sessions},
                        {"contexts", stats.live.contexts},
                        {"buffers", stats.live.buffers},
                        {"buffer_bytes", stats.live.buffer_bytes},
                        {"programs", stats.live.programs},
                        {"gates", stats.live.gates},
                        {"events_in_flight", stats.live.events_in_flight},
                        {"submissions", stats.submissions}});
    }
    return json{{"devices", list}}.dump();
}

std::string sessions_document(const std::vector<SessionEntry>& sessions, const Policy& policy,
                              const DeviceTimes& times)
{
    json list = json::array();
    for (const SessionEntry& entry : sessions) {
        const engine::SessionIdentity& who = entry.session->identity();
        const engine::SessionStats stats = entry.session->stats();
        const Client client = client_of(who);
        // The tenant's, whichever of its sessions: device time is charged
        // to tenants, not sessions (ADR 0024).
        json device_time = json::array();
        if (auto it = times.find(entry.session->tenant().key()); it != times.end())
            for (const TenantDeviceTime& t : it->second)
                device_time.push_back(
                    {{"device", t.device},
                     {"charged_ns", t.charged_ns},
                     {"held_ns", t.held_ns},
                     {"share", t.share}});
        list.push_back({{"id", entry.id},
                        {"transport", entry.transport},
                        {"pid", who.pid},
                        {"uid", who.uid},
                        {"gid", who.gid},
                        {"cgroup", who.cgroup},
                        {"container", who.container},
                        {"tenant", entry.session->tenant().key()},
                        {"rule", rule_label(policy.match(client))},
                        {"weight", policy.weight(client)},
                        {"priority", priority_name(policy.schedule(client).priority)},
                        {"device_share", share_text(policy.schedule(client).share_permille)},
                        {"contexts", stats.contexts},
                        {"buffers", stats.buffers},
                        {"memory_bytes", stats.memory_bytes},
                        {"programs", stats.programs},
                        {"queues", stats.queues},
                        {"gates", stats.gates},
                        {"events_in_flight", stats.events_in_flight},
                        {"waits_parked", entry.waits_parked},
                        {"submissions", stats.submissions},
                        {"errors", stats.errors},
                        {"device_time", std::move(device_time)}});
    }
    return json{{"sessions", list}}.dump();
}

std::string containers_document(const std::vector<ContainerView>& containers,
                                const std::vector<SessionEntry>& sessions)
{
    json list = json::array();
    for (const ContainerView& c : containers) {
        std::uint64_t count = 0;
        for (const SessionEntry& entry : sessions)
            count += entry.session->identity().container == c.id ? 1 : 0;
        list.push_back({{"id", c.id},
                        {"cgroup", c.cgroup},
                        {"first_pid", c.first_pid},
                        {"mount_ns", c.mount_ns.inode},
                        {"pid_ns", c.pid_ns.inode},
                        {"devices", c.devices ? json(*c.devices) : json("all")},
                        {"sessions", count}});
    }
    return json{{"containers", list}}.dump();
}

AdminService::AdminService(std::shared_ptr<engine::DeviceManager> devices,
                           std::shared_ptr<PolicyStore> policy, ConfigFile config,
                           std::optional<std::string> admin_group_from_cli,
                           std::uint64_t started_ns, std::shared_ptr<ContainerRegistry> containers,
                           std::shared_ptr<engine::Tenants> tenants)
    : devices_(std::move(devices)),
      policy_(std::move(policy)),
      config_(std::move(config)),
      admin_group_from_cli_(std::move(admin_group_from_cli)),
      started_ns_(started_ns),
      containers_(std::move(containers)),
      tenants_(std::move(tenants))
{
    const std::string group = admin_group_from_cli_.value_or(config_.config().daemon.admin_group);
    const std::optional<gid_t> admin_gid = group_id(group);
    if (!admin_gid)
        spdlog::warn("vacceld: admin group '{}' does not exist; only root may administer", group);
    authority_ = std::make_unique<AdminAuthority>(admin_gid);
}

bool open_to_every_caller(std::uint32_t command) { return command == VACCEL_ADMIN_MINE; }

Reply AdminService::handle(const engine::SessionIdentity& caller, Request& request,
                           const std::vector<SessionEntry>& sessions)
{
    vaccel_admin args{};
    std::memcpy(&args, request.args.data(), sizeof args);
    if (!open_to_every_caller(args.command) && !authority_->resolve(caller))
        return refusal(request, authority_->refusal(caller));
    auto document = payload_of(request, request.header.payload_bytes);
    if (!document)
        return refusal(request, document.error());
    const std::string_view text = text_of(*document);

    Result<std::string> answer;
    switch (args.command) {
    case VACCEL_ADMIN_DEVICES:
        answer = devices_document(*devices_);
        break;
    case VACCEL_ADMIN_SESSIONS:
        answer = sessions_document(sessions, *policy_->current(), device_times(*devices_));
        break;
    case VACCEL_ADMIN_LIMITS_GET:
        answer = limits_document(config_.config().policy);
        break;
    case VACCEL_ADMIN_LIMITS_SET:
        answer = limits_set(text);
        break;
    case VACCEL_ADMIN_LIMITS_RESET:
        answer = limits_reset(text);
        break;
    case VACCEL_ADMIN_METRICS: {
        const std::uint64_t uptime = (monotonic_now_ns() - started_ns_) / 1'000'000'000u;
        answer = metrics_text(*devices_, sessions, uptime, tenants_.get());
        break;
    }
    case VACCEL_ADMIN_TENANTS:
        answer = tenants_ ? tenants_document(*tenants_, device_times(*devices_))
                          : tenants_document(engine::Tenants(0));
        break;
    case VACCEL_ADMIN_CONTAINERS:
        answer = containers_ ? containers_document(containers_->list(), sessions)
                             : containers_document({}, sessions);
        break;
    case VACCEL_ADMIN_CONTAINER_ADD:
        answer = container_add(caller, text);
        break;
    case VACCEL_ADMIN_CONTAINER_REMOVE:
        answer = container_remove(text);
        break;
    case VACCEL_ADMIN_MINE:
        if (!text.empty())
            answer = fail(bad_document(0, "MINE takes no request document: send an empty one"));
        else
            answer = mine_document(caller, *policy_->current(), PolicyLimits(policy_), tenants_.get(),
                                   *devices_, device_times(*devices_));
        break;
    default:
        answer = fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_admin, command),
                      args.command);
        break;
    }
    if (!answer)
        return refusal(request, answer.error());
    return reply_with(request, request.args, std::as_bytes(std::span(*answer)));
}

Result<std::string> AdminService::limits_set(std::string_view text)
{
    auto document = parse_document(text);
    if (!document)
        return fail(std::move(document.error()));
    auto selector = selector_of(*document);
    if (!selector)
        return fail(std::move(selector.error()));
    auto limits = limits_of(*document);
    if (!limits)
        return fail(std::move(limits.error()));
    if (auto set = config_.set_rule(*selector, *limits); !set)
        return fail(config_refusal(set.error()));
    publish_policy();
    const Rule* rule = config_.config().policy.find(*selector);
    spdlog::info("vacceld: limits for {} set and saved to {}", selector->describe(),
                 config_.path().string());
    return json{{"rule", rule_json(*rule)}}.dump();
}

Result<std::string> AdminService::limits_reset(std::string_view text)
{
    auto document = parse_document(text);
    if (!document)
        return fail(std::move(document.error()));
    auto selector = selector_of(*document);
    if (!selector)
        return fail(std::move(selector.error()));
    if (config_.config().policy.find(*selector) == nullptr)
        return json{{"removed", false}}.dump();
    if (auto reset = config_.reset_rule(*selector); !reset)
        return fail(config_refusal(reset.error()));
    publish_policy();
    spdlog::info("vacceld: limits for {} removed; {} saved", selector->describe(),
                 config_.path().string());
    return json{{"removed", true}}.dump();
}

namespace {

// "devices": "all" (nullopt) or a list of indices.
Result<std::optional<std::vector<std::uint32_t>>> devices_of(const json& document)
{
    if (!document.contains("devices"))
        return fail(bad_document(0, "the document needs \"devices\": \"all\" or a list of "
                                    "device indices"));
    const json& value = document["devices"];
    if (value == "all")
        return std::optional<std::vector<std::uint32_t>>{};
    if (!value.is_array() || value.empty())
        return fail(bad_document(0, "\"devices\" must be \"all\" or a non-empty list of "
                                    "device indices"));
    std::vector<std::uint32_t> indices;
    for (const json& index : value) {
        if (!index.is_number_unsigned() || index.get<std::uint64_t>() > UINT32_MAX)
            return fail(bad_document(0, "\"devices\" holds something that is no device index"));
        indices.push_back(index.get<std::uint32_t>());
    }
    return std::optional<std::vector<std::uint32_t>>{std::move(indices)};
}

Result<std::string> id_of(const json& document)
{
    if (!document.is_object() || !document.contains("id") || !document["id"].is_string())
        return fail(bad_document(0, "the document needs the container's \"id\" (a string)"));
    return document["id"].get<std::string>();
}

}  // namespace

Result<std::string> AdminService::container_add(const engine::SessionIdentity& caller,
                                                std::string_view text)
{
    if (!containers_)
        return fail(Errc::unsupported);
    auto document = parse_document(text);
    if (!document)
        return fail(std::move(document.error()));
    auto id = id_of(*document);
    if (!id)
        return fail(std::move(id.error()));
    auto devices = devices_of(*document);
    if (!devices)
        return fail(std::move(devices.error()));
    if (!document->contains("pid") || !(*document)["pid"].is_number_unsigned() ||
        (*document)["pid"].get<std::uint64_t>() == 0 ||
        (*document)["pid"].get<std::uint64_t>() > INT32_MAX)
        return fail(bad_document(0, "the document needs \"pid\": the container's first process "
                                    "in the daemon's pid namespace"));
    const auto first_pid = static_cast<pid_t>((*document)["pid"].get<std::uint64_t>());
    auto added = containers_->add(caller, *id, first_pid, *devices, devices_->count());
    if (!added) {
        // The refusal's reason travels in the log: a status has no room for it.
        spdlog::warn("vacceld: container {} not registered: {}", id->substr(0, 12),
                     added.error().note);
        return fail(std::move(added.error()));
    }
    spdlog::info("vacceld: container {} registered: cgroup {}, first pid {}, devices {}",
                 id->substr(0, 12), added->cgroup, added->first_pid,
                 added->devices ? json(*added->devices).dump() : std::string("all"));
    return containers_document({*added}, {});
}

Result<std::string> AdminService::container_remove(std::string_view text)
{
    if (!containers_)
        return fail(Errc::unsupported);
    auto document = parse_document(text);
    if (!document)
        return fail(std::move(document.error()));
    auto id = id_of(*document);
    if (!id)
        return fail(std::move(id.error()));
    const bool removed = containers_->remove(*id);
    if (removed)
        spdlog::info("vacceld: container {} removed", id->substr(0, 12));
    return json{{"removed", removed}}.dump();
}

void AdminService::publish_policy()
{
    policy_->replace(config_.config().policy);
    if (tenants_)
        tenants_->refresh(PolicyLimits(policy_));
}

ReloadOutcome AdminService::reload()
{
    auto opened = ConfigFile::open(config_.path());
    if (!opened)
        return {false, opened.error().message()};
    const DaemonSettings before = config_.config().daemon;
    config_ = std::move(*opened);
    const DaemonSettings& after = config_.config().daemon;
    publish_policy();
    std::string message = fmt::format("{} rule(s) in force", config_.config().policy.rules().size());
    if (after.devices != before.devices)
        message += "; the device list changed: restart vacceld to serve the new list";
    if (after.socket != before.socket)
        message += "; the socket path changed: restart vacceld to move it";
    if (!admin_group_from_cli_ && after.admin_group != before.admin_group) {
        authority_->set_admin_group(group_id(after.admin_group));
        message += fmt::format("; admin group is now '{}'", after.admin_group);
    }
    return {true, message};
}

}  // namespace vaccel::daemon
