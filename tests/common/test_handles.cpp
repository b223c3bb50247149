// test_handles.cpp - HandleTable: handles are opaque, never 0, and a stale,
// foreign, forged or wrong-kind handle never reaches another object.
#include "test_support.hpp"

#include <memory>
#include <vector>

#include "vaccel/common/handles.hpp"

using namespace vaccel;

namespace {

void insert_returns_nonzero_handle_carrying_kind_and_tag(void**)
{
    HandleTable<int> table(4);
    auto handle = table.insert(HandleKind::queue, 7);
    assert_ok(handle);
    assert_true(*handle != 0);
    assert_int_equal(handle_bits::kind_of(*handle), static_cast<int>(HandleKind::queue));
    assert_int_equal(handle_bits::tag_of(*handle), table.tag());
    assert_int_equal(table.size(), 1);
    assert_int_equal(table.capacity(), 4);
}

void find_and_lookup_return_the_inserted_object(void**)
{
    HandleTable<int> table(4);
    const std::uint64_t a = *table.insert(HandleKind::buffer, 11);
    const std::uint64_t b = *table.insert(HandleKind::buffer, 22);
    assert_true(a != b);
    assert_non_null(table.find(a, HandleKind::buffer));
    assert_int_equal(*table.find(a, HandleKind::buffer), 11);
    auto found = table.lookup(b, HandleKind::buffer);
    assert_ok(found);
    assert_int_equal(**found, 22);
    const HandleTable<int>& view = table;
    assert_int_equal(*view.find(b, HandleKind::buffer), 22);
}

void lookup_refuses_zero_handle(void**)
{
    HandleTable<int> table(4);
    (void)table.insert(HandleKind::context, 1);
    assert_refused(table.lookup(0, HandleKind::context), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, 0, 0);
}

void lookup_refuses_stale_handle_after_remove(void**)
{
    HandleTable<int> table(4);
    const std::uint64_t handle = *table.insert(HandleKind::event, 5);
    auto removed = table.remove(handle, HandleKind::event);
    assert_true(removed.has_value());
    assert_int_equal(*removed, 5);
    assert_int_equal(table.size(), 0);
    assert_null(table.find(handle, HandleKind::event));
    assert_refused(table.lookup(handle, HandleKind::event), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, handle, 0);
    assert_false(table.remove(handle, HandleKind::event).has_value());
}

void stale_handle_does_not_reach_the_object_reusing_its_slot(void**)
{
    HandleTable<int> table(1);
    const std::uint64_t old_handle = *table.insert(HandleKind::buffer, 1);
    (void)table.remove(old_handle, HandleKind::buffer);
    const std::uint64_t new_handle = *table.insert(HandleKind::buffer, 2);
    assert_int_equal(handle_bits::index_of(new_handle), handle_bits::index_of(old_handle));
    assert_true(new_handle != old_handle);
    assert_int_equal(handle_bits::generation_of(new_handle),
                     handle_bits::generation_of(old_handle) + 1);
    assert_null(table.find(old_handle, HandleKind::buffer));
    assert_refused(table.lookup(old_handle, HandleKind::buffer), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, old_handle, 0);
    assert_int_equal(*table.find(new_handle, HandleKind::buffer), 2);
}

void lookup_refuses_handle_of_another_table(void**)
{
    HandleTable<int> mine(4);
    HandleTable<int> theirs(4);
    assert_true(mine.tag() != theirs.tag());
    const std::uint64_t own = *mine.insert(HandleKind::context, 1);
    const std::uint64_t foreign = *theirs.insert(HandleKind::context, 2);
    // Same slot, kind and generation: only the tag differs.
    assert_int_equal(handle_bits::index_of(own), handle_bits::index_of(foreign));
    assert_null(mine.find(foreign, HandleKind::context));
    assert_refused(mine.lookup(foreign, HandleKind::context), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, foreign, 0);
    assert_false(mine.remove(foreign, HandleKind::context).has_value());
    assert_int_equal(mine.size(), 1);
}

void lookup_refuses_live_handle_of_another_kind(void**)
{
    HandleTable<int> table(4);
    const std::uint64_t buffer = *table.insert(HandleKind::buffer, 3);
    assert_null(table.find(buffer, HandleKind::program));
    assert_refused(table.lookup(buffer, HandleKind::program), Errc::invalid_argument,
                   VACCEL_D_WRONG_HANDLE_KIND, buffer, 0);
    assert_false(table.remove(buffer, HandleKind::program).has_value());
    assert_int_equal(*table.find(buffer, HandleKind::buffer), 3);
}

void lookup_refuses_handle_with_forged_kind_bits(void**)
{
    HandleTable<int> table(4);
    const std::uint64_t buffer = *table.insert(HandleKind::buffer, 3);
    const std::uint64_t forged =
        (buffer & ~(handle_bits::kind_mask << handle_bits::kind_shift)) |
        (std::uint64_t{static_cast<std::uint8_t>(HandleKind::program)} << handle_bits::kind_shift);
    assert_refused(table.lookup(forged, HandleKind::program), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, forged, 0);
}

void lookup_refuses_index_past_used_slots(void**)
{
    HandleTable<int> table(4);
    const std::uint64_t handle = *table.insert(HandleKind::queue, 3);
    const std::uint64_t past = (handle & ~handle_bits::index_mask) | 3;
    assert_refused(table.lookup(past, HandleKind::queue), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, past, 0);
}

void insert_refuses_when_full_then_reuses_a_freed_slot(void**)
{
    HandleTable<int> table(3);
    std::vector<std::uint64_t> handles;
    for (int i = 0; i < 3; ++i)
        handles.push_back(*table.insert(HandleKind::program, i));
    auto refused = table.insert(HandleKind::program, 99);
    assert_false(refused.has_value());
    assert_int_equal(static_cast<int>(refused.error().code), VACCEL_E_RESOURCE_LIMIT);
    assert_int_equal(refused.error().detail, VACCEL_D_LIMIT);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_HANDLES);
    assert_int_equal(refused.error().arg0, 3);
    assert_int_equal(refused.error().arg1, 3);
    assert_int_equal(table.size(), 3);

    (void)table.remove(handles[1], HandleKind::program);
    auto again = table.insert(HandleKind::program, 42);
    assert_ok(again);
    assert_int_equal(handle_bits::index_of(*again), handle_bits::index_of(handles[1]));
    assert_true(*again != handles[1]);
    assert_int_equal(*table.find(*again, HandleKind::program), 42);
}

void freed_slots_are_reused_oldest_first(void**)
{
    HandleTable<int> table(4);
    const std::uint64_t a = *table.insert(HandleKind::event, 0);
    const std::uint64_t b = *table.insert(HandleKind::event, 1);
    (void)table.remove(b, HandleKind::event);
    (void)table.remove(a, HandleKind::event);
    // FIFO: b was freed first, so its slot comes back first, then a's.
    assert_int_equal(handle_bits::index_of(*table.insert(HandleKind::event, 2)),
                     handle_bits::index_of(b));
    assert_int_equal(handle_bits::index_of(*table.insert(HandleKind::event, 3)),
                     handle_bits::index_of(a));
}

void slot_is_retired_when_its_generation_is_exhausted(void**)
{
    // One live object at a time, so slot 0 is reused until its generation
    // reaches the last value: that handle works; removing it retires the
    // slot instead of wrapping to generation 0 (which would revive the very
    // first handle). The next object gets a fresh slot; capacity is intact.
    HandleTable<int> table(1);
    const std::uint64_t first = *table.insert(HandleKind::buffer, 0);
    (void)table.remove(first, HandleKind::buffer);
    std::uint64_t last = 0;
    for (std::uint32_t g = 1; g <= handle_bits::last_generation; ++g) {
        last = *table.insert(HandleKind::buffer, static_cast<int>(g));
        assert_int_equal(handle_bits::index_of(last), 0);
        if (g != handle_bits::last_generation)
            (void)table.remove(last, HandleKind::buffer);
    }
    assert_int_equal(handle_bits::generation_of(last), handle_bits::last_generation);
    assert_non_null(table.find(last, HandleKind::buffer));
    assert_true(table.remove(last, HandleKind::buffer).has_value());
    assert_int_equal(table.retired(), 1);

    auto next = table.insert(HandleKind::buffer, 7);
    assert_ok(next);
    assert_int_equal(handle_bits::index_of(*next), 1);
    assert_int_equal(handle_bits::generation_of(*next), 0);
    assert_null(table.find(first, HandleKind::buffer));
    assert_null(table.find(last, HandleKind::buffer));
    assert_int_equal(*table.find(*next, HandleKind::buffer), 7);
    // Still one live object at most.
    assert_refused(table.insert(HandleKind::buffer, 8), Errc::resource_limit, VACCEL_D_LIMIT, 1,
                   1);
}

void pointers_stay_valid_across_later_inserts(void**)
{
    HandleTable<int> table(1000);
    const std::uint64_t first = *table.insert(HandleKind::buffer, 123);
    int* value = table.find(first, HandleKind::buffer);
    for (int i = 0; i < 500; ++i)
        (void)table.insert(HandleKind::buffer, i);
    assert_ptr_equal(value, table.find(first, HandleKind::buffer));
    assert_int_equal(*value, 123);
}

void for_each_visits_live_objects_only(void**)
{
    HandleTable<int> table(8);
    std::vector<std::uint64_t> handles;
    for (int i = 0; i < 5; ++i)
        handles.push_back(*table.insert(HandleKind::queue, i * 10));
    (void)table.remove(handles[1], HandleKind::queue);
    (void)table.remove(handles[3], HandleKind::queue);
    int count = 0;
    int sum = 0;
    table.for_each([&](std::uint64_t handle, int& value) {
        assert_int_equal(*table.find(handle, HandleKind::queue), value);
        ++count;
        sum += value;
    });
    assert_int_equal(count, 3);
    assert_int_equal(sum, 0 + 20 + 40);
}

void move_only_objects_come_back_out_of_remove(void**)
{
    HandleTable<std::unique_ptr<int>> table(2);
    const std::uint64_t handle = *table.insert(HandleKind::program, std::make_unique<int>(9));
    std::optional<std::unique_ptr<int>> out = table.remove(handle, HandleKind::program);
    assert_true(out.has_value());
    assert_int_equal(**out, 9);
}

void capacity_is_clamped_to_the_index_space(void**)
{
    HandleTable<int> table(UINT32_MAX);
    assert_int_equal(table.capacity(), handle_bits::max_capacity);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(insert_returns_nonzero_handle_carrying_kind_and_tag),
        cmocka_unit_test(find_and_lookup_return_the_inserted_object),
        cmocka_unit_test(lookup_refuses_zero_handle),
        cmocka_unit_test(lookup_refuses_stale_handle_after_remove),
        cmocka_unit_test(stale_handle_does_not_reach_the_object_reusing_its_slot),
        cmocka_unit_test(lookup_refuses_handle_of_another_table),
        cmocka_unit_test(lookup_refuses_live_handle_of_another_kind),
        cmocka_unit_test(lookup_refuses_handle_with_forged_kind_bits),
        cmocka_unit_test(lookup_refuses_index_past_used_slots),
        cmocka_unit_test(insert_refuses_when_full_then_reuses_a_freed_slot),
        cmocka_unit_test(freed_slots_are_reused_oldest_first),
        cmocka_unit_test(slot_is_retired_when_its_generation_is_exhausted),
        cmocka_unit_test(pointers_stay_valid_across_later_inserts),
        cmocka_unit_test(for_each_visits_live_objects_only),
        cmocka_unit_test(move_only_objects_come_back_out_of_remove),
        cmocka_unit_test(capacity_is_clamped_to_the_index_space),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
