// run_cmd.cpp - `vaccelctl run MODEL.tosa`: one program, run N times.
//
// Owns: the sequence of contract calls of a run: pick the device, create a
// context and a queue, load the model (its file bytes, format TOSA, the
// device's default target), read the program's slots, check every input file
// against its slot, allocate one buffer per slot (inputs: read access,
// storage + transfer-dst; outputs: write access, storage + transfer-src),
// write the inputs once, then vaccel_run --warmup times untimed and
// --repeat times timed,
// read every output and write it as .npy. Decides: inputs must match their
// slot's dtype and shape exactly (no implicit reshape or cast); every run
// must complete, and the outputs written are those of the last run; the
// output directory is made only once a run has completed; Ctrl-C stops
// after the run in progress and writes what the runs so far gave
// (run_progress.hpp), exiting 130. A model
// with variables is loaded rewritten (model_variables.hpp): --variable sets
// initial values, and each variable's value after the last run is written
// as variable.<NAME>.npy with the outputs.
// Ownership: every handle belongs to the Session's client; closing the
// client on return releases them all, so no path frees them one by one.
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "commands.hpp"
#include "onnx_model.hpp"
#include "device_spec.hpp"
#include "model_variables.hpp"
#include "report.hpp"
#include "run_progress.hpp"
#include "session.hpp"
#include "tensor_files.hpp"

namespace vaccel::ctl {
namespace {

struct Slot {
    struct vaccel_program_slot info {};
    std::string name;
    npy::DType dtype = npy::DType::f4;
    std::vector<std::int64_t> shape;
    std::uint64_t buffer = 0;
};

Result<std::vector<std::uint8_t>> read_model(const std::string& path)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return refuse(fmt::format("model {} is not a readable file{}", path,
                                  ec ? fmt::format(" ({})", ec.message()) : ""));
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file)
        return refuse(fmt::format("cannot open model {}: {}", path, std::strerror(errno)));
    std::vector<std::uint8_t> bytes;
    std::uint8_t chunk[65536];
    std::size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0)
        bytes.insert(bytes.end(), chunk, chunk + got);
    bool failed = std::ferror(file) != 0;
    std::fclose(file);
    if (failed)
        return refuse(fmt::format("cannot read model {}", path));
    return bytes;
}

// A device domain the device has memory for: device-local first.
std::uint32_t buffer_domain(std::uint32_t memory_caps)
{
    if (memory_caps & VACCEL_MEM_DEVICE_LOCAL)
        return VACCEL_DOMAIN_DEVICE;
    if (memory_caps & VACCEL_MEM_SHARED)
        return VACCEL_DOMAIN_SHARED;
    return VACCEL_DOMAIN_HOST;
}

Result<Slot> query_slot(const Session& session, std::uint64_t program, std::uint32_t index)
{
    Slot slot;
    int rc = vaccel_program_slot(session.client(), program, index, &slot.info);
    if (rc < 0)
        return std::unexpected(
            call_refusal(rc, fmt::format("cannot query program slot {}", index)));
    slot.info.slot = index;
    slot.name = bounded(slot.info.name);
    if (slot.info.rank > VACCEL_MAX_RANK)
        return refuse(fmt::format("slot {} ('{}') reports rank {}, more than the contract's {}",
                                  index, slot.name, slot.info.rank, VACCEL_MAX_RANK));
    slot.shape.assign(slot.info.shape, slot.info.shape + slot.info.rank);
    auto dtype = npy_dtype_for(slot.info.dtype, slot.name);
    if (!dtype)
        return std::unexpected(dtype.error());
    slot.dtype = *dtype;
    npy::Array probe{slot.dtype, slot.shape, {}};
    if (probe.byte_size() != slot.info.bytes)
        return refuse(fmt::format("slot {} ('{}') is {} {} but its binding size is {} bytes, "
                                  "not {}",
                                  index, slot.name, shape_brackets(slot.shape),
                                  tosa_dtype_name(slot.info.dtype), slot.info.bytes,
                                  probe.byte_size()));
    return slot;
}

// The input file must hold exactly what the slot takes, in `dtype` (the
// slot's, or an ONNX model's own type for the input).
Result<npy::Array> read_input(const Slot& slot, const std::string& file, npy::DType dtype)
{
    auto read = npy::read_file(file);
    if (!read)
        return refuse(read.error().message);
    npy::Array* array = &*read;
    if (array->dtype != dtype)
        return refuse(fmt::format("input '{}' expects {} ({}, .npy dtype {}) but {} holds {}; "
                                  "convert with arr.astype('{}')",
                                  slot.name,
                                  dtype == slot.dtype ? tosa_dtype_name(slot.info.dtype)
                                                      : std::string("the model's type"),
                                  npy::dtype_name(dtype), npy::dtype_descr(dtype), file,
                                  npy::dtype_name(array->dtype), npy::dtype_descr(dtype)));
    if (array->shape != slot.shape)
        return refuse(fmt::format("input '{}' expects shape {} but {} has shape {}", slot.name,
                                  shape_brackets(slot.shape), file, shape_brackets(array->shape)));
    return std::move(*read);
}

Result<std::uint64_t> allocate(const Session& session, std::uint64_t context,
                               const DeviceRecord& device, Slot& slot, bool input)
{
    struct vaccel_buffer_alloc req {};
    req.context = context;
    req.bytes = slot.info.bytes;
    req.domain = buffer_domain(device.info.memory_caps);
    req.usage =
        VACCEL_USAGE_STORAGE | (input ? VACCEL_USAGE_TRANSFER_DST : VACCEL_USAGE_TRANSFER_SRC);
    req.access = input ? VACCEL_ACCESS_READ : VACCEL_ACCESS_WRITE;
    int rc = vaccel_buffer_alloc(session.client(), &req);
    if (rc < 0)
        return std::unexpected(
            call_refusal(rc, fmt::format("cannot allocate {} bytes for {} '{}'", slot.info.bytes,
                                         input ? "input" : "output", slot.name)));
    slot.buffer = req.buffer;
    return req.buffer;
}

// One run (vaccel_run: submit and wait in one request); returns its time.
Result<std::uint64_t> run_once(const Session& session, std::uint64_t queue, std::uint64_t program,
                               const std::vector<vaccel_binding>& bindings)
{
    auto start = std::chrono::steady_clock::now();
    struct vaccel_status failure {};
    const int rc = vaccel_run(session.client(), queue, program, bindings.data(),
                              static_cast<std::uint32_t>(bindings.size()), 0, &failure);
    auto stop = std::chrono::steady_clock::now();
    if (rc < 0 && failure.error != VACCEL_OK) {
        std::array<char, 512> why{};
        vaccel_status_message(&failure, why.data(), why.size());
        return refuse(fmt::format("the run did not complete: {}: {}",
                                  failure.error == VACCEL_E_CANCELLED ? "cancelled" : "failed",
                                  why.data()));
    }
    if (rc < 0)
        return std::unexpected(call_refusal(rc, "the device refused the submission"));
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
}

// `dtype`: the .npy file's (the slot's, or an ONNX model's own type).
TensorReport tensor_report(const Slot& slot, npy::DType dtype, std::string file)
{
    return TensorReport{
        slot.info.slot, slot.name,       dtype,          tosa_dtype_name(slot.info.dtype),
        slot.shape,     slot.info.bytes, std::move(file)};
}


// An ONNX model's own types at the graph's inputs and outputs, by name
// (none for a TOSA model): where the graph carries another type (INT64 as
// INT32), the .npy files hold the model's type and are converted.
struct ModelPorts {
#ifdef VACCEL_HAS_ONNX
    std::map<std::string, onnx::Port> inputs, outputs;
#endif
};

// The .npy dtype input `slot` is given in.
npy::DType input_dtype(const ModelPorts& ports, const Slot& slot)
{
#ifdef VACCEL_HAS_ONNX
    if (auto it = ports.inputs.find(slot.name); it != ports.inputs.end())
        return npy_dtype_of_onnx(it->second.onnx_type).value_or(slot.dtype);
#endif
    (void)ports;
    return slot.dtype;
}

Result<npy::Array> input_for_graph(const ModelPorts& ports, const Slot& slot, npy::Array array,
                                   const std::string& file)
{
#ifdef VACCEL_HAS_ONNX
    if (auto it = ports.inputs.find(slot.name); it != ports.inputs.end() && array.dtype != slot.dtype)
        return to_graph_array(it->second, array, slot.dtype, file);
#endif
    (void)ports, (void)slot, (void)file;
    return array;
}

Result<npy::Array> output_for_model(const ModelPorts& ports, const Slot& slot, npy::Array array)
{
#ifdef VACCEL_HAS_ONNX
    if (auto it = ports.outputs.find(slot.name); it != ports.outputs.end())
        return to_model_array(it->second, array);
#endif
    (void)ports, (void)slot;
    return array;
}

#ifdef VACCEL_HAS_ONNX
// A .onnx model is imported here (onnx_model.hpp): each NAME=FILE.npy input
// fixes that input's shape; one whose value sets a shape or an attribute
// (onnx::value_inputs: a Reshape's shape, a Resize's scales) is folded into
// the graph as a constant and no longer bound. Every other input is bound
// in the model's own type (INT64 token ids narrowed at the boundary).
Result<std::vector<std::uint8_t>> import_for_run(const std::string& model,
                                                 const std::vector<std::uint8_t>& bytes,
                                                 std::vector<std::string>& inputs,
                                                 ModelPorts& ports)
{
    auto folded = onnx_value_inputs(model, bytes);
    if (!folded) return std::unexpected(folded.error());
    OnnxImport how;
    std::vector<std::string> bound;
    for (const std::string& argument : inputs) {
        const auto eq = argument.find('=');
        if (eq == std::string::npos) {
            bound.push_back(argument);
            continue;
        }
        auto array = npy::read_file(argument.substr(eq + 1));
        if (!array) return refuse(array.error().message);
        const std::string name = argument.substr(0, eq);
        if (std::ranges::find(*folded, name) != folded->end()) {
            how.values.emplace(name, std::move(*array));
            continue;
        }
        how.shapes[name] = array->shape;
        bound.push_back(argument);
    }
    auto imported = import_onnx(model, bytes, how);
    if (!imported) return std::unexpected(imported.error());
    inputs = std::move(bound);
    for (const onnx::Port& port : imported->input_ports) ports.inputs.emplace(port.name, port);
    for (const onnx::Port& port : imported->output_ports) ports.outputs.emplace(port.name, port);
    return std::move(imported->tosa);
}
#endif

// A model loaded on one device: its context, queue and program.
struct Loaded {
    std::uint64_t context = 0, queue = 0, program = 0;
    std::uint32_t input_count = 0, output_count = 0;
};

struct LoadRefusal {
    Refusal refusal;
    bool cannot_run = false;  // the device does not run this graph (another may)
    std::string why;          // the device's own reason, for a note
};

// Opens a context and a queue on `device` and loads the model there. With
// keep false (asking whether the device runs it), the context is destroyed
// again, with everything in it.
std::expected<Loaded, LoadRefusal> load_on(const Session& session, const DeviceRecord& device,
                                           const std::vector<std::uint8_t>& bytes,
                                           const std::string& model_path, bool keep = true)
{
    vaccel_client* client = session.client();
    const std::string device_text = fmt::format("device [{}] {}", device.index, bounded(device.info.name));
    Loaded loaded;
    int rc = vaccel_context_create(client, device.index, &loaded.context);
    if (rc < 0)
        return std::unexpected(
            LoadRefusal{call_refusal(rc, fmt::format("cannot open a context on {}", device_text)), false, {}});
    rc = vaccel_queue_create(client, loaded.context, &loaded.queue);
    if (rc < 0)
        return std::unexpected(
            LoadRefusal{call_refusal(rc, fmt::format("cannot create a queue on {}", device_text)), false, {}});
    rc = vaccel_program_load(client, loaded.context, VACCEL_FORMAT_TOSA, nullptr, bytes.data(),
                             bytes.size(), &loaded.program, &loaded.input_count,
                             &loaded.output_count);
    if (rc < 0) {
        const vaccel_status* status = vaccel_last_status();
        const bool cannot_run = status != nullptr && (status->error == VACCEL_E_UNSUPPORTED ||
                                                      status->error == VACCEL_E_INCOMPATIBLE);
        LoadRefusal refused{call_refusal(rc, fmt::format("cannot load model {} on {}", model_path,
                                                         device_text)),
                            cannot_run, vaccel_last_error_message()};
        vaccel_context_destroy(client, loaded.context);
        return std::unexpected(std::move(refused));
    }
    if (!keep) vaccel_context_destroy(client, loaded.context);
    return loaded;
}

}  // namespace

Result<void> run_command(const RunOptions& given)
{
    RunOptions options = given;
    ModelPorts ports;
    auto file = read_model(options.model);
    if (!file)
        return std::unexpected(file.error());
    if (is_onnx_path(options.model)) {
#ifdef VACCEL_HAS_ONNX
        auto tosa = import_for_run(options.model, *file, options.inputs, ports);
        if (!tosa) return std::unexpected(tosa.error());
        file = std::move(*tosa);
#else
        return refuse(fmt::format("{} is an ONNX model and this vaccelctl was built without the "
                                  "ONNX importer (VACCEL_ONNX=OFF)",
                                  options.model));
#endif
    }
    std::vector<std::pair<std::string, npy::Array>> initial;
    for (const std::string& argument : options.variables) {
        auto named = variable_argument(argument);
        if (!named)
            return std::unexpected(named.error());
        auto array = npy::read_file(named->second);
        if (!array)
            return refuse(fmt::format("--variable {}: {}", named->first, array.error().message));
        initial.emplace_back(named->first, std::move(*array));
    }
    // A model with variables is loaded with each variable's final value as
    // one more output (model_variables.hpp).
    auto model = expose_variables(*file, initial);
    if (!model)
        return std::unexpected(model.error());
    auto spec = parse_device_spec(options.device);
    if (!spec)
        return std::unexpected(spec.error());
    auto session = Session::open(options.verbose, /*announce_fallback=*/!options.quiet);
    if (!session)
        return std::unexpected(session.error());
    auto devices = session->devices();
    if (!devices)
        return std::unexpected(devices.error());
    std::vector<DeviceSummary> summaries;
    for (const auto& device : *devices)
        summaries.push_back(summary_of(device));
    auto chosen = select_device(*spec, summaries, VACCEL_FORMAT_TOSA);
    if (!chosen)
        return std::unexpected(chosen.error());
    const DeviceRecord* picked = &(*devices)[*chosen];
    auto loaded = load_on(*session, *picked, model->bytes, options.model);
    if (!loaded && loaded.error().cannot_run) {
        // Which other devices run it, each asked itself (the refusal alone
        // does not say where the graph would go).
        std::vector<const DeviceRecord*> able;
        for (const DeviceRecord& other : *devices)
            if (&other != picked && admits(summary_of(other), VACCEL_FORMAT_TOSA) &&
                load_on(*session, other, model->bytes, options.model, /*keep=*/false))
                able.push_back(&other);
        if (spec->form == DeviceSpec::Form::automatic && !able.empty()) {
            if (!options.quiet)
                fmt::print(stderr, "vaccelctl: [{}] {} cannot run {} ({}); running it on [{}] {}\n",
                           picked->index, bounded(picked->info.name),
                           std::filesystem::path(options.model).filename().string(),
                           loaded.error().why, able.front()->index, bounded(able.front()->info.name));
            picked = able.front();
            loaded = load_on(*session, *picked, model->bytes, options.model);
        } else {
            std::vector<std::string> names;
            for (const DeviceRecord* d : able)
                names.push_back(fmt::format("[{}] {} (--device {})", d->index, bounded(d->info.name), d->index));
            return refuse(fmt::format("{}; {}", loaded.error().refusal.message,
                                      names.empty() ? std::string("no other device here runs it either")
                                                    : fmt::format("it runs on {}", fmt::join(names, ", "))));
        }
    }
    if (!loaded)
        return std::unexpected(loaded.error().refusal);
    const DeviceRecord& device = *picked;
    const auto [context, queue, program, input_count, output_count] = *loaded;
    vaccel_client* client = session->client();
    int rc = 0;

    std::vector<Slot> inputs, outputs;
    for (std::uint32_t i = 0; i < input_count + output_count; ++i) {
        auto slot = query_slot(*session, program, i);
        if (!slot)
            return std::unexpected(slot.error());
        (i < input_count ? inputs : outputs).push_back(std::move(*slot));
    }

    std::vector<std::string> input_names;
    for (const auto& slot : inputs)
        input_names.push_back(slot.name);
    auto files = assign_inputs(options.inputs, input_names, [](const std::string& path) {
        std::error_code ec;
        return std::filesystem::is_regular_file(path, ec);
    });
    if (!files)
        return std::unexpected(files.error());
    std::vector<npy::Array> arrays;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        auto array = read_input(inputs[i], (*files)[i], input_dtype(ports, inputs[i]));
        if (!array)
            return std::unexpected(array.error());
        auto converted = input_for_graph(ports, inputs[i], std::move(*array), (*files)[i]);
        if (!converted)
            return std::unexpected(converted.error());
        arrays.push_back(std::move(*converted));
    }

    std::vector<std::string> output_names;
    for (const auto& slot : outputs)
        output_names.push_back(slot.name);
    auto output_files = output_file_names(output_names);
    std::filesystem::path dir(options.output_dir);
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
        return refuse(fmt::format("cannot write outputs into {}: it is not a directory", dir.string()));

    std::vector<vaccel_binding> bindings;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        auto buffer = allocate(*session, context, device, inputs[i], true);
        if (!buffer)
            return std::unexpected(buffer.error());
        rc = vaccel_buffer_write(client, *buffer, 0, arrays[i].data.data(), arrays[i].data.size());
        if (rc < 0)
            return std::unexpected(call_refusal(
                rc, fmt::format("cannot write input '{}' to the device", inputs[i].name)));
        bindings.push_back(
            {inputs[i].info.slot, VACCEL_ACCESS_READ, *buffer, 0, inputs[i].info.bytes});
    }
    for (auto& slot : outputs) {
        auto buffer = allocate(*session, context, device, slot, false);
        if (!buffer)
            return std::unexpected(buffer.error());
        bindings.push_back({slot.info.slot, VACCEL_ACCESS_WRITE, *buffer, 0, slot.info.bytes});
    }

    std::vector<std::uint64_t> samples;
    unsigned done = 0;
    bool interrupted = false;
    {
        RunProgress progress(!options.quiet, options.warmup, options.repeat);
        for (; done < options.warmup + options.repeat && !progress.interrupted(); ++done) {
            auto elapsed = run_once(*session, queue, program, bindings);
            if (!elapsed)
                return std::unexpected(elapsed.error());
            if (done >= options.warmup) samples.push_back(*elapsed);
            progress.ran(done + 1, *elapsed);
        }
        interrupted = progress.interrupted();
    }
    std::filesystem::create_directories(dir, ec);
    if (ec)
        return refuse(
            fmt::format("cannot create output directory {}: {}", dir.string(), ec.message()));

    RunReport report;
    report.planned = options.repeat;
    report.interrupted = interrupted;
    report.model = options.model;
    report.device = device;
    for (std::size_t i = 0; i < inputs.size(); ++i)
        report.inputs.push_back(tensor_report(inputs[i], input_dtype(ports, inputs[i]), (*files)[i]));
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const Slot& slot = outputs[i];
        npy::Array array{slot.dtype, slot.shape, std::vector<std::uint8_t>(slot.info.bytes)};
        rc = vaccel_buffer_read(client, slot.buffer, 0, array.data.data(), array.data.size());
        if (rc < 0)
            return std::unexpected(call_refusal(
                rc, fmt::format("cannot read output '{}' from the device", slot.name)));
        std::filesystem::path path = (dir / output_files[i].file_name).lexically_normal();
        auto model_array = output_for_model(ports, slot, std::move(array));
        if (!model_array)
            return std::unexpected(model_array.error());
        const npy::DType written_dtype = model_array->dtype;
        auto written = npy::write_file(path, *model_array);
        if (!written)
            return refuse(written.error().message);
        if (output_files[i].renamed && !options.quiet)
            fmt::print(stderr,
                       "vaccelctl: output '{}' written as {} (its name is not a plain file "
                       "name: characters outside [A-Za-z0-9._+-] were replaced by '_')\n",
                       slot.name, path.string());
        report.outputs.push_back(tensor_report(slot, written_dtype, path.string()));
    }
    report.timing = timing_of(std::move(samples));

    if (options.json)
        fmt::print("{}\n", run_json(report).dump(2));
    else
        fmt::print("{}\n", run_summary(report));
    if (interrupted)
        return refuse(fmt::format("interrupted (Ctrl-C) after {} of {} timed runs{}; the outputs "
                                  "and timings above are those of the runs that completed",
                                  samples.size(), options.repeat,
                                  done <= options.warmup ? " (during the warm-up)" : ""),
                      interrupted_status);
    return {};
}

}  // namespace vaccel::ctl
