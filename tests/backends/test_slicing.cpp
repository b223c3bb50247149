// test_slicing.cpp - cutting a run into segments of bounded device time
// (vaccel/sched/slicing.hpp): exact segments for measured costs, no device needed.
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <setjmp.h>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "vaccel/sched/slicing.hpp"

namespace {

using namespace vaccel::sched;

constexpr std::uint64_t us = 1000;

void no_profile_is_one_whole_segment(void**)
{
    const auto segments = whole_run(3);
    assert_int_equal(segments.size(), 1);
    assert_true((segments[0] == Segment{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}));
    assert_int_equal(cut_segments({}, 250 * us, 64).segments.size(), 1);
}

void short_dispatches_are_packed_up_to_the_bound(void**)
{
    const std::vector<DispatchCost> costs{{100 * us, 0}, {100 * us, 0}, {100 * us, 0},
                                          {40 * us, 0},  {10 * us, 0}};
    const auto segments = cut_segments(costs, 250 * us, 64).segments;
    // 100 + 100 fit; the third would pass 250; 100 + 40 + 10 fit.
    assert_int_equal(segments.size(), 2);
    assert_true((segments[0] == Segment{{0, 0, 0}, {1, 0, 0}}));
    assert_true((segments[1] == Segment{{2, 0, 0}, {3, 0, 0}, {4, 0, 0}}));
}

void a_long_tiled_dispatch_is_cut_over_its_tiles(void**)
{
    // 1 ms over 10 tiles at 250 us: 4 parts of consecutive tiles, alone.
    const std::vector<DispatchCost> costs{{50 * us, 0}, {1000 * us, 10}, {50 * us, 0}};
    const auto segments = cut_segments(costs, 250 * us, 64).segments;
    assert_int_equal(segments.size(), 6);
    assert_true((segments[0] == Segment{{0, 0, 0}}));
    assert_true((segments[1] == Segment{{1, 0, 2}}));
    assert_true((segments[2] == Segment{{1, 2, 5}}));
    assert_true((segments[3] == Segment{{1, 5, 7}}));
    assert_true((segments[4] == Segment{{1, 7, 10}}));
    assert_true((segments[5] == Segment{{2, 0, 0}}));
}

void never_more_parts_than_tiles_and_untiled_stays_whole(void**)
{
    const std::vector<DispatchCost> costs{{2000 * us, 3}, {2000 * us, 0}};
    const auto segments = cut_segments(costs, 250 * us, 64).segments;
    assert_int_equal(segments.size(), 4);
    assert_true((segments[0] == Segment{{0, 0, 1}}));
    assert_true((segments[2] == Segment{{0, 2, 3}}));
    assert_true((segments[3] == Segment{{1, 0, 0}}));
}

void the_segment_count_is_capped_by_raising_the_bound(void**)
{
    // 100 ms over 1000 tiles would be 400 parts at 250 us: capped at 8.
    const std::vector<DispatchCost> costs{{100'000 * us, 1000}};
    const auto segments = cut_segments(costs, 250 * us, 8).segments;
    assert_true(segments.size() <= 8);
    assert_true(segments.size() >= 4);
    std::uint32_t next = 0;
    for (const Segment& s : segments) {
        assert_int_equal(s.size(), 1);
        assert_int_equal(s[0].first, next);
        next = s[0].end;
    }
    assert_int_equal(next, 1000);  // every tile once, in order
}

void a_cap_on_parts_holds_and_the_cut_says_how_many(void**)
{
    const std::vector<DispatchCost> costs{{1000 * us, 10, 2}, {100 * us, 0, 0}};
    const Cut made = cut_segments(costs, 250 * us, 64);
    assert_int_equal(made.segments.size(), 3);
    assert_true((made.segments[0] == Segment{{0, 0, 5}}));
    assert_true((made.segments[1] == Segment{{0, 5, 10}}));
    assert_int_equal(made.parts[0], 2);
    assert_int_equal(made.parts[1], 1);
}

void a_dispatch_with_k_steps_is_cut_over_k_with_every_tile(void**)
{
    // 1 ms, 4 tiles, 64 k steps at 250 us: 4 parts of 16 k steps, each over
    // every tile (a part keeps the whole grid busy).
    const std::vector<DispatchCost> costs{{1000 * us, 4, 0, 64}, {50 * us, 0}};
    const Cut made = cut_segments(costs, 250 * us, 64);
    assert_int_equal(made.segments.size(), 5);
    assert_true((made.segments[0] == Segment{{0, 0, 0, 0, 16}}));
    assert_true((made.segments[1] == Segment{{0, 0, 0, 16, 32}}));
    assert_true((made.segments[3] == Segment{{0, 0, 0, 48, 64}}));
    assert_true((made.segments[4] == Segment{{1, 0, 0}}));
    assert_false(made.segments[0][0].whole());
    assert_int_equal(made.parts[0], 4);
}

void never_more_parts_than_k_steps_and_the_cap_holds(void**)
{
    const std::vector<DispatchCost> few{{5000 * us, 100, 0, 3}};
    const Cut three = cut_segments(few, 250 * us, 64);
    assert_int_equal(three.segments.size(), 3);
    assert_true((three.segments[2] == Segment{{0, 0, 0, 2, 3}}));
    const std::vector<DispatchCost> capped{{5000 * us, 100, 2, 64}};
    const Cut two = cut_segments(capped, 250 * us, 64);
    assert_int_equal(two.segments.size(), 2);
    assert_true((two.segments[1] == Segment{{0, 0, 0, 32, 64}}));
}

void parts_that_cost_too_much_get_half_the_parts(void**)
{
    // 1 ms cut into 4 parts over k, then a short dispatch packed alone.
    std::vector<DispatchCost> costs{{1000 * us, 4, 0, 64}, {50 * us, 0}};
    const Cut made = cut_segments(costs, 250 * us, 64);
    assert_int_equal(made.parts[0], 4);
    // Parts within 8% of the whole: nothing changes.
    const std::vector<std::uint64_t> cheap{270 * us, 270 * us, 270 * us, 270 * us, 50 * us};
    assert_false(halve_costly_cuts(made, cheap, costs));
    assert_int_equal(costs[0].max_parts, 0);
    // 1.2 ms in all: over 8%, so the next cut has 2 parts.
    const std::vector<std::uint64_t> dear{300 * us, 300 * us, 300 * us, 300 * us, 50 * us};
    assert_true(halve_costly_cuts(made, dear, costs));
    assert_int_equal(costs[0].max_parts, 2);
    assert_int_equal(costs[1].max_parts, 0);  // never cut: left as it was
    const Cut again = cut_segments(costs, 250 * us, 64);
    assert_int_equal(again.parts[0], 2);
    assert_true((again.segments[1] == Segment{{0, 0, 0, 32, 64}}));
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_profile_is_one_whole_segment),
        cmocka_unit_test(short_dispatches_are_packed_up_to_the_bound),
        cmocka_unit_test(a_long_tiled_dispatch_is_cut_over_its_tiles),
        cmocka_unit_test(never_more_parts_than_tiles_and_untiled_stays_whole),
        cmocka_unit_test(the_segment_count_is_capped_by_raising_the_bound),
        cmocka_unit_test(a_cap_on_parts_holds_and_the_cut_says_how_many),
        cmocka_unit_test(a_dispatch_with_k_steps_is_cut_over_k_with_every_tile),
        cmocka_unit_test(never_more_parts_than_k_steps_and_the_cap_holds),
        cmocka_unit_test(parts_that_cost_too_much_get_half_the_parts),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
