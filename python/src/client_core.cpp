// client_core.cpp - opening, holding and closing the client; its contexts.
//
// Owns: the open path. The socket path is an argument all the way to
// libvaccel's socket transport (vaccel_client_open_at): no environment
// variable is set or read for it, so threads opening clients to different
// daemons at once, and threads reading the environment meanwhile, never see
// each other's path.
#include "client_core.hpp"

#include <string_view>

#include "gil.hpp"
#include "queue_pool.hpp"

namespace vaccel::python {

namespace {

std::string open_context(const std::optional<std::string>& transport,
                         const std::optional<std::string>& socket_path)
{
    std::string text = transport ? "cannot open a vaccel client over the '" + *transport +
                                       "' transport"
                                 : std::string("cannot open a vaccel client (automatic choice "
                                               "of transport)");
    if (socket_path)
        text += " with the daemon's socket at " + *socket_path;
    return text;
}

}  // namespace

CallFailure client_closed()
{
    return CallFailure::refusal(VACCEL_E_INVALID_ARGUMENT, VACCEL_D_NONE, 0, 0,
                                "the vaccel client is closed (Client.close() was called, and "
                                "closing released everything it had made); open a new "
                                "vaccel.Client");
}

ClientCore::ClientCore(vaccel_client* client, std::string transport)
    : client_(client), transport_(std::move(transport)), queues_(std::make_unique<QueuePool>())
{
}

std::shared_ptr<ClientCore> ClientCore::open(const std::optional<std::string>& transport,
                                             const std::optional<std::string>& socket_path)
{
    if (socket_path && transport && *transport != VACCEL_TRANSPORT_SOCKET)
        throw CallFailure::refusal(
            VACCEL_E_INVALID_ARGUMENT, VACCEL_D_NONE, 0, 0,
            "a socket path was given with the '" + *transport +
                "' transport, which does not use it; give it with transport 'socket' (or "
                "None, the automatic choice), or leave it out");
    vaccel_client* client = nullptr;
    const int rc = vaccel_client_open_at(transport ? transport->c_str() : nullptr,
                                         socket_path ? socket_path->c_str() : nullptr, &client);
    check(rc, open_context(transport, socket_path));
    const std::string name = vaccel_client_transport(client);
    return std::shared_ptr<ClientCore>(new ClientCore(client, name));
}

ClientCore::~ClientCore()
{
    // No Hold can exist any more (each Hold's owner keeps this alive).
    if (client_ != nullptr)
        without_gil([&] { vaccel_client_close(client_); });
}

ClientCore::Hold ClientCore::hold() const
{
    std::shared_lock lock(lifetime_);
    if (closed_)
        throw client_closed();
    return Hold(std::move(lock), client_);
}

std::optional<ClientCore::Hold> ClientCore::try_hold() const
{
    std::shared_lock lock(lifetime_);
    if (closed_)
        return std::nullopt;
    return Hold(std::move(lock), client_);
}

void ClientCore::close()
{
    std::unique_lock lock(lifetime_);
    if (closed_)
        return;
    closed_ = true;
    // Views are made under a Hold, so none appears while this lock is held;
    // with views alive, the last one to go closes (view_released).
    if (views.load() > 0)
        return;
    vaccel_client_close(client_);  // waits for in-flight work, releases everything
    client_ = nullptr;
    contexts_.clear();
}

void ClientCore::view_released()
{
    without_gil([&] {
        std::unique_lock lock(lifetime_);
        if (!closed_ || client_ == nullptr || views.load() > 0)
            return;
        vaccel_client_close(client_);
        client_ = nullptr;
        contexts_.clear();
    });
}

bool ClientCore::closed() const
{
    std::shared_lock lock(lifetime_);
    return closed_;
}

std::uint64_t ClientCore::context(const Hold& hold, std::uint32_t device)
{
    std::lock_guard lock(contexts_mutex_);
    if (auto found = contexts_.find(device); found != contexts_.end())
        return found->second;
    std::uint64_t context = 0;
    check(vaccel_context_create(hold.get(), device, &context),
          "cannot open a context on device " + std::to_string(device));
    contexts_.emplace(device, context);
    return context;
}

}  // namespace vaccel::python
