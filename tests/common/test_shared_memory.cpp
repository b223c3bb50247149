// test_shared_memory.cpp - the memory a client can map: sealed at its size,
// and gone from every mapping once it ends (ADR 0024).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "test_support.hpp"
#include "vaccel/common/shared_memory.hpp"

using namespace vaccel;

namespace {

// A client's view: its own descriptor and mapping of the buffer's memfd,
// as BUFFER_MAP hands them out.
struct ClientMapping {
    int fd = -1;
    std::byte* data = nullptr;
    std::size_t bytes = 0;

    ClientMapping(const SharedMemory& memory) : fd(::dup(memory.fd())), bytes(memory.mapped_bytes())
    {
        assert_true(fd >= 0);
        void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        assert_true(at != MAP_FAILED);
        data = static_cast<std::byte*>(at);
    }
    ~ClientMapping()
    {
        ::munmap(data, bytes);
        ::close(fd);
    }
    blkcnt_t blocks() const
    {
        struct stat st{};
        assert_int_equal(::fstat(fd, &st), 0);
        return st.st_blocks;
    }
};

void a_client_cannot_resize_the_memory(void**)
{
    auto memory = SharedMemory::create(3 * 4096, 4096, "test-buffer");
    assert_true(memory.has_value());
    ClientMapping client(*memory);
    assert_int_equal(::ftruncate(client.fd, 0), -1);
    assert_int_equal(errno, EPERM);
    assert_int_equal(::ftruncate(client.fd, 1 << 20), -1);
    assert_int_equal(::fcntl(client.fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
    assert_int_equal(errno, EPERM);
}

void freed_memory_leaves_a_kept_mapping_and_holds_no_page(void**)
{
    ClientMapping* client = nullptr;
    {
        auto memory = SharedMemory::create(64 * 4096, 4096, "test-buffer");
        assert_true(memory.has_value());
        std::memset(memory->data(), 0x5a, memory->mapped_bytes());  // the daemon's writes
        client = new ClientMapping(*memory);
        assert_true(client->blocks() > 0);
        assert_int_equal(static_cast<int>(client->data[4096]), 0x5a);
    }  // freed: the client kept its descriptor and mapping
    // Invariant under test: no page of the freed buffer stays alive through
    // the client's leftovers; what it reads now are fresh zero pages.
    assert_int_equal(client->blocks(), 0);
    assert_int_equal(static_cast<int>(client->data[4096]), 0);
    // Touching the stale mapping makes pages of the client's own.
    client->data[0] = std::byte{1};
    assert_true(client->blocks() > 0);
    delete client;
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(a_client_cannot_resize_the_memory),
        cmocka_unit_test(freed_memory_leaves_a_kept_mapping_and_holds_no_page),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
