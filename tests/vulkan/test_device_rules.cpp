// test_device_rules.cpp - which devices are served, their order, and their
// queue family, on fixture facts (no device).
#include <string>
#include <vector>

#include "device_rules.hpp"

#include "cmocka.hpp"

using namespace vaccel::backend::vulkan;

namespace {

constexpr VkQueueFlags G = VK_QUEUE_GRAPHICS_BIT;
constexpr VkQueueFlags C = VK_QUEUE_COMPUTE_BIT;
constexpr VkQueueFlags T = VK_QUEUE_TRANSFER_BIT;

DeviceFacts good(std::string name)
{
    DeviceFacts facts;
    facts.name = std::move(name);
    facts.api_version = VK_MAKE_API_VERSION(0, 1, 3, 230);
    facts.type = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
    facts.synchronization2 = true;
    facts.timeline_semaphore = true;
    facts.queue_families = {G | C | T, C | T, T};
    return facts;
}

void the_compute_only_family_is_preferred(void**)
{
    const std::vector<VkQueueFlags> with_compute_only = {G | C | T, C | T, T};
    assert_int_equal(*choose_queue_family(with_compute_only), 1);
    const std::vector<VkQueueFlags> graphics_only_then_both = {G, G | C};
    assert_int_equal(*choose_queue_family(graphics_only_then_both), 1);
    const std::vector<VkQueueFlags> first_of_two = {G | C, G | C | T, T};
    assert_int_equal(*choose_queue_family(first_of_two), 0);
    const std::vector<VkQueueFlags> none = {G, T};
    assert_false(choose_queue_family(none).has_value());
    assert_false(choose_queue_family({}).has_value());
}

void a_device_meeting_the_floor_is_served(void**)
{
    assert_string_equal(refusal(good("GPU")).c_str(), "");
}

void a_refusal_names_everything_missing(void**)
{
    DeviceFacts old = good("Old GPU");
    old.api_version = VK_MAKE_API_VERSION(0, 1, 2, 0);
    old.synchronization2 = false;
    assert_string_equal(refusal(old).c_str(),
                        "\"Old GPU\" is not served: it lacks Vulkan 1.3 (the driver offers "
                        "1.2.0) and the synchronization2 feature, which the Vulkan backend "
                        "requires; update its driver or select another device");
    DeviceFacts odd = good("Odd");
    odd.timeline_semaphore = false;
    odd.queue_families = {G, T};
    odd.synchronization2 = false;
    assert_string_equal(refusal(odd).c_str(),
                        "\"Odd\" is not served: it lacks the synchronization2 feature, the "
                        "timelineSemaphore feature and a compute-capable queue family, which "
                        "the Vulkan backend requires; update its driver or select another "
                        "device");
}

void devices_are_ranked_discrete_first(void**)
{
    const std::vector<VkPhysicalDeviceType> types = {
        VK_PHYSICAL_DEVICE_TYPE_CPU,         VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
        VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU,
        VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, VK_PHYSICAL_DEVICE_TYPE_OTHER,
    };
    const std::vector<std::size_t> expected = {1, 4, 2, 3, 0, 5};
    assert_true(serving_order(types) == expected);
    assert_true(serving_order({}).empty());
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(the_compute_only_family_is_preferred),
        cmocka_unit_test(a_device_meeting_the_floor_is_served),
        cmocka_unit_test(a_refusal_names_everything_missing),
        cmocka_unit_test(devices_are_ranked_discrete_first),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
