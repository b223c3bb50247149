// handles.cpp - the process-wide table tag counter and kind names.
#include "vaccel/common/handles.hpp"

#include <atomic>

namespace vaccel {

namespace handle_bits {
std::uint32_t next_table_tag()
{
    // Invariant: each table takes one value; relaxed is enough, only
    // uniqueness (modulo 2^16) matters, not ordering with other memory.
    static std::atomic<std::uint32_t> counter{1};
    return counter.fetch_add(1, std::memory_order_relaxed) & static_cast<std::uint32_t>(tag_mask);
}
}  // namespace handle_bits

std::string_view handle_kind_name(HandleKind kind)
{
    switch (kind) {
    case HandleKind::context: return "context";
    case HandleKind::buffer: return "buffer";
    case HandleKind::program: return "program";
    case HandleKind::queue: return "queue";
    case HandleKind::event: return "event";
    case HandleKind::gate: return "gate";
    }
    return "unknown";
}

}  // namespace vaccel
