// cdi_publish.cpp - the spec vacceld writes (cdi_publish.hpp).
#include "cdi_publish.hpp"

#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "vaccel/cdi/spec.hpp"

namespace vaccel::daemon {

namespace {

// The client node the module makes beside /dev/vaccel-server.
constexpr const char* client_node = "/dev/vaccel";

std::string installed_vaccelctl()
{
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        return {};
    const auto beside = self.parent_path().parent_path() / "bin" / "vaccelctl";
    return std::filesystem::exists(beside, ec) ? beside.string() : std::string{};
}

}  // namespace

std::string publish_cdi_spec(const CdiPublication& what, engine::DeviceManager& devices)
{
    cdi::SpecInput input;
    for (std::uint32_t i = 0; i < devices.count(); ++i) {
        const vaccel_device_info& info = devices.device(i)->info();
        input.devices.push_back({i, std::string(info.name, strnlen(info.name, VACCEL_NAME_LEN))});
    }
    std::error_code ec;
    if (what.kernel_attached && std::filesystem::is_character_file(client_node, ec))
        input.kernel_node = client_node;
    input.socket_path = what.socket_path;
    input.hook_program = what.hook_program.empty() ? installed_vaccelctl() : what.hook_program;
    if (input.hook_program.empty())
        return "no vaccelctl beside vacceld (../bin/vaccelctl) to serve as the CDI hook; name it "
               "with --cdi-hook PATH";
    input.written_by = "vacceld --cdi-spec";
    if (std::string problem = cdi::input_problem(input); !problem.empty())
        return problem;
    if (std::string error = cdi::write_spec(what.spec_path, cdi::spec_yaml(input)); !error.empty())
        return error;
    return {};
}

}  // namespace vaccel::daemon
