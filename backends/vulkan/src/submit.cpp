// submit.cpp - recording, submission and completion of programs (submit.hpp).
#include "submit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "gate.hpp"
#include "kernels.hpp"
#include "lowering.hpp"
#include "lowering_conv.hpp"
#include "lowering_matmul.hpp"
#include "scheduler.hpp"
#include "transfer.hpp"

namespace vaccel::backend::vulkan {

std::uint64_t monotonic_ns()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(now.tv_nsec);
}

namespace {

void memory_barrier(VkCommandBuffer commands, VkPipelineStageFlags2 src_stage,
                    VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage,
                    VkAccessFlags2 dst_access)
{
    VkMemoryBarrier2 barrier{};
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2;
    barrier.srcStageMask = src_stage;
    barrier.srcAccessMask = src_access;
    barrier.dstStageMask = dst_stage;
    barrier.dstAccessMask = dst_access;
    VkDependencyInfo dependency{};
    dependency.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO;
    dependency.memoryBarrierCount = 1;
    dependency.pMemoryBarriers = &barrier;
    vkCmdPipelineBarrier2(commands, &dependency);
}

constexpr VkAccessFlags2 shader_rw =
    VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;

VkCommandBuffer segment_commands(SubmissionState& s, std::uint32_t segment)
{
    return s.context->ring->slot(*s.slot).commands[segment];
}

void write_timestamp(SubmissionState& s, VkCommandBuffer commands, std::uint32_t query)
{
    const VkQueryPool pool = s.context->ring->slot(*s.slot).timestamps;
    // After everything before it on the queue: a segment's start is the
    // previous one's end, so the pair measures this segment alone.
    if (pool != VK_NULL_HANDLE)
        vkCmdWriteTimestamp2(commands, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool, query);
}

Status begin_recording(SubmissionState& s, std::uint32_t segment)
{
    VkCommandBuffer commands = segment_commands(s, segment);
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (VkResult r = vkBeginCommandBuffer(commands, &begin); r != VK_SUCCESS)
        return fail(vulkan_error(*s.context->device, r, "recording a program"));
    if (const VkQueryPool pool = s.context->ring->slot(*s.slot).timestamps; pool != VK_NULL_HANDLE)
        vkCmdResetQueryPool(commands, pool, 2 * segment, 2);
    // Earlier submissions on the queue (and this one's earlier segments)
    // may still use the arena or these buffers; transfers may have written
    // them.
    memory_barrier(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_COPY_BIT,
                   shader_rw | VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                   shader_rw);
    write_timestamp(s, commands, 2 * segment);
    return {};
}

Status end_recording(SubmissionState& s, std::uint32_t segment)
{
    VkCommandBuffer commands = segment_commands(s, segment);
    memory_barrier(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, shader_rw,
                   VK_PIPELINE_STAGE_2_HOST_BIT | VK_PIPELINE_STAGE_2_COPY_BIT,
                   VK_ACCESS_2_HOST_READ_BIT | VK_ACCESS_2_TRANSFER_READ_BIT |
                       VK_ACCESS_2_TRANSFER_WRITE_BIT);
    write_timestamp(s, commands, 2 * segment + 1);
    if (VkResult r = vkEndCommandBuffer(commands); r != VK_SUCCESS)
        return fail(vulkan_error(*s.context->device, r, "recording a program"));
    return {};
}

// A kernel launch: set 0 holds the pointer arguments' buffers in argv
// order, the push constants the scalars; one dispatch of the grid.
Status record_launch(SubmissionState& s)
{
    DeviceCore& core = *s.context->device;
    const LaunchRecord& launch = *s.launch;
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (!launch.buffers.empty()) {
        VkDescriptorSetAllocateInfo allocate{};
        allocate.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
        allocate.descriptorPool = s.context->ring->slot(*s.slot).descriptors;
        allocate.descriptorSetCount = 1;
        allocate.pSetLayouts = &launch.kernel.set_layout;
        if (VkResult r = vkAllocateDescriptorSets(core.device, &allocate, &set); r != VK_SUCCESS)
            return fail(vulkan_error(core, r, "allocating a descriptor set"));
        std::vector<VkWriteDescriptorSet> writes(launch.buffers.size());
        for (std::uint32_t i = 0; i < writes.size(); ++i) {
            writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
            writes[i].dstSet = set;
            writes[i].dstBinding = i;
            writes[i].descriptorCount = 1;
            writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            writes[i].pBufferInfo = &launch.buffers[i];
        }
        vkUpdateDescriptorSets(core.device, static_cast<std::uint32_t>(writes.size()),
                               writes.data(), 0, nullptr);
    }
    if (auto ok = begin_recording(s, 0); !ok) return ok;
    VkCommandBuffer commands = segment_commands(s, 0);
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, launch.kernel.pipeline);
    if (set != VK_NULL_HANDLE)
        vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, launch.kernel.layout, 0,
                                1, &set, 0, nullptr);
    if (!launch.push.empty())
        vkCmdPushConstants(commands, launch.kernel.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           static_cast<std::uint32_t>(launch.push.size()), launch.push.data());
    vkCmdDispatch(commands, launch.grid[0], launch.grid[1], launch.grid[2]);
    return end_recording(s, 0);
}

bool tile_loop(std::uint32_t kernel)
{
    return kernel == static_cast<std::uint32_t>(KernelId::matmul_tiled) ||
           kernel == static_cast<std::uint32_t>(KernelId::matmul_rows) ||
           kernel == static_cast<std::uint32_t>(KernelId::matmul_coop) ||
           kernel == static_cast<std::uint32_t>(VulkanKernelId::conv2d_gemm);
}

// The segments of this run: the program's own once profiled; else all in
// one, and the first such run takes the profile.
std::vector<Segment> segments_of(SubmissionState& s, ProgramState& program)
{
    if (program.profile.load(std::memory_order_acquire) == ProgramState::measured) {
        s.cut = program.cut.load(std::memory_order_acquire);
        return s.cut->segments;
    }
    int expected = ProgramState::unmeasured;
    if (program.profile_queries != VK_NULL_HANDLE && s.context->device->slice_bound_ns != 0 &&
        program.profile.compare_exchange_strong(expected, ProgramState::measuring,
                                                std::memory_order_acq_rel))
        s.profiling = true;
    return whole_run(program.plan.dispatches.size());
}

Status record(SubmissionState& s, std::span<const BoundSlot> slots)
{
    if (s.launch) return record_launch(s);
    DeviceCore& core = *s.context->device;
    const ProgramState& program = *s.program;
    const std::uint32_t count = program.plan.buffer_count();
    std::vector<VkDescriptorBufferInfo> infos;
    for (const BoundSlot& slot : slots)
        infos.push_back({slot.buffer->buffer, slot.offset, VK_WHOLE_SIZE});
    if (program.plan.arena_bytes != 0) infos.push_back({program.arena, 0, VK_WHOLE_SIZE});

    // The slot's pool holds one set of up to tuning's descriptor count
    // (program.cpp refuses larger programs at load); reset with the slot.
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (count != 0) {
        VkDescriptorSetAllocateInfo allocate{};
        allocate.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
        allocate.descriptorPool = s.context->ring->slot(*s.slot).descriptors;
        allocate.descriptorSetCount = 1;
        allocate.pSetLayouts = &program.set_layout;
        if (VkResult r = vkAllocateDescriptorSets(core.device, &allocate, &set); r != VK_SUCCESS)
            return fail(vulkan_error(core, r, "allocating a descriptor set"));
        VkWriteDescriptorSet write{};
        write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        write.dstSet = set;
        write.dstBinding = 0;
        write.descriptorCount = count;
        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        write.pBufferInfo = infos.data();
        vkUpdateDescriptorSets(core.device, 1, &write, 0, nullptr);
    }

    const std::vector<Segment> segments = segments_of(s, const_cast<ProgramState&>(program));
    const auto count_segments = static_cast<std::uint32_t>(segments.size());
    if (auto grown = s.context->ring->grow(*s.slot, count_segments); !grown)
        return fail(grown.error());
    s.context->ring->slot(*s.slot).used = count_segments;
    s.segments = count_segments;
    const std::uint64_t width = core.tuning.workgroup_size;
    for (std::uint32_t segment = 0; segment < count_segments; ++segment) {
        if (auto ok = begin_recording(s, segment); !ok) return ok;
        VkCommandBuffer commands = segment_commands(s, segment);
        if (count != 0)
            vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, program.layout, 0, 1,
                                    &set, 0, nullptr);
        if (s.profiling) {
            vkCmdResetQueryPool(commands, program.profile_queries, 0,
                                static_cast<std::uint32_t>(program.plan.dispatches.size() + 1));
            vkCmdWriteTimestamp2(commands, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                                 program.profile_queries, 0);
        }
        VkPipeline bound = VK_NULL_HANDLE;
        const Segment& pieces = segments[segment];
        for (std::size_t p = 0; p < pieces.size(); ++p) {
            const std::size_t i = pieces[p].dispatch;
            const tosa::Dispatch& dispatch = program.plan.dispatches[i];
            // A segment's first dispatch is ordered by the segment's own
            // opening barrier.
            if (dispatch.barrier_before && p != 0)
                memory_barrier(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, shader_rw,
                               VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, shader_rw);
            if (dispatch.kernel.work != 0) {
                VkPipeline pipeline = program.pipelines[program.dispatch_pipeline[i]];
                if (pipeline != bound) {
                    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
                    bound = pipeline;
                }
                // The grid is capped (tuning.hpp) and the kernels loop over
                // the rest; a tile-loop kernel covers the piece's tiles.
                std::uint64_t groups = (dispatch.kernel.work + width - 1) / width;
                if (tile_loop(dispatch.kernel.kernel)) {
                    // slice.glsl's block: tiles, then k in elements.
                    const Piece& piece = pieces[p];
                    const std::uint32_t step = matmul_k_step(dispatch.kernel);
                    const std::array<std::uint32_t, 4> range{piece.first, piece.end,
                                                             piece.k_first * step,
                                                             piece.k_end * step};
                    vkCmdPushConstants(commands, program.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                       sizeof range, range.data());
                    if (range[1] != 0) groups = range[1] - range[0];
                }
                groups = std::min<std::uint64_t>(core.tuning.max_groups, groups);
                vkCmdDispatch(commands, static_cast<std::uint32_t>(groups), 1, 1);
            }
            if (s.profiling)
                vkCmdWriteTimestamp2(commands, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                                     program.profile_queries, static_cast<std::uint32_t>(i + 1));
        }
        if (auto ok = end_recording(s, segment); !ok) return ok;
    }
    return {};
}

}  // namespace

SubmissionState::~SubmissionState() { release(); }

void SubmissionState::release()
{
    if (released) return;
    released = true;
    for (const Held& h : held) {
        if (h.writes) h.buffer->writers.fetch_sub(1, std::memory_order_acq_rel);
        h.buffer->submissions.fetch_sub(1, std::memory_order_acq_rel);
    }
    held.clear();
    if (program) program->in_flight.fetch_sub(1, std::memory_order_acq_rel);
    // Done with the gate's semaphore: ended, or its fence has signalled.
    gate.reset();
    if (slot) {
        if (on_device())
            context->ring->retire(*slot);
        else
            context->ring->give_back(*slot);
        slot.reset();
    }
}

VulkanEvent::VulkanEvent(std::shared_ptr<SubmissionState> s) : submission(std::move(s))
{
    submission->context->events.fetch_add(1);
    submission->context->device->counters.events.fetch_add(1);
}

VulkanEvent::~VulkanEvent()
{
    submission->context->events.fetch_sub(1);
    submission->context->device->counters.events.fetch_sub(1);
}

Result<std::shared_ptr<SubmissionState>> record_only(
    std::shared_ptr<ContextState> context, std::shared_ptr<ProgramState> program,
    std::span<const BoundSlot> slots, std::shared_ptr<EventSink> sink,
    std::optional<LaunchRecord> launch)
{
    auto taken = context->ring->take();
    if (!taken) return fail(ring_full_error());
    auto s = std::make_shared<SubmissionState>();
    s->context = context;
    s->slot = *taken;
    s->launch = std::move(launch);
    s->sink = std::move(sink);
    s->program = program;
    program->in_flight.fetch_add(1, std::memory_order_acq_rel);
    for (const BoundSlot& slot : slots) {
        slot.buffer->submissions.fetch_add(1, std::memory_order_acq_rel);
        if (slot.writes) slot.buffer->writers.fetch_add(1, std::memory_order_acq_rel);
        s->held.push_back({slot.buffer, slot.writes});
    }
    // On any refusal below `s` dies here and release() gives everything back.
    if (auto ok = record(*s, slots); !ok) return fail(ok.error());
    s->dispatched_at.assign(s->segments, 0);
    s->used_ns.assign(s->segments, 0);
    s->entries.assign(s->segments, 0);
    return s;
}

Status submit_recorded(SubmissionState& s, std::uint64_t deadline_ns, std::uint32_t segment)
{
    DeviceCore& core = *s.context->device;
    const RingSlot& slot = s.context->ring->slot(*s.slot);
    VkCommandBufferSubmitInfo command{};
    command.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO;
    command.commandBuffer = slot.commands[segment];
    VkSemaphoreSubmitInfo wait{};
    wait.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO;
    VkSubmitInfo2 submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2;
    submit.commandBufferInfoCount = 1;
    submit.pCommandBufferInfos = &command;
    if (s.gate && segment == 0) {
        wait.semaphore = s.gate->semaphore;
        wait.value = s.after_value;
        wait.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        submit.waitSemaphoreInfoCount = 1;
        submit.pWaitSemaphoreInfos = &wait;
    }
    // The deadline is checked last before the work reaches the device, as
    // the CPU checks it before running: past it, nothing is submitted.
    if (deadline_ns != 0 && monotonic_ns() >= deadline_ns)
        return fail(Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                        .with_note("the deadline had passed before the work reached the device; "
                                   "nothing ran; submit again with a later deadline"));
    VkResult submitted;
    {
        std::lock_guard lock(core.queue_mutex);
        submitted = vkQueueSubmit2(core.queue, 1, &submit, slot.fences[segment]);
    }
    if (submitted != VK_SUCCESS) return fail(vulkan_error(core, submitted, "submitting a program"));
    return {};
}

Completer::Completer(std::shared_ptr<DeviceCore> core)
    : core_(std::move(core)), thread_([this] { run(); })
{
}

Completer::~Completer()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void Completer::watch(std::shared_ptr<SubmissionState> submission, std::uint32_t segment)
{
    {
        std::lock_guard lock(mutex_);
        pending_.push_back({std::move(submission), segment});
    }
    wake_.notify_all();
}

std::optional<std::uint64_t> Completer::measured_ns(SubmissionState& submission,
                                                    std::uint32_t segment)
{
    const VkQueryPool pool = submission.context->ring->slot(*submission.slot).timestamps;
    if (pool == VK_NULL_HANDLE) return std::nullopt;
    std::array<std::uint64_t, 2> ticks{};
    if (vkGetQueryPoolResults(core_->device, pool, 2 * segment, 2, sizeof ticks, ticks.data(),
                              sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT) != VK_SUCCESS)
        return std::nullopt;
    const std::uint64_t elapsed = (ticks[1] - ticks[0]) & core_->timestamp_mask;
    return static_cast<std::uint64_t>(static_cast<double>(elapsed) * core_->timestamp_period);
}

void Completer::end_unstarted(SubmissionState& submission, EventState state, Error failure)
{
    finish(submission, state, std::move(failure));
}

// A completed run may lower the caps of a cut that cost too much
// (halve_costly_cuts), and the program is cut again.
void adapt_cut(DeviceCore& core, SubmissionState& s)
{
    ProgramState& program = *s.program;
    std::lock_guard lock(program.cut_mutex);
    if (program.cut.load(std::memory_order_acquire) != s.cut) return;  // already replaced
    if (halve_costly_cuts(*s.cut, s.used_ns, program.costs))
        program.cut.store(std::make_shared<const Cut>(
                              cut_segments(program.costs, core.slice_bound_ns, max_segments)),
                          std::memory_order_release);
}

// The profiling run's timestamps become the program's cut; a run that did
// not complete leaves the profile to a later one. A later completed run
// may adapt the cut (adapt_cut).
void settle_profile(DeviceCore& core, SubmissionState& s, bool completed)
{
    if (s.cut && completed) adapt_cut(core, s);
    if (!s.profiling) return;
    s.profiling = false;
    ProgramState& program = *s.program;
    const std::size_t dispatches = program.plan.dispatches.size();
    std::vector<std::uint64_t> ticks(dispatches + 1);
    if (!completed ||
        vkGetQueryPoolResults(core.device, program.profile_queries, 0,
                              static_cast<std::uint32_t>(ticks.size()),
                              ticks.size() * sizeof(std::uint64_t), ticks.data(),
                              sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT) != VK_SUCCESS) {
        program.profile.store(ProgramState::unmeasured, std::memory_order_release);
        return;
    }
    std::lock_guard lock(program.cut_mutex);
    program.costs.assign(dispatches, DispatchCost{});
    const std::uint64_t width = core.tuning.workgroup_size;
    for (std::size_t i = 0; i < dispatches; ++i) {
        const auto elapsed = static_cast<double>((ticks[i + 1] - ticks[i]) & core.timestamp_mask);
        const tosa::KernelSpec& kernel = program.plan.dispatches[i].kernel;
        program.costs[i].ns = static_cast<std::uint64_t>(elapsed * core.timestamp_period);
        if (tile_loop(kernel.kernel))
            program.costs[i].tiles = static_cast<std::uint32_t>(
                std::min<std::uint64_t>(UINT32_MAX, (kernel.work + width - 1) / width));
        if (const std::uint32_t step = matmul_k_step(kernel); step != 0)
            program.costs[i].k_steps = (kernel.spec[2] + step - 1) / step;  // spec[2]: C
    }
    program.cut.store(std::make_shared<const Cut>(
                          cut_segments(program.costs, core.slice_bound_ns, max_segments)),
                      std::memory_order_release);
    program.profile.store(ProgramState::measured, std::memory_order_release);
}

void Completer::finish(SubmissionState& submission, EventState state, Error failure,
                       std::shared_ptr<SubmissionState> reference)
{
    settle_profile(*core_, submission, state == EventState::complete);
    submission.failure = std::move(failure);
    submission.release();
    auto sink = std::move(submission.sink);
    core_->counters.events_in_flight.fetch_sub(1);
    EventStatus status;
    status.state = state;
    status.failure = submission.failure;
    submission.state.store(static_cast<std::uint32_t>(state), std::memory_order_release);
    reference.reset();  // `submission` may be gone from here on
    sink->completed(status);
}

// Fences signal in queue order on the one queue (the scheduler puts every
// segment there), so waiting for the oldest first never delays a report by
// more than one poll interval.
void Completer::run()
{
    constexpr std::uint64_t poll_ns = 50'000'000;
    for (;;) {
        Pending next;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
            if (pending_.empty()) return;  // stopping, nothing left
            next = pending_.front();
        }
        SubmissionState& submission = *next.submission;
        const VkFence fence = submission.context->ring->slot(*submission.slot).fences[next.segment];
        const VkResult r = core_->lost.load(std::memory_order_acquire)
                               ? VK_ERROR_DEVICE_LOST
                               : vkWaitForFences(core_->device, 1, &fence, VK_TRUE, poll_ns);
        if (r == VK_TIMEOUT) continue;
        {
            std::lock_guard lock(mutex_);
            pending_.pop_front();
            current_ = &submission;
        }
        if (r == VK_SUCCESS) {
            // Its fence signalled: once the last has, the slot may be reset.
            const Scheduler::Verdict verdict = scheduler_->ended(
                submission, next.segment, true, measured_ns(submission, next.segment));
            if (verdict.finish && verdict.failure)
                finish(submission, EventState::failed, *verdict.failure,
                       std::move(next.submission));
            else if (verdict.finish)
                finish(submission, EventState::complete, {}, std::move(next.submission));
        } else {
            core_->lost.store(true, std::memory_order_release);
            const Scheduler::Verdict verdict =
                scheduler_->ended(submission, next.segment, false, std::nullopt);
            if (verdict.finish)
                finish(submission, EventState::failed,
                       Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
                           .with_note(fmt::format("the Vulkan device \"{}\" was lost while "
                                                  "running this work (VkResult {}); its outputs "
                                                  "are undefined",
                                                  core_->info.name, static_cast<int>(r))),
                       std::move(next.submission));
        }
        next.submission.reset();
        {
            std::lock_guard lock(mutex_);
            current_ = nullptr;
        }
        idle_.notify_all();
    }
}

void Completer::forget(const SubmissionState* submission)
{
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return current_ != submission; });
}

}  // namespace vaccel::backend::vulkan
