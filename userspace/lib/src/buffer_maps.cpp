// buffer_maps.cpp - vaccel_buffer_map() and vaccel_buffer_unmap(), and the
// one mmap() every transport that shares memory uses.
//
// Decides: a client maps a buffer at most once (mapping it again returns
// the same address); the client's table of mappings lives in the
// vaccel_client (client.hpp) and is guarded by its own mutex; freeing a
// buffer unmaps it (vaccel_buffer_free in object_calls.cpp calls
// forget_mapping after the daemon agreed).
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "client.hpp"

using namespace vaccel;

namespace vaccel::lib {

int map_shared(int fd, std::uint64_t offset, std::uint64_t bytes, Mapping& mapping,
               vaccel_status& status)
{
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t length = (bytes + page - 1) / page * page;
    void* address = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                           static_cast<off_t>(offset));
    if (address == MAP_FAILED) {
        const int error = errno;
        status = Error::of(error == ENOMEM ? Errc::out_of_memory : Errc::external, VACCEL_D_NONE,
                           length, static_cast<std::uint64_t>(error))
                     .with_note(std::string("mapping the buffer into this process failed: ") +
                                std::strerror(error))
                     .to_status();
        return error_errno(error == ENOMEM ? Errc::out_of_memory : Errc::external);
    }
    mapping = Mapping{address, address, static_cast<std::size_t>(length)};
    return 0;
}

void forget_mapping(vaccel_client* client, std::uint64_t buffer)
{
    Mapping mapping;
    {
        std::lock_guard lock(client->maps_mutex);
        auto found = client->maps.find(buffer);
        if (found == client->maps.end())
            return;
        mapping = found->second;
        client->maps.erase(found);
    }
    if (mapping.length != 0)
        ::munmap(mapping.base, mapping.length);
}

}  // namespace vaccel::lib

extern "C" {

int vaccel_buffer_map(vaccel_client* client, uint64_t buffer, void** address)
{
    if (address == nullptr)
        return lib::record_local(Errc::invalid_argument, "vaccel_buffer_map: address is NULL");
    if (client == nullptr)
        return lib::record_local(Errc::invalid_argument, "vaccel_buffer_map: no client");
    // Held across the request: two threads mapping one buffer get one mapping.
    std::lock_guard lock(client->maps_mutex);
    if (auto found = client->maps.find(buffer); found != client->maps.end()) {
        *address = found->second.address;
        lib::record_status(vaccel_status{});
        return 0;
    }
    struct vaccel_buffer_map args{};
    args.buffer = buffer;
    lib::Mapping mapping;
    const int rc = client->transport->map_buffer(args, mapping);
    lib::record_status(args.status);
    if (rc != 0)
        return rc;
    client->maps.emplace(buffer, mapping);
    *address = mapping.address;
    return 0;
}

int vaccel_buffer_unmap(vaccel_client* client, uint64_t buffer)
{
    if (client == nullptr)
        return lib::record_local(Errc::invalid_argument, "vaccel_buffer_unmap: no client");
    {
        std::lock_guard lock(client->maps_mutex);
        if (!client->maps.contains(buffer))
            return lib::record_local(Errc::invalid_argument,
                                     "vaccel_buffer_unmap: buffer " + std::to_string(buffer) +
                                         " is not mapped in this client; map it with "
                                         "vaccel_buffer_map() first");
    }
    lib::forget_mapping(client, buffer);
    lib::record_status(vaccel_status{});
    return 0;
}

}  // extern "C"
