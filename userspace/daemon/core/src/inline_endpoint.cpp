// inline_endpoint.cpp - vacceld's intake and dispatch on the caller's thread.
#include "vaccel/daemon/inline_endpoint.hpp"

#include <cstring>

namespace vaccel::daemon {

std::expected<std::unique_ptr<InlineEndpoint>, std::string> InlineEndpoint::create(
    const std::filesystem::path& config_path, engine::SessionIdentity who)
{
    std::unique_ptr<InlineEndpoint> endpoint(new InlineEndpoint());
    auto config = ConfigFile::open(config_path);
    if (!config)
        return std::unexpected(config.error().message());
    // A CPU device (inline_endpoint.hpp), whatever other devices the machine has.
    backend::Selection selection;
    selection.devices = {"cpu"};
    selection.settings["cpu"].emplace("threads", "1");
    auto devices = engine::DeviceManager::open(selection);
    if (!devices)
        return std::unexpected(describe(devices.error()));
    endpoint->devices_ = std::move(*devices);
    endpoint->policy_ = std::make_shared<PolicyStore>(config->config().policy);
    endpoint->admin_ = std::make_unique<AdminService>(endpoint->devices_, endpoint->policy_,
                                                      std::move(*config), std::nullopt, 0);
    engine::SessionOptions options;
    options.identity = std::move(who);
    options.policy = std::make_shared<PolicyLimits>(endpoint->policy_);
    endpoint->session_ = std::make_shared<engine::Session>(endpoint->devices_, std::move(options));
    return endpoint;
}

InlineEndpoint::Outcome InlineEndpoint::feed(std::span<const std::byte> datagram,
                                             std::vector<UniqueFd> fds)
{
    Outcome outcome;
    auto request = take_request(datagram, std::move(fds));
    if (!request) {
        outcome.closed = true;
        outcome.reason = "malformed message: " + describe(request.error());
        return outcome;
    }
    switch (request->opcode()) {
    case VACCEL_OP_ADMIN:
        outcome.replies.push_back(
            admin_->handle(session_->identity(), *request, {SessionEntry{1, session_}}));
        break;
    case VACCEL_OP_EVENT_WAIT: {
        std::vector<std::uint64_t> handles(request->payload.size() / sizeof(std::uint64_t));
        std::memcpy(handles.data(), request->payload.data(), handles.size() * sizeof(std::uint64_t));
        vaccel_event_wait args{};
        std::memcpy(&args, request->args.data(), sizeof args);
        auto progress = session_->check_wait(handles, args.flags);
        if (!progress) {
            outcome.replies.push_back(refusal(*request, progress.error()));
        } else if (progress->satisfied) {
            outcome.replies.push_back(wait_reply(*request, *progress, nullptr));
        } else {
            session_->count_refusal();
            const Error timeout = Error::of(Errc::deadline_expired, VACCEL_D_WAIT_TIMEOUT,
                                            handles.size() - progress->done_count);
            outcome.replies.push_back(wait_reply(*request, *progress, &timeout));
        }
        break;
    }
    default:
        outcome.replies.push_back(execute(*session_, *request));
        break;
    }
    return outcome;
}

}  // namespace vaccel::daemon
