// buffer_core.hpp - one vaccel buffer, its mapping and the views into it.
//
// Owns: the buffer handle (freed by close() or by the destructor while the
// client is open), its one mapping (vaccel_buffer_map, on first need), and
// the count of live views (NumPy arrays, memoryviews, DLPack tensors).
// Decides:
//  - a buffer is bytes; its Layout (NumPy typestr and shape) is only how
//    views present them: binding checks bytes, as the contract does;
//  - a view is a ViewToken: while one lives, the buffer is neither freed
//    (close() is refused: Busy, VACCEL_D_IN_USE, arg0 = views, as closing
//    a Python mmap with exported views is) nor unmapped (its client's close
//    waits for the last view), so no view points at unmapped memory;
//  - after close() every call is refused: InvalidArgument,
//    VACCEL_D_UNKNOWN_HANDLE, arg0 = the handle (what libvaccel says of a
//    released handle).
// Locks: lifetime_ (shared: a call; exclusive: close) is taken after the
// client's Hold, never before; map_mutex_ after both.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "client_core.hpp"

namespace vaccel::python {

struct Layout {
    std::string typestr;  // NumPy array-interface type: "<f4", "|i1", "|b1", ...
    std::size_t itemsize = 1;
    std::vector<std::int64_t> shape;
};

// The bytes `layout` describes (itemsize times every extent); a negative
// extent, or a product over 2^64, is refused (InvalidArgument), never
// wrapped around.
std::uint64_t layout_bytes(const Layout& layout);

class BufferCore : public std::enable_shared_from_this<BufferCore> {
public:
    // Allocates `layout`'s bytes in the context of `device` (domain: enum
    // vaccel_domain; usage all, access read-write). Call without the GIL.
    static std::shared_ptr<BufferCore> allocate(std::shared_ptr<ClientCore> client,
                                                std::uint32_t device, std::uint32_t domain,
                                                Layout layout);
    ~BufferCore();
    BufferCore(const BufferCore&) = delete;
    BufferCore& operator=(const BufferCore&) = delete;

    // Calls without the GIL:
    void write(const void* data, std::uint64_t bytes, std::uint64_t offset);
    void read(void* data, std::uint64_t bytes, std::uint64_t offset);
    void close();
    bool closed() const;

    // Keeps the buffer mapped and alive while it lives (see above).
    class ViewToken {
    public:
        ViewToken(std::shared_ptr<BufferCore> buffer, void* address);
        ~ViewToken();
        ViewToken(const ViewToken&) = delete;
        ViewToken& operator=(const ViewToken&) = delete;
        void* address() const { return address_; }
        const BufferCore& buffer() const { return *buffer_; }

    private:
        std::shared_ptr<BufferCore> buffer_;
        void* address_;
    };
    // Maps the buffer (once) and counts a view. Call without the GIL.
    std::unique_ptr<ViewToken> view();
    // The mapped address (mapping it first). Call without the GIL.
    std::uintptr_t address();
    // The handle to bind; refused once the buffer is closed. Call without the GIL.
    std::uint64_t bindable_handle() const;
    // Refuses (Incompatible, VACCEL_D_DOMAIN) a Device-domain buffer, as
    // vaccel_buffer_map() would, without asking the daemon.
    void require_mappable() const;

    const std::shared_ptr<ClientCore>& client() const { return client_; }
    std::uint64_t handle() const { return handle_; }
    std::uint64_t context() const { return context_; }
    std::uint32_t device() const { return device_; }
    std::uint32_t domain() const { return domain_; }
    std::uint64_t nbytes() const { return nbytes_; }
    const Layout& layout() const { return layout_; }
    std::int64_t views() const { return views_.load(); }
    bool mapped() const;

private:
    BufferCore(std::shared_ptr<ClientCore> client, std::uint32_t device, std::uint64_t context,
               std::uint64_t handle, std::uint32_t domain, std::uint64_t nbytes, Layout layout);
    void* map_locked(const ClientCore::Hold& hold);
    CallFailure released() const;

    const std::shared_ptr<ClientCore> client_;
    const std::uint32_t device_;
    const std::uint64_t context_;
    const std::uint64_t handle_;
    const std::uint32_t domain_;
    const std::uint64_t nbytes_;
    const Layout layout_;
    mutable std::shared_mutex lifetime_;  // shared: a call; exclusive: close
    bool freed_ = false;
    mutable std::mutex map_mutex_;
    void* address_ = nullptr;  // the mapping, nullptr until mapped
    std::atomic<std::int64_t> views_{0};
};

}  // namespace vaccel::python
