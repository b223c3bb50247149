// gate_calls.cpp - the C calls for host gates.
//
// Owns nothing: each call is one contract operation (GATE_CREATE, _RAISE,
// _VALUE, _DESTROY) through the client's transport.
#include "client.hpp"

using namespace vaccel;
using lib::invoke;

extern "C" {

int vaccel_gate_create(vaccel_client* client, uint64_t context, uint64_t* gate)
{
    if (gate == nullptr)
        return lib::record_local(Errc::invalid_argument, "vaccel_gate_create: gate is NULL");
    struct vaccel_gate_create args{};
    args.context = context;
    const int rc = invoke(client, VACCEL_OP_GATE_CREATE, args);
    if (rc == 0)
        *gate = args.gate;
    return rc;
}

int vaccel_gate_raise(vaccel_client* client, uint64_t gate, uint64_t value)
{
    struct vaccel_gate_value args{};
    args.gate = gate;
    args.value = value;
    return invoke(client, VACCEL_OP_GATE_RAISE, args);
}

int vaccel_gate_value(vaccel_client* client, uint64_t gate, uint64_t* value)
{
    if (value == nullptr)
        return lib::record_local(Errc::invalid_argument, "vaccel_gate_value: value is NULL");
    struct vaccel_gate_value args{};
    args.gate = gate;
    const int rc = invoke(client, VACCEL_OP_GATE_VALUE, args);
    if (rc == 0)
        *value = args.value;
    return rc;
}

int vaccel_gate_destroy(vaccel_client* client, uint64_t gate)
{
    vaccel_handle_release args{};
    args.handle = gate;
    return invoke(client, VACCEL_OP_GATE_DESTROY, args);
}

}  // extern "C"
