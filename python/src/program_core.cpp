// program_core.cpp - loading, describing, running and unloading a program.
//
// Owns: the libvaccel calls of one program and its lanes, by the rules in
// program_core.hpp (the same sequence as tools/vaccelctl/src/run_cmd.cpp:
// context, queue, load, slots, one buffer per slot, write, vaccel_run, read).
#include "program_core.hpp"

#include <cstring>

#include "buffer_core.hpp"
#include "gil.hpp"
#include "queue_pool.hpp"

namespace vaccel::python {

namespace {

// vaccelctl run's rule: device-local memory first, then shared, then host.
std::uint32_t staging_domain_for(std::uint32_t memory_caps)
{
    if (memory_caps & VACCEL_MEM_DEVICE_LOCAL)
        return VACCEL_DOMAIN_DEVICE;
    if (memory_caps & VACCEL_MEM_SHARED)
        return VACCEL_DOMAIN_SHARED;
    return VACCEL_DOMAIN_HOST;
}

std::string bounded_name(const char (&name)[VACCEL_NAME_LEN])
{
    std::size_t length = 0;
    while (length < VACCEL_NAME_LEN && name[length] != '\0')
        ++length;
    return std::string(name, length);
}

}  // namespace

// A lane taken for one run and given back on every path out of it.
class ProgramCore::LaneLease {
public:
    explicit LaneLease(ProgramCore& program) : program_(program), lane_(program.take_lane()) {}
    ~LaneLease() { program_.give_back(lane_); }
    LaneLease(const LaneLease&) = delete;
    LaneLease& operator=(const LaneLease&) = delete;
    Lane& lane() { return lane_; }

private:
    ProgramCore& program_;
    Lane& lane_;
};

ProgramCore::ProgramCore(std::shared_ptr<ClientCore> client, std::uint32_t device,
                         std::uint64_t context, std::uint32_t staging_domain)
    : client_(std::move(client)),
      device_(device),
      context_(context),
      staging_domain_(staging_domain)
{
}

std::shared_ptr<ProgramCore> ProgramCore::load(std::shared_ptr<ClientCore> client,
                                               std::uint32_t device, const void* payload,
                                               std::size_t bytes)
{
    auto hold = client->hold();
    const std::string where = "device " + std::to_string(device);
    struct vaccel_device_info info{};
    check(vaccel_device_info(hold.get(), device, &info), "cannot query " + where);
    const std::uint64_t context = client->context(hold, device);
    std::uint64_t handle = 0;
    std::uint32_t inputs = 0, outputs = 0;
    check(vaccel_program_load(hold.get(), context, VACCEL_FORMAT_TOSA, nullptr, payload, bytes,
                              &handle, &inputs, &outputs),
          "cannot load the program on " + where + " (" + bounded_name(info.name) + ")");
    // The ProgramCore is made only once everything is known, so no failure
    // here destroys one (whose destructor would take a Hold of its own).
    std::vector<SlotInfo> slots;
    for (std::uint32_t slot = 0; slot < inputs + outputs; ++slot) {
        struct vaccel_program_slot got{};
        const int rc = vaccel_program_slot(hold.get(), handle, slot, &got);
        if (rc < 0) {
            auto refused = CallFailure::last_call(
                rc, "cannot describe slot " + std::to_string(slot) + " of the program");
            vaccel_program_unload(hold.get(), handle);
            throw refused;
        }
        SlotInfo described;
        described.slot = slot;
        described.role = got.role;
        described.dtype = got.dtype;
        const std::uint32_t rank = got.rank < VACCEL_MAX_RANK ? got.rank : VACCEL_MAX_RANK;
        described.shape.assign(got.shape, got.shape + rank);
        described.bytes = got.bytes;
        described.name = bounded_name(got.name);
        slots.push_back(std::move(described));
    }
    std::shared_ptr<ProgramCore> program(
        new ProgramCore(client, device, context, staging_domain_for(info.memory_caps)));
    program->handle_ = handle;
    program->input_count_ = inputs;
    program->slots_ = std::move(slots);
    return program;
}

ProgramCore::~ProgramCore()
{
    // No run is in progress (each runner keeps this alive). A closed client
    // released everything already; refusals here have nobody to tell.
    if (unloaded_)
        return;
    without_gil([&] {
        if (auto hold = client_->try_hold())
            release_all(*hold);
    });
}

void ProgramCore::release_all(const ClientCore::Hold& hold)
{
    for (auto& lane : lanes_) {
        for (const Staging& staging : lane->staging)
            if (staging.buffer != 0)
                vaccel_buffer_free(hold.get(), staging.buffer);  // unmaps it too
    }
    lanes_.clear();
    idle_.clear();
    if (handle_ != 0)
        vaccel_program_unload(hold.get(), handle_);
    unloaded_ = true;
}

void ProgramCore::close()
{
    auto hold = client_->try_hold();
    std::unique_lock lock(lifetime_);  // waits for runs in progress
    if (unloaded_)
        return;
    std::lock_guard lanes_lock(lanes_mutex_);
    if (!hold) {
        unloaded_ = true;  // a closed client unloaded it
        lanes_.clear();
        idle_.clear();
        return;
    }
    release_all(*hold);
}

bool ProgramCore::closed() const
{
    std::shared_lock lock(lifetime_);
    return unloaded_ || client_->closed();
}

std::size_t ProgramCore::lanes() const
{
    std::lock_guard lock(lanes_mutex_);
    return lanes_.size();
}

CallFailure ProgramCore::released() const
{
    return CallFailure::refusal(VACCEL_E_INVALID_ARGUMENT, VACCEL_D_UNKNOWN_HANDLE, handle_, 0,
                                "the program was closed (Program.close() unloaded it); load "
                                "it again");
}

std::string ProgramCore::slot_text(std::uint32_t slot) const
{
    const SlotInfo& info = slots_[slot];
    return std::string(slot < input_count_ ? "input" : "output") + " '" + info.name +
           "' (slot " + std::to_string(slot) + ")";
}

ProgramCore::Lane& ProgramCore::take_lane()
{
    std::lock_guard lock(lanes_mutex_);
    if (!idle_.empty()) {
        Lane* lane = idle_.back();
        idle_.pop_back();
        return *lane;
    }
    auto lane = std::make_unique<Lane>();
    lane->staging.assign(slots_.size(), Staging{});
    lanes_.push_back(std::move(lane));
    return *lanes_.back();
}

void ProgramCore::give_back(Lane& lane)
{
    std::lock_guard lock(lanes_mutex_);
    idle_.push_back(&lane);
}

const ProgramCore::Staging& ProgramCore::staging(const ClientCore::Hold& hold, Lane& lane,
                                                 std::uint32_t slot)
{
    // The lane is this run's alone: its staging entries need no lock.
    Staging& staging = lane.staging[slot];
    if (staging.buffer != 0)
        return staging;
    const bool input = slot < input_count_;
    struct vaccel_buffer_alloc request{};
    request.context = context_;
    request.bytes = slots_[slot].bytes;
    request.domain = staging_domain_;
    request.usage =
        VACCEL_USAGE_STORAGE | (input ? VACCEL_USAGE_TRANSFER_DST : VACCEL_USAGE_TRANSFER_SRC);
    request.access = input ? VACCEL_ACCESS_READ : VACCEL_ACCESS_WRITE;
    check(vaccel_buffer_alloc(hold.get(), &request),
          "cannot allocate " + std::to_string(request.bytes) + " bytes for " + slot_text(slot));
    staging.buffer = request.buffer;
    // A refused map (a device whose memory cannot be mapped) leaves the
    // buffer to write and read; the refusal is no error of the run.
    void* address = nullptr;
    if (staging_domain_ != VACCEL_DOMAIN_DEVICE &&
        vaccel_buffer_map(hold.get(), staging.buffer, &address) == 0)
        staging.mapped = address;
    return staging;
}

void ProgramCore::run(const std::vector<SlotSource>& sources)
{
    auto hold = client_->hold();
    std::shared_lock lock(lifetime_);
    if (unloaded_)
        throw released();
    if (sources.size() != slots_.size())
        throw CallFailure::refusal(VACCEL_E_INVALID_ARGUMENT, VACCEL_D_BINDING_MISSING,
                                   sources.size(), slots_.size(),
                                   "cannot run the program: it has " +
                                       std::to_string(slots_.size()) + " slots and " +
                                       std::to_string(sources.size()) + " were bound");
    LaneLease lease(*this);
    Lane& lane = lease.lane();
    std::vector<vaccel_binding> bindings(slots_.size());
    for (std::uint32_t slot = 0; slot < slots_.size(); ++slot) {
        const SlotSource& source = sources[slot];
        const bool input = slot < input_count_;
        vaccel_binding& binding = bindings[slot];
        binding.slot = slot;
        binding.access = input ? VACCEL_ACCESS_READ : VACCEL_ACCESS_WRITE;
        binding.bytes = slots_[slot].bytes;
        if (source.buffer != nullptr) {
            // Handles mean something only in their own session: another
            // client's handle could name a buffer of this one.
            if (source.buffer->client() != client_)
                throw CallFailure::refusal(
                    VACCEL_E_INVALID_ARGUMENT, VACCEL_D_BINDING_CONTEXT, slot, 0,
                    "cannot run the program: the Buffer bound to " + slot_text(slot) +
                        " belongs to another vaccel.Client; allocate it through this "
                        "program's client (Program.buffer())");
            binding.buffer = source.buffer->bindable_handle();
            continue;
        }
        const Staging& staged = staging(hold, lane, slot);
        binding.buffer = staged.buffer;
        if (input && staged.mapped != nullptr)
            std::memcpy(staged.mapped, source.input, binding.bytes);
        else if (input)
            check(vaccel_buffer_write(hold.get(), binding.buffer, 0, source.input, binding.bytes),
                  "cannot write " + slot_text(slot) + " to the device");
    }
    QueueLease queue(client_->queues(), hold, context_);
    vaccel_status failure{};
    const int rc = vaccel_run(hold.get(), queue.queue(), handle_, bindings.data(),
                              static_cast<std::uint32_t>(bindings.size()), 0, &failure);
    if (rc < 0 && failure.error != VACCEL_OK)
        throw CallFailure::work_failed(rc, failure,
                                       failure.error == VACCEL_E_CANCELLED
                                           ? "the run was cancelled"
                                           : "the run failed on device " + std::to_string(device_));
    check(rc, "the device refused the run");
    for (std::uint32_t slot = input_count_; slot < slots_.size(); ++slot) {
        if (sources[slot].buffer != nullptr)
            continue;
        if (void* mapped = lane.staging[slot].mapped)
            std::memcpy(sources[slot].output, mapped, bindings[slot].bytes);
        else
            check(vaccel_buffer_read(hold.get(), bindings[slot].buffer, 0, sources[slot].output,
                                     bindings[slot].bytes),
                  "cannot read " + slot_text(slot) + " from the device");
    }
}

}  // namespace vaccel::python
