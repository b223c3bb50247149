// buffer_core.cpp - allocating, moving bytes, mapping and freeing a buffer.
//
// Owns: the libvaccel calls of one buffer and the rules in buffer_core.hpp.
#include "buffer_core.hpp"

#include "gil.hpp"

namespace vaccel::python {

std::uint64_t layout_bytes(const Layout& layout)
{
    std::string shape;
    for (std::size_t i = 0; i < layout.shape.size(); ++i)
        shape += (i ? ", " : "") + std::to_string(layout.shape[i]);
    // Invariant: the product is computed in 64 bits with every step checked,
    // so a shape can never describe more bytes than the buffer has.
    std::uint64_t bytes = layout.itemsize;
    for (std::int64_t extent : layout.shape) {
        if (extent < 0)
            throw CallFailure::refusal(VACCEL_E_INVALID_ARGUMENT, VACCEL_D_NONE, 0, 0,
                                       "cannot allocate a buffer of a negative extent; give "
                                       "every dimension as 0 or more");
        if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(extent), &bytes))
            throw CallFailure::refusal(
                VACCEL_E_INVALID_ARGUMENT, VACCEL_D_NONE, 0, 0,
                "the shape (" + shape + ") of " + std::to_string(layout.itemsize) +
                    "-byte items is more than 2^64 bytes; give a smaller shape");
    }
    return bytes;
}

BufferCore::BufferCore(std::shared_ptr<ClientCore> client, std::uint32_t device,
                       std::uint64_t context, std::uint64_t handle, std::uint32_t domain,
                       std::uint64_t nbytes, Layout layout)
    : client_(std::move(client)),
      device_(device),
      context_(context),
      handle_(handle),
      domain_(domain),
      nbytes_(nbytes),
      layout_(std::move(layout))
{
}

std::shared_ptr<BufferCore> BufferCore::allocate(std::shared_ptr<ClientCore> client,
                                                 std::uint32_t device, std::uint32_t domain,
                                                 Layout layout)
{
    const std::uint64_t nbytes = layout_bytes(layout);
    auto hold = client->hold();
    const std::uint64_t context = client->context(hold, device);
    struct vaccel_buffer_alloc request{};
    request.context = context;
    request.bytes = nbytes;
    request.domain = domain;
    request.usage = VACCEL_USAGE_ALL;
    request.access = VACCEL_ACCESS_RW;
    check(vaccel_buffer_alloc(hold.get(), &request),
          "cannot allocate a buffer of " + std::to_string(nbytes) + " bytes on device " +
              std::to_string(device));
    return std::shared_ptr<BufferCore>(new BufferCore(std::move(client), device, context,
                                                      request.buffer, domain, nbytes,
                                                      std::move(layout)));
}

BufferCore::~BufferCore()
{
    // No view exists (each ViewToken keeps this alive). A closed client
    // released the buffer already; a refusal here has nobody to tell, and
    // closing the client releases what is left.
    if (freed_)
        return;
    without_gil([&] {
        if (auto hold = client_->try_hold())
            vaccel_buffer_free(hold->get(), handle_);
    });
}

CallFailure BufferCore::released() const
{
    return CallFailure::refusal(VACCEL_E_INVALID_ARGUMENT, VACCEL_D_UNKNOWN_HANDLE, handle_, 0,
                                "the buffer was closed (Buffer.close() freed it); allocate a "
                                "new one");
}

void BufferCore::write(const void* data, std::uint64_t bytes, std::uint64_t offset)
{
    auto hold = client_->hold();
    std::shared_lock lock(lifetime_);
    if (freed_)
        throw released();
    check(vaccel_buffer_write(hold.get(), handle_, offset, data, bytes),
          "cannot write " + std::to_string(bytes) + " bytes into the buffer at offset " +
              std::to_string(offset));
}

void BufferCore::read(void* data, std::uint64_t bytes, std::uint64_t offset)
{
    auto hold = client_->hold();
    std::shared_lock lock(lifetime_);
    if (freed_)
        throw released();
    check(vaccel_buffer_read(hold.get(), handle_, offset, data, bytes),
          "cannot read " + std::to_string(bytes) + " bytes from the buffer at offset " +
              std::to_string(offset));
}

void BufferCore::close()
{
    auto hold = client_->try_hold();
    std::unique_lock lock(lifetime_);
    if (freed_ || !hold) {
        freed_ = true;  // a closed client freed it
        return;
    }
    // Views are counted under the shared lock, so none appears meanwhile.
    const std::int64_t live = views_.load();
    if (live > 0)
        throw CallFailure::refusal(
            VACCEL_E_BUSY, VACCEL_D_IN_USE, static_cast<std::uint64_t>(live), 0,
            "cannot close the buffer: " + std::to_string(live) +
                " NumPy arrays, memoryviews or DLPack tensors still view its memory; delete "
                "those views first");
    check(vaccel_buffer_free(hold->get(), handle_), "cannot free the buffer");
    freed_ = true;  // libvaccel unmapped it with the free
    std::lock_guard map_lock(map_mutex_);
    address_ = nullptr;
}

bool BufferCore::closed() const
{
    std::shared_lock lock(lifetime_);
    return freed_ || client_->closed();
}

std::uint64_t BufferCore::bindable_handle() const
{
    std::shared_lock lock(lifetime_);
    if (freed_)
        throw released();
    return handle_;
}

bool BufferCore::mapped() const
{
    std::lock_guard lock(map_mutex_);
    return address_ != nullptr;
}

void BufferCore::require_mappable() const
{
    if (domain_ == VACCEL_DOMAIN_DEVICE)
        throw CallFailure::refusal(VACCEL_E_INCOMPATIBLE, VACCEL_D_DOMAIN, handle_, domain_,
                                   "cannot view the buffer from the host: it lives in device "
                                   "memory; use Buffer.read() and Buffer.write(), or allocate "
                                   "it with domain='host'");
}

void* BufferCore::map_locked(const ClientCore::Hold& hold)
{
    std::lock_guard lock(map_mutex_);
    if (address_ == nullptr) {
        void* address = nullptr;
        check(vaccel_buffer_map(hold.get(), handle_, &address),
              "cannot map the buffer into this process");
        address_ = address;
    }
    return address_;
}

std::uintptr_t BufferCore::address()
{
    require_mappable();
    auto hold = client_->hold();
    std::shared_lock lock(lifetime_);
    if (freed_)
        throw released();
    return reinterpret_cast<std::uintptr_t>(map_locked(hold));
}

std::unique_ptr<BufferCore::ViewToken> BufferCore::view()
{
    require_mappable();
    auto hold = client_->hold();
    std::shared_lock lock(lifetime_);
    if (freed_)
        throw released();
    void* address = map_locked(hold);
    // Counted while the Hold and the shared lock are held: close() of the
    // buffer or of the client sees it.
    return std::make_unique<ViewToken>(shared_from_this(), address);
}

BufferCore::ViewToken::ViewToken(std::shared_ptr<BufferCore> buffer, void* address)
    : buffer_(std::move(buffer)), address_(address)
{
    buffer_->views_.fetch_add(1);
    buffer_->client_->views.fetch_add(1);
}

BufferCore::ViewToken::~ViewToken()
{
    buffer_->views_.fetch_sub(1);
    if (buffer_->client_->views.fetch_sub(1) == 1)
        buffer_->client_->view_released();
}

}  // namespace vaccel::python
