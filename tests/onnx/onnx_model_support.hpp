// onnx_model_support.hpp - one-node ONNX models built in a test, imported
// and run on the CPU device (the node suite's models come from
// libonnx-testdata; these reach the forms its tests do not).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "../cpu/raw_run_support.hpp"
#include "vaccel/onnx/importer.hpp"

namespace onnx_test {

using T = ::onnx::TensorProto;

struct Port {
    std::string name;
    std::int32_t type = T::FLOAT;
    std::vector<std::int64_t> dims;
};

// An attribute: ints, one int, one float or one string.
struct Attr {
    std::string name;
    std::vector<std::int64_t> ints;
    std::optional<std::int64_t> i;
    std::optional<float> f;
    std::optional<std::string> s;
};

// An INT64 initializer.
struct IntConstant {
    std::string name;
    std::vector<std::int64_t> dims;
    std::vector<std::int64_t> values;
};

struct NodeModel {
    std::string op;
    std::vector<Port> inputs = {};
    std::vector<Port> outputs = {};
    std::vector<Attr> attrs = {};
    std::vector<IntConstant> constants = {};  // also named in `node_inputs`
    std::vector<std::string> node_inputs = {};  // default: the inputs' names
    std::int64_t opset = 17;  // the newest ONNX 1.12 knows
};

inline std::string serialized(const NodeModel& spec)
{
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(spec.opset);
    auto* g = m.mutable_graph();
    g->set_name(spec.op);
    auto port = [](::onnx::ValueInfoProto* v, const Port& p) {
        v->set_name(p.name);
        auto* type = v->mutable_type()->mutable_tensor_type();
        type->set_elem_type(p.type);
        auto* shape = type->mutable_shape();
        for (std::int64_t d : p.dims) shape->add_dim()->set_dim_value(d);
    };
    for (const Port& p : spec.inputs) port(g->add_input(), p);
    for (const Port& p : spec.outputs) port(g->add_output(), p);
    for (const IntConstant& c : spec.constants) {
        auto* t = g->add_initializer();
        t->set_name(c.name);
        t->set_data_type(T::INT64);
        for (std::int64_t d : c.dims) t->add_dims(d);
        for (std::int64_t v : c.values) t->add_int64_data(v);
    }
    auto* node = g->add_node();
    node->set_op_type(spec.op);
    node->set_name(spec.op);
    if (spec.node_inputs.empty())
        for (const Port& p : spec.inputs) node->add_input(p.name);
    for (const std::string& in : spec.node_inputs) node->add_input(in);
    for (const Port& p : spec.outputs) node->add_output(p.name);
    for (const Attr& a : spec.attrs) {
        auto* attr = node->add_attribute();
        attr->set_name(a.name);
        using A = ::onnx::AttributeProto;
        if (a.i) attr->set_type(A::INT), attr->set_i(*a.i);
        else if (a.f) attr->set_type(A::FLOAT), attr->set_f(*a.f);
        else if (a.s) attr->set_type(A::STRING), attr->set_s(*a.s);
        else {
            attr->set_type(A::INTS);
            for (std::int64_t v : a.ints) attr->add_ints(v);
        }
    }
    return m.SerializeAsString();
}

// `model` imported and run once on the CPU device with `inputs` (the
// graph's bytes, in its input order); returns each output's bytes.
inline std::vector<cpu_test::Bytes> run_model_on_cpu(const std::string& model, const std::vector<cpu_test::Bytes>& inputs)
{
    auto imported = vaccel::onnx::import_model(std::as_bytes(std::span(model)));
    if (!imported) fail_msg("%s", imported.error().note.c_str());
    cpu_test::Rig rig;
    auto program = rig.must_load(std::move(imported->graph));
    auto outputs = cpu_test::run_ok(rig, *program, inputs);
    assert_ok(rig.backend->unload_program(program));
    return outputs;
}

inline std::vector<cpu_test::Bytes> run_on_cpu(const NodeModel& spec, const std::vector<cpu_test::Bytes>& inputs)
{
    return run_model_on_cpu(serialized(spec), inputs);
}

// The model with its input `name` made a FLOAT initializer holding `values`.
inline std::string with_constant_input(const NodeModel& spec, const std::string& name, const std::vector<float>& values)
{
    ::onnx::ModelProto proto;
    proto.ParseFromString(serialized(spec));
    auto* g = proto.mutable_graph();
    for (int i = 0; i < g->input_size(); ++i)
        if (g->input(i).name() == name) {
            auto* t = g->add_initializer();
            t->set_name(name);
            t->set_data_type(T::FLOAT);
            for (const auto& d : g->input(i).type().tensor_type().shape().dim()) t->add_dims(d.dim_value());
            for (float v : values) t->add_float_data(v);
            g->mutable_input()->DeleteSubrange(i, 1);
            break;
        }
    return proto.SerializeAsString();
}

// The importer's refusal of the model (fails the test where it imports).
inline std::string refusal(const NodeModel& spec)
{
    const std::string model = serialized(spec);
    auto imported = vaccel::onnx::import_model(std::as_bytes(std::span(model)));
    if (imported) fail_msg("%s imported; a refusal was expected", spec.op.c_str());
    return imported.error().note;
}

}  // namespace onnx_test
