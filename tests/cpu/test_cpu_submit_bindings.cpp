// test_cpu_submit_bindings.cpp - how submit refuses a binding list by its count.
//
// The reference design fold "no bindings" into their count check (1..max, else
// ResourceLimit). The contract keeps zero apart: a submission with no
// bindings can never run whatever the limits, so it is InvalidArgument
// (D_BAD_VALUE, arg0 = offsetof(vaccel_submit, binding_count), arg1 = 0),
// as requests.cpp and the kernel module already say on the wire; above the
// limit stays ResourceLimit (VACCEL_LIMIT_BINDINGS). Both come before the
// per-binding rules (validate::bindings), as the count does in the reference design.
#include <cstddef>

#include "cpu_test_support.hpp"

using namespace cpu_test;

namespace {

// Refusals never reach the sink; an accepted submission would.
class NullSink final : public EventSink {
public:
    void completed(const EventStatus&) noexcept override {}
};

std::unique_ptr<Program> load_tanh(Rig& rig)
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", {4});
    const auto out = f32(g, "out", {4});
    g.op(Op::tanh, {in}, {out});
    g.input(in);
    g.output(out);
    return rig.must_load(g.finish());
}

Result<Submitted> submit(Rig& rig, Program& program, std::span<const Binding> bindings)
{
    SubmitDesc desc;
    desc.queue = rig.queue.get();
    desc.program = &program;
    desc.bindings = bindings;
    desc.sink = std::make_shared<NullSink>();
    return cpu_test::submit(*rig.backend, desc);
}

void zero_bindings_are_invalid_not_a_limit(void**)
{
    Rig rig;
    auto program = load_tanh(rig);
    assert_int_equal(program->slots().size(), 2);
    auto refused = submit(rig, *program, {});
    assert_refused(refused, Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_submit, binding_count), 0);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_NONE);
    // Refused means nothing happened: no event, nothing in flight.
    assert_int_equal(rig.backend->live().events, 0);
    assert_int_equal(rig.backend->live().events_in_flight, 0);
    rig.finish(program);
}

void more_bindings_than_the_limit_are_a_limit_before_any_binding_is_read(void**)
{
    Rig rig;
    auto program = load_tanh(rig);
    const std::uint32_t max = rig.backend->device_info().limits.max_bindings;
    // Every binding is wrong on its own (no buffer at slot 7, access 0): the
    // count is reported first all the same.
    auto buffer = rig.buffer(16);
    std::vector<Binding> bindings(std::size_t{max} + 1, Binding{7, 0, buffer.get(), 0, 16});
    auto refused = submit(rig, *program, bindings);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, max, max + 1);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_BINDINGS);
    assert_ok(rig.backend->free_buffer(buffer));
    rig.finish(program);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zero_bindings_are_invalid_not_a_limit),
        cmocka_unit_test(more_bindings_than_the_limit_are_a_limit_before_any_binding_is_read),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
