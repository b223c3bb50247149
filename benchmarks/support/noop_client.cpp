// noop_client.cpp - the no-op program and its client (see noop_client.hpp).
#include "noop_client.hpp"

#include <cstdio>
#include <cstring>

#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::bench {

std::vector<std::uint8_t> noop_program(std::int64_t elements)
{
    tosa::GraphBuilder builder;
    const auto a = builder.tensor("a", {elements}, tosa::DType::fp32);
    const auto b = builder.tensor("b", {elements}, tosa::DType::fp32);
    const auto c = builder.tensor("c", {elements}, tosa::DType::fp32);
    builder.op(tosa::Op::add, {a, b}, {c});
    builder.input(a);
    builder.input(b);
    builder.output(c);
    return tosa::serialize(builder.finish());
}

int report(const char* what, int rc)
{
    std::fprintf(stderr, "%s: %s (%s)\n", what, vaccel_last_error_message(), vaccel_strerror(rc));
    return rc;
}

int allocate(vaccel_client* client, std::uint64_t context, std::uint64_t bytes,
             std::uint64_t* buffer)
{
    struct vaccel_buffer_alloc request{};
    request.context = context;
    request.bytes = bytes;
    request.domain = VACCEL_DOMAIN_HOST;
    request.usage = VACCEL_USAGE_ALL;
    request.access = VACCEL_ACCESS_RW;
    const int rc = vaccel_buffer_alloc(client, &request);
    if (rc != 0) return report("buffer alloc", rc);
    *buffer = request.buffer;
    return 0;
}

bool NoopClient::open(const char* transport, unsigned outputs, const char* driver,
                      const std::vector<std::uint8_t>& kernel, std::int64_t elements)
{
    int rc = vaccel_client_open(transport, &client_);
    if (rc != 0) {
        client_ = nullptr;
        report(transport, rc);
        return false;
    }
    // The first device whose driver field starts with `driver`.
    std::uint32_t count = 0;
    if ((rc = vaccel_device_count(client_, &count)) != 0) return report("device count", rc), false;
    std::uint32_t device = count;
    for (std::uint32_t i = 0; i < count && device == count; ++i) {
        struct vaccel_device_info info{};
        if (vaccel_device_info(client_, i, &info) == 0 &&
            std::strncmp(info.driver, driver, std::strlen(driver)) == 0) {
            device = i;
            device_ = info;
        }
    }
    if (device == count) {
        std::fprintf(stderr, "no device of driver %s among the %u served\n", driver, count);
        return false;
    }
    if ((rc = vaccel_context_create(client_, device, &context_)) != 0)
        return report("context create", rc), false;
    launches_ = !kernel.empty();
    bytes_ = static_cast<std::uint64_t>(elements) * 4;
    const std::vector<std::uint8_t> program = launches_ ? kernel : noop_program(elements);
    if ((rc = vaccel_program_load(client_, context_,
                                  launches_ ? VACCEL_FORMAT_CUDA_PTX : VACCEL_FORMAT_TOSA, nullptr,
                                  program.data(), program.size(), &program_, nullptr, nullptr)) != 0)
        return report("program load", rc), false;
    if ((rc = vaccel_queue_create(client_, context_, &queue_)) != 0)
        return report("queue create", rc), false;
    const float one = 1.0f, two = 2.0f;
    if (allocate(client_, context_, bytes_, &a_) != 0 ||
        allocate(client_, context_, bytes_, &b_) != 0)
        return false;
    if ((rc = vaccel_buffer_write(client_, a_, 0, &one, 4)) != 0 ||
        (rc = vaccel_buffer_write(client_, b_, 0, &two, 4)) != 0)
        return report("buffer write", rc), false;
    outputs_.resize(outputs);
    for (std::uint64_t& output : outputs_)
        if (allocate(client_, context_, bytes_, &output) != 0) return false;
    return true;
}

void NoopClient::close()
{
    // vaccel_client_close releases every object the session still owns.
    vaccel_client_close(client_);
    client_ = nullptr;
    outputs_.clear();
}

int NoopClient::submit(unsigned output, std::uint64_t* event)
{
    if (launches_) {
        const vaccel_launch_dims dims{.grid = {1, 1, 1}, .block = {1, 1, 1}, .shared_bytes = 0,
                                      .flags = 0};
        const int rc = vaccel_launch(client_, queue_, program_, "noop", &dims, nullptr, 0,
                                     nullptr, 0, 0, event);
        return rc == 0 ? 0 : report("launch", rc);
    }
    const auto bindings = bind(output);
    const int rc = vaccel_submit(client_, queue_, program_, bindings.data(), 3, 0, event);
    return rc == 0 ? 0 : report("submit", rc);
}

int NoopClient::run(unsigned output)
{
    const auto bindings = bind(output);
    struct vaccel_status failure{};
    const int rc = vaccel_run(client_, queue_, program_, bindings.data(), 3, 0, &failure);
    return rc == 0 ? 0 : report("run", rc);
}

std::array<vaccel_binding, 3> NoopClient::bind(unsigned output) const
{
    return {{
        {.slot = 0, .access = VACCEL_ACCESS_READ, .buffer = a_, .offset = 0, .bytes = bytes_},
        {.slot = 1, .access = VACCEL_ACCESS_READ, .buffer = b_, .offset = 0, .bytes = bytes_},
        {.slot = 2, .access = VACCEL_ACCESS_WRITE, .buffer = outputs_[output], .offset = 0,
         .bytes = bytes_},
    }};
}

int NoopClient::wait(std::uint64_t event)
{
    const int rc = vaccel_event_wait(client_, &event, 1, VACCEL_WAIT_ALL,
                                     vaccel_deadline_after_ns(1'000'000'000), nullptr);
    return rc == 0 ? 0 : report("event wait", rc);
}

int NoopClient::destroy(std::uint64_t event)
{
    const int rc = vaccel_event_destroy(client_, event);
    return rc == 0 ? 0 : report("event destroy", rc);
}

}  // namespace vaccel::bench
