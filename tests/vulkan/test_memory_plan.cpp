// test_memory_plan.cpp - the memory type chosen for each domain, on fixture
// type lists (no device): the preferences, the buffer's type mask, and the
// types that need a feature the backend never enables.
#include <vector>

#include "memory_plan.hpp"
#include "vaccel.h"

#include "cmocka.hpp"

using namespace vaccel::backend::vulkan;

namespace {

constexpr VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags HC = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags CACHED = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
constexpr VkMemoryPropertyFlags AMD = VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD |
                                      VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD;
constexpr std::uint32_t all_types = 0xffffffffu;

// A Radeon under RADV: the ordinary types first, then the ones
// VK_AMD_device_coherent_memory appends (allocating from those needs the
// deviceCoherentMemory feature, which the backend never enables).
const std::vector<MemoryType> radeon = {
    {DL, 1},          {DL, 1},          {HC, 0},          {DL | HC, 1},
    {DL | HC, 1},     {HC | CACHED, 0}, {HC | CACHED, 0}, {DL | AMD, 1},
    {HC | AMD, 0},    {DL | HC | AMD, 1}, {HC | CACHED | AMD, 0},
};

// A discrete GPU with resizable BAR: VRAM (heap 0), system memory (heap 1).
const std::vector<MemoryType> discrete = {
    {DL, 0}, {HC, 1}, {HC | CACHED, 1}, {DL | HC, 0},
};

// Mesa lavapipe: one heap, one type that is everything.
const std::vector<MemoryType> lavapipe = {{DL | HC | CACHED, 0}};

void radeon_never_gets_amd_coherent_memory(void**)
{
    // Host: HC types 2 (score 2), 3 and 4 (device-local: 0), 5 and 6
    // (not device-local + cached: 3); 8 and 10 are excluded. First best: 5.
    // Device: DL types 0 and 1 (not host-visible: 1), 3 and 4 (0): 0.
    // Shared: DL|HC types 3 and 4 (uncached: 0); 9 excluded: 3.
    auto plan = select_memory_plan(radeon, all_types, false);
    assert_true(plan.has_value());
    assert_int_equal(plan->host, 5);
    assert_true(plan->device.has_value());
    assert_int_equal(*plan->device, 0);
    assert_true(plan->shared.has_value());
    assert_int_equal(*plan->shared, 3);
    for (auto index : {plan->host, *plan->device, *plan->shared})
        assert_int_equal(radeon[index].flags & excluded_memory_flags, 0);
}

void excluding_them_strands_no_domain(void**)
{
    auto plan = select_memory_plan(radeon, all_types, false);
    assert_true(plan.has_value());
    assert_int_equal(memory_caps(*plan),
                     VACCEL_MEM_HOST_VISIBLE | VACCEL_MEM_DEVICE_LOCAL | VACCEL_MEM_SHARED);
}

void discrete_gpu_prefers_vram_the_host_cannot_see(void**)
{
    // Host: 1 (2), 2 (3), 3 (0) -> 2. Device: 0 (1), 3 (0) -> 0. Shared: 3.
    auto plan = select_memory_plan(discrete, all_types, false);
    assert_true(plan.has_value());
    assert_int_equal(plan->host, 2);
    assert_int_equal(*plan->device, 0);
    assert_int_equal(*plan->shared, 3);
}

void unified_device_domain_prefers_mapped_memory(void**)
{
    // Device with unified: 0 (0), 3 (HC: 2) -> 3.
    auto plan = select_memory_plan(discrete, all_types, true);
    assert_true(plan.has_value());
    assert_int_equal(*plan->device, 3);
    // Lavapipe: every domain is its one type.
    auto soft = select_memory_plan(lavapipe, all_types, true);
    assert_true(soft.has_value());
    assert_int_equal(soft->host, 0);
    assert_int_equal(*soft->device, 0);
    assert_int_equal(*soft->shared, 0);
}

void the_buffer_type_mask_is_honoured(void**)
{
    // Without type 2 (mask 0b1011): host falls back to 1.
    auto plan = select_memory_plan(discrete, 0b1011u, false);
    assert_true(plan.has_value());
    assert_int_equal(plan->host, 1);
    // Without type 3 (mask 0b0111): no shared type; caps say so.
    plan = select_memory_plan(discrete, 0b0111u, false);
    assert_true(plan.has_value());
    assert_false(plan->shared.has_value());
    assert_int_equal(memory_caps(*plan), VACCEL_MEM_HOST_VISIBLE | VACCEL_MEM_DEVICE_LOCAL);
    // Without 1 and 2 (mask 0b1001): host must take the ReBAR type 3.
    plan = select_memory_plan(discrete, 0b1001u, false);
    assert_true(plan.has_value());
    assert_int_equal(plan->host, 3);
}

void protected_and_lazy_memory_are_never_chosen(void**)
{
    const std::vector<MemoryType> types = {
        {DL | VK_MEMORY_PROPERTY_PROTECTED_BIT, 0},
        {DL | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, 0},
        {HC | VK_MEMORY_PROPERTY_PROTECTED_BIT, 1},
        {HC, 1},
        {DL, 0},
        {DL | HC | VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV, 0},
    };
    auto plan = select_memory_plan(types, all_types, false);
    assert_true(plan.has_value());
    assert_int_equal(plan->host, 3);
    assert_int_equal(*plan->device, 4);
    assert_false(plan->shared.has_value());
}

void no_host_coherent_type_is_no_plan(void**)
{
    const std::vector<MemoryType> device_only = {{DL, 0},
                                                 {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, 1}};
    assert_false(select_memory_plan(device_only, all_types, false).has_value());
    // The only coherent type is masked out.
    assert_false(select_memory_plan(discrete, 0b0001u, false).has_value());
    assert_false(select_memory_plan({}, all_types, false).has_value());
}

void domains_map_to_the_plan(void**)
{
    const MemoryPlan plan{2, 0, std::nullopt};
    assert_int_equal(*type_for_domain(plan, VACCEL_DOMAIN_HOST), 2);
    assert_int_equal(*type_for_domain(plan, VACCEL_DOMAIN_DEVICE), 0);
    assert_false(type_for_domain(plan, VACCEL_DOMAIN_SHARED).has_value());
    assert_false(type_for_domain(plan, 0).has_value());
    assert_false(type_for_domain(plan, 4).has_value());
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(radeon_never_gets_amd_coherent_memory),
        cmocka_unit_test(excluding_them_strands_no_domain),
        cmocka_unit_test(discrete_gpu_prefers_vram_the_host_cannot_see),
        cmocka_unit_test(unified_device_domain_prefers_mapped_memory),
        cmocka_unit_test(the_buffer_type_mask_is_honoured),
        cmocka_unit_test(protected_and_lazy_memory_are_never_chosen),
        cmocka_unit_test(no_host_coherent_type_is_no_plan),
        cmocka_unit_test(domains_map_to_the_plan),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
