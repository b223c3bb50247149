// test_tensor_files.cpp - binding --input files to slots, dtype mapping and
// output file names (tools/vaccelctl/src/tensor_files).
#include <string>
#include <vector>

#include "tensor_files.hpp"

#include "cmocka.hpp"

using namespace vaccel::ctl;

namespace {

const std::vector<std::string> two_inputs{"TosaInput_0", "TosaInput_1"};

bool no_file(const std::string&)
{
    return false;
}

std::vector<std::string> assigned(std::vector<std::string> arguments,
                                  const std::vector<std::string>& names = two_inputs,
                                  bool (*is_file)(const std::string&) = no_file)
{
    auto files = assign_inputs(arguments, names, is_file);
    if (!files)
        fail_msg("%s", files.error().message.c_str());
    return *files;
}

std::string refusal(std::vector<std::string> arguments,
                    const std::vector<std::string>& names = two_inputs)
{
    auto files = assign_inputs(arguments, names, no_file);
    assert_false(files.has_value());
    return files.error().message;
}

void inputs_bind_by_name_in_any_order(void**)
{
    auto files = assigned({"TosaInput_1=b.npy", "TosaInput_0=a.npy"});
    assert_string_equal(files[0].c_str(), "a.npy");
    assert_string_equal(files[1].c_str(), "b.npy");
}

void plain_files_bind_in_block_order(void**)
{
    auto files = assigned({"a.npy", "b.npy"});
    assert_string_equal(files[0].c_str(), "a.npy");
    assert_string_equal(files[1].c_str(), "b.npy");
}

void plain_files_fill_the_inputs_not_bound_by_name(void**)
{
    auto files = assigned({"b.npy", "TosaInput_0=a.npy"});
    assert_string_equal(files[0].c_str(), "a.npy");
    assert_string_equal(files[1].c_str(), "b.npy");
}

void existing_file_with_equals_sign_binds_positionally(void**)
{
    auto files = assigned({"run=1/a.npy", "b.npy"}, two_inputs,
                          [](const std::string& path) { return path == "run=1/a.npy"; });
    assert_string_equal(files[0].c_str(), "run=1/a.npy");
}

void missing_input_is_named(void**)
{
    assert_string_equal(refusal({"TosaInput_0=a.npy"}).c_str(),
                        "input 'TosaInput_1' (slot 1) is missing: give --input "
                        "TosaInput_1=FILE.npy (the model's inputs are 'TosaInput_0', "
                        "'TosaInput_1')");
}

// `-i NAME` without =FILE: said as such, not "cannot open NAME"; a file
// of that name still binds positionally.
void an_input_name_without_a_file_is_refused_as_such(void**)
{
    assert_string_equal(refusal({"TosaInput_1"}).c_str(),
                        "--input TosaInput_1: 'TosaInput_1' is the name of an input, not a file; "
                        "write --input TosaInput_1=FILE.npy");
    auto files = assigned({"TosaInput_0", "b.npy"}, two_inputs,
                          [](const std::string& path) { return path == "TosaInput_0"; });
    assert_string_equal(files[0].c_str(), "TosaInput_0");
}

void unknown_input_name_is_refused_with_the_names(void**)
{
    assert_string_equal(refusal({"x=a.npy", "b.npy"}).c_str(),
                        "--input x=a.npy: the model has no input named 'x'; its inputs are "
                        "'TosaInput_0', 'TosaInput_1'");
}

void input_bound_twice_is_refused(void**)
{
    assert_contains(refusal({"TosaInput_0=a.npy", "TosaInput_0=b.npy"}),
                    "--input TosaInput_0=b.npy: input 'TosaInput_0' is already bound to a.npy");
}

void more_files_than_inputs_is_refused(void**)
{
    assert_contains(refusal({"a.npy", "b.npy", "c.npy"}),
                    "--input c.npy: the model has 2 inputs ('TosaInput_0', 'TosaInput_1') and "
                    "every one is already bound");
}

void empty_file_after_equals_is_refused(void**)
{
    assert_contains(refusal({"TosaInput_0=", "b.npy"}), "no file after '='");
}

void tosa_dtypes_map_to_numpy_dtypes(void**)
{
    assert_int_equal(static_cast<int>(*npy_dtype_for(7, "t")),
                     static_cast<int>(vaccel::npy::DType::f4));
    assert_int_equal(static_cast<int>(*npy_dtype_for(8, "t")),
                     static_cast<int>(vaccel::npy::DType::f2));
    assert_int_equal(static_cast<int>(*npy_dtype_for(3, "t")),
                     static_cast<int>(vaccel::npy::DType::i1));
    assert_int_equal(static_cast<int>(*npy_dtype_for(4, "t")),
                     static_cast<int>(vaccel::npy::DType::i2));
    assert_int_equal(static_cast<int>(*npy_dtype_for(5, "t")),
                     static_cast<int>(vaccel::npy::DType::i4));
    assert_int_equal(static_cast<int>(*npy_dtype_for(1, "t")),
                     static_cast<int>(vaccel::npy::DType::b1));
}

void tosa_dtype_without_numpy_form_is_refused(void**)
{
    auto refused = npy_dtype_for(6, "acc");
    assert_false(refused.has_value());
    assert_contains(refused.error().message, "tensor 'acc' has TOSA dtype INT48");
    refused = npy_dtype_for(40, "x");
    assert_contains(refused.error().message, "TOSA dtype DType(40)");
}

void output_files_keep_plain_names(void**)
{
    std::vector<std::string> names{"TosaOutput_0", "y"};
    auto files = output_file_names(names);
    assert_string_equal(files[0].file_name.c_str(), "TosaOutput_0.npy");
    assert_false(files[0].renamed);
    assert_string_equal(files[1].file_name.c_str(), "y.npy");
}

void output_files_replace_characters_a_file_name_cannot_hold(void**)
{
    std::vector<std::string> names{"model/dense:0", "..", "", "a b"};
    auto files = output_file_names(names);
    assert_string_equal(files[0].file_name.c_str(), "model_dense_0.npy");
    assert_true(files[0].renamed);
    assert_string_equal(files[1].file_name.c_str(), "_..npy");
    assert_string_equal(files[2].file_name.c_str(), "output_2.npy");
    assert_string_equal(files[3].file_name.c_str(), "a_b.npy");
}

void output_files_that_collide_get_the_slot_appended(void**)
{
    std::vector<std::string> names{"a/b", "a:b"};
    auto files = output_file_names(names);
    assert_string_equal(files[0].file_name.c_str(), "a_b.npy");
    assert_string_equal(files[1].file_name.c_str(), "a_b_1.npy");
    assert_true(files[1].renamed);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(inputs_bind_by_name_in_any_order),
        cmocka_unit_test(an_input_name_without_a_file_is_refused_as_such),
        cmocka_unit_test(plain_files_bind_in_block_order),
        cmocka_unit_test(plain_files_fill_the_inputs_not_bound_by_name),
        cmocka_unit_test(existing_file_with_equals_sign_binds_positionally),
        cmocka_unit_test(missing_input_is_named),
        cmocka_unit_test(unknown_input_name_is_refused_with_the_names),
        cmocka_unit_test(input_bound_twice_is_refused),
        cmocka_unit_test(more_files_than_inputs_is_refused),
        cmocka_unit_test(empty_file_after_equals_is_refused),
        cmocka_unit_test(tosa_dtypes_map_to_numpy_dtypes),
        cmocka_unit_test(tosa_dtype_without_numpy_form_is_refused),
        cmocka_unit_test(output_files_keep_plain_names),
        cmocka_unit_test(output_files_replace_characters_a_file_name_cannot_hold),
        cmocka_unit_test(output_files_that_collide_get_the_slot_appended),
    };
    return cmocka_run_group_tests_name("tensor_files", tests, nullptr, nullptr);
}
