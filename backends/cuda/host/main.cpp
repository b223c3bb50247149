// main.cpp - vaccel-cuda-host: one vaccel context's CUDA work, in a process
// of its own (docs/adr/0018-cuda-backend.md, "One process per vaccel context").
//
// Usage: vaccel-cuda-host SOCKET_FD WINDOW_FD UUID [STATE_DIR [FP32_MATH [SLICE_US]]]
// vacceld starts one per context of a CUDA device, with one end of a
// SOCK_SEQPACKET socketpair and the memfd of the transfer window
// (host_protocol.hpp). The host opens the device with that UUID through the
// in-process CUDA backend, creates the context, says hello, then serves the
// daemon's requests in order until the socket closes, and exits. CUDA makes
// a kernel's fault sticky for the whole process, so this process is the
// boundary that keeps one client's fault from every other client: after a
// fault this host refuses everything with the fault, and the others go on.
// Ownership: the tables below own every object by the daemon's id; exit
// releases the device (the driver frees what is left).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "host_protocol.hpp"
#include "vaccel/backend/cuda.hpp"

namespace {

using namespace vaccel;
using namespace vaccel::backend;
using namespace vaccel::backend::cuda::host;

int channel = -1;
std::mutex sending;  // replies (this thread) and completions (the backend's)

void send(const Writer& w)
{
    std::lock_guard lock(sending);
    if (!send_packet(channel, w.bytes())) std::_Exit(0);  // the daemon is gone
}

// Tells the daemon when an event ends (called once, from any thread).
class Completion final : public EventSink {
public:
    explicit Completion(std::uint64_t id) : id_(id) {}
    void completed(const EventStatus& status) noexcept override
    {
        Writer w(Op::completed, id_);
        w.put(static_cast<std::uint32_t>(status.state)).error(status.failure);
        send(w);
    }
    void segment_ended(std::uint32_t index) noexcept override
    {
        Writer w(Op::segment_ended, id_);
        w.put(index);
        send(w);
    }

private:
    std::uint64_t id_;
};

struct Host {
    std::unique_ptr<Backend> device;
    std::unique_ptr<Context> context;
    std::byte* window = nullptr;
    std::map<std::uint64_t, std::unique_ptr<Buffer>> buffers;
    std::map<std::uint64_t, std::unique_ptr<Program>> programs;
    std::map<std::uint64_t, std::unique_ptr<Queue>> queues;
    std::map<std::uint64_t, std::unique_ptr<Gate>> gates;
    std::map<std::uint64_t, std::unique_ptr<Event>> events;
    std::vector<std::byte> payload;  // the program being loaded

    template <class T>
    T* find(std::map<std::uint64_t, std::unique_ptr<T>>& table, std::uint64_t id)
    {
        auto it = table.find(id);
        return it == table.end() ? nullptr : it->second.get();
    }
    Result<std::vector<Binding>> bindings(Reader& r)
    {
        const auto count = r.get<std::uint32_t>();
        std::vector<Binding> out;
        for (std::uint32_t i = 0; i < count && r.ok(); ++i) {
            Binding b;
            b.slot = r.get<std::uint32_t>();
            b.access = r.get<std::uint32_t>();
            b.buffer = find(buffers, r.get<std::uint64_t>());
            b.offset = r.get<std::uint64_t>();
            b.bytes = r.get<std::uint64_t>();
            out.push_back(b);
        }
        return out;
    }
    // Answers request `id` of `op`, whose body `r` holds.
    void serve(Op op, std::uint64_t id, Reader& r);
    // Accepted work the daemon released with its request goes on its stream
    // now, before the reply (its completion may come first; the daemon
    // takes that).
    Result<Submitted> start_if(bool start, Result<Submitted> s)
    {
        if (start && s) (void)start_held(*device, *s->event);
        return s;
    }
};

Error unknown(std::string_view what)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE)
        .with_note(std::string("the CUDA host has no such ") + std::string(what));
}

void reply_error(std::uint64_t id, const Error& e)
{
    Writer w(Op::reply, id);
    w.put(std::uint8_t{0}).error(e);
    send(w);
}

void reply_status(std::uint64_t id, const Status& s)
{
    if (!s) return reply_error(id, s.error());
    Writer w(Op::reply, id);
    w.put(std::uint8_t{1});
    send(w);
}

void reply_submitted(std::uint64_t id, std::uint64_t event, Host& h, Result<Submitted> s)
{
    if (!s) return reply_error(id, s.error());
    Writer w(Op::reply, id);
    w.put(std::uint8_t{1}).put(held_segments(*h.device, *s->event));
    w.put(std::uint8_t{s->indeterminate.has_value()});
    if (s->indeterminate) w.error(*s->indeterminate);
    h.events[event] = std::move(s->event);
    send(w);
}

void Host::serve(Op op, std::uint64_t id, Reader& r)
{
    Backend& d = *device;
    switch (op) {
    case Op::allocate: {
        const auto handle = r.get<std::uint64_t>();
        BufferDesc desc;
        desc.bytes = r.get<std::uint64_t>();
        desc.alignment = r.get<std::uint64_t>();
        desc.domain = r.get<std::uint32_t>();
        desc.usage = r.get<std::uint32_t>();
        desc.access = r.get<std::uint32_t>();
        BufferInfo info;
        auto b = d.allocate_buffer(*context, desc, info);
        if (!b) return reply_error(id, b.error());
        Writer w(Op::reply, id);
        w.put(std::uint8_t{1}).put(info.allocation_bytes).put(info.measured_alignment)
            .put(info.properties).put((*b)->identity());
        buffers[handle] = std::move(*b);
        return send(w);
    }
    case Op::free_buffer: {
        auto it = buffers.find(r.get<std::uint64_t>());
        if (it == buffers.end()) return reply_error(id, unknown("buffer"));
        return reply_status(id, d.free_buffer(it->second));  // reset on success
    }
    case Op::write:
    case Op::read: {
        Buffer* b = find(buffers, r.get<std::uint64_t>());
        const auto offset = r.get<std::uint64_t>();
        const auto length = r.get<std::uint64_t>();
        if (b == nullptr) return reply_error(id, unknown("buffer"));
        if (length > window_bytes) return reply_error(id, unknown("window range"));
        const std::span<std::byte> chunk(window, length);
        return reply_status(id, op == Op::write ? d.write_buffer(*b, offset, chunk)
                                                : d.read_buffer(*b, offset, chunk));
    }
    case Op::payload: {
        const auto length = r.get<std::uint64_t>();
        if (length > window_bytes) return reply_error(id, unknown("window range"));
        payload.insert(payload.end(), window, window + length);
        return reply_status(id, {});
    }
    case Op::load: {
        const auto handle = r.get<std::uint64_t>();
        ProgramDesc desc;
        desc.format = r.get<std::uint32_t>();
        desc.target = r.get<vaccel_tosa_target>();
        desc.memory_budget = r.get<std::uint64_t>();
        desc.payload = payload;
        auto p = d.load_program(*context, desc);
        payload.clear();
        payload.shrink_to_fit();
        if (!p) return reply_error(id, p.error());
        Writer w(Op::reply, id);
        w.put(std::uint8_t{1}).put((*p)->format()).put((*p)->input_count()).put((*p)->device_bytes());
        const auto slots = (*p)->slots();
        w.put(static_cast<std::uint32_t>(slots.size()));
        for (const SlotInfo& s : slots) {
            w.put(s.role).put(s.dtype).put(s.bytes).put(static_cast<std::uint32_t>(s.shape.size()));
            for (auto dim : s.shape) w.put(dim);
            w.text(s.name);
        }
        programs[handle] = std::move(*p);
        return send(w);
    }
    case Op::unload: {
        auto it = programs.find(r.get<std::uint64_t>());
        if (it == programs.end()) return reply_error(id, unknown("program"));
        return reply_status(id, d.unload_program(it->second));
    }
    case Op::queue_create: {
        auto q = d.create_queue(*context);
        if (!q) return reply_error(id, q.error());
        queues[r.get<std::uint64_t>()] = std::move(*q);
        return reply_status(id, {});
    }
    case Op::queue_destroy: {
        auto it = queues.find(r.get<std::uint64_t>());
        if (it == queues.end()) return reply_error(id, unknown("queue"));
        return reply_status(id, d.destroy_queue(it->second));
    }
    case Op::gate_create: {
        auto g = d.create_gate(*context);
        if (!g) return reply_error(id, g.error());
        gates[r.get<std::uint64_t>()] = std::move(*g);
        return reply_status(id, {});
    }
    case Op::gate_raise: {
        Gate* g = find(gates, r.get<std::uint64_t>());
        const auto value = r.get<std::uint64_t>();
        if (g == nullptr) return reply_error(id, unknown("gate"));
        return reply_status(id, d.raise_gate(*g, value));
    }
    case Op::gate_destroy: {
        auto it = gates.find(r.get<std::uint64_t>());
        if (it == gates.end()) return reply_error(id, unknown("gate"));
        return reply_status(id, d.destroy_gate(it->second));
    }
    case Op::submit: {
        SubmitDesc desc;
        const auto event = r.get<std::uint64_t>();
        desc.queue = find(queues, r.get<std::uint64_t>());
        desc.program = find(programs, r.get<std::uint64_t>());
        desc.deadline_ns = r.get<std::uint64_t>();
        const auto gate = r.get<std::uint64_t>();
        desc.after = gate == 0 ? nullptr : find(gates, gate);
        desc.after_value = r.get<std::uint64_t>();
        auto b = bindings(r);
        if (desc.queue == nullptr || desc.program == nullptr || (gate != 0 && desc.after == nullptr))
            return reply_error(id, unknown("queue, program or gate"));
        desc.bindings = *b;
        desc.sink = std::make_shared<Completion>(event);
        return reply_submitted(id, event, *this, start_if(r.get<std::uint8_t>() == 1, d.submit(desc)));
    }
    case Op::launch: {
        LaunchDesc desc;
        const auto event = r.get<std::uint64_t>();
        desc.queue = find(queues, r.get<std::uint64_t>());
        desc.program = find(programs, r.get<std::uint64_t>());
        desc.deadline_ns = r.get<std::uint64_t>();
        desc.dims = r.get<vaccel_launch_dims>();
        const std::string entry = r.text();
        desc.entry = entry;
        const auto argv = r.blob();
        auto b = bindings(r);
        if (desc.queue == nullptr || desc.program == nullptr)
            return reply_error(id, unknown("queue or program"));
        auto args = kernel_args::parse(argv);
        if (!args) return reply_error(id, args.error());
        desc.args = *args;
        desc.bindings = *b;
        desc.sink = std::make_shared<Completion>(event);
        return reply_submitted(id, event, *this, start_if(r.get<std::uint8_t>() == 1, d.launch(desc)));
    }
    case Op::event_destroy: {  // no reply: the daemon only sends it for ended events
        auto it = events.find(r.get<std::uint64_t>());
        if (it != events.end() && d.destroy_event(it->second)) events.erase(it);
        return;
    }
    case Op::release:  // no reply; an event that ended meanwhile is not held
    case Op::end_held: {
        auto it = events.find(r.get<std::uint64_t>());
        if (op == Op::release) {
            if (it != events.end()) (void)start_held(d, *it->second);
            return;
        }
        const auto state = static_cast<EventState>(r.get<std::uint32_t>());
        const Error why = r.error();
        if (it != events.end()) (void)end_held(d, *it->second, state, why);
        return;
    }
    case Op::cancel: {
        const Error why = r.error();
        const std::uint64_t n = d.cancel_pending(*context, why);
        Writer w(Op::reply, id);
        w.put(std::uint8_t{1}).put(n);
        return send(w);
    }
    default:
        return reply_error(id, unknown("request"));
    }
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: vaccel-cuda-host SOCKET_FD WINDOW_FD UUID "
                             "[STATE_DIR [FP32_MATH [SLICE_US]]]\n"
                             "(started by vacceld, one per context of a CUDA device)\n");
        return 2;
    }
    channel = std::atoi(argv[1]);
    const int window_fd = std::atoi(argv[2]);
    const std::string uuid = argv[3];
    Host h;
    void* window = mmap(nullptr, window_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, window_fd, 0);
    if (window == MAP_FAILED) return 1;
    close(window_fd);
    h.window = static_cast<std::byte*>(window);

    CudaOptions options;
    options.isolation = CudaIsolation::none;  // this process is the boundary
    options.hold_starts = true;               // vacceld's scheduler releases each submission
    if (argc > 4 && *argv[4] != '\0') options.state_dir = argv[4];
    if (argc > 5 && std::string_view(argv[5]) == "tf32") options.fp32_math = Fp32Math::tf32;
    options.slice_us = argc > 6 ? static_cast<std::uint32_t>(std::strtoul(argv[6], nullptr, 10)) : 0;
    CudaDevices found = open_cuda_devices(options);
    Error why = Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
                    .with_note("the CUDA host found no device with UUID " + uuid + ": " +
                               found.unavailable);
    for (auto& device : found.devices)
        if (cuda_uuid_text(device->device_info()) == uuid) h.device = std::move(device);
    if (h.device) {
        auto context = h.device->create_context();
        if (context)
            h.context = std::move(*context);
        else
            why = context.error();
    }
    {
        Writer hello(Op::hello);
        hello.put(std::uint8_t{h.context != nullptr});
        if (!h.context) hello.error(why);
        send(hello);
    }
    if (!h.context) return 1;
    while (auto packet = receive_packet(channel)) {
        Reader r(*packet);
        const auto header = r.get<Header>();
        if (!r.ok()) continue;
        h.serve(header.op, header.id, r);
    }
    // The daemon closed the context: the process ends, and with it every
    // object of the context (the driver releases the device's side).
    std::_Exit(0);
}
