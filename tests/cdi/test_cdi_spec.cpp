// test_cdi_spec.cpp - the CDI spec of vaccel's devices (userspace/cdi).
//
// Specifies: the exact YAML for a socket-served and a node-served daemon
// (devices "all" and one per index, the createRuntime hook per device,
// the way in and the poststop hook once), quoting that keeps any path one
// string, the refusals of input that cannot make a spec, and the atomic
// write (mode 0644, no temporary file left).
#include "vaccel/cdi/spec.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cmocka.hpp"

using namespace vaccel::cdi;

namespace {

SpecInput two_devices()
{
    SpecInput input;
    input.devices = {{0, "CPU"}, {1, "llvmpipe (LLVM 15.0.6, 256 bits)"}};
    input.socket_path = "/run/vaccel/vacceld.sock";
    input.hook_program = "/usr/bin/vaccelctl";
    input.written_by = "test";
    return input;
}

const char* const hook_args =
    "[\"/usr/bin/vaccelctl\", \"--socket\", \"/run/vaccel/vacceld.sock\", \"cdi\", \"hook\"";

void socket_spec_is_exact(void**)
{
    const std::string expected = std::string(
        "# vaccel's devices for containers (CDI 0.5.0), written by test.\n"
        "# Use: podman run --device vaccel.dev/accel=all IMAGE ...   (or ={index} for one device)\n"
        "# Containers reach vacceld through its socket /run/vaccel/vacceld.sock. Regenerate after "
        "the daemon's devices change.\n"
        "cdiVersion: \"0.5.0\"\n"
        "kind: \"vaccel.dev/accel\"\n"
        "devices:\n"
        "  # every device the daemon serves\n"
        "  - name: \"all\"\n"
        "    containerEdits:\n"
        "      hooks:\n"
        "        - hookName: \"createRuntime\"\n"
        "          path: \"/usr/bin/vaccelctl\"\n"
        "          args: ") + hook_args + ", \"create\", \"--devices\", \"all\"]\n"
        "  # device 0: CPU (its sessions may open this device only)\n"
        "  - name: \"0\"\n"
        "    containerEdits:\n"
        "      hooks:\n"
        "        - hookName: \"createRuntime\"\n"
        "          path: \"/usr/bin/vaccelctl\"\n"
        "          args: " + hook_args + ", \"create\", \"--devices\", \"0\"]\n"
        "  # device 1: llvmpipe (LLVM 15.0.6, 256 bits) (its sessions may open this device only)\n"
        "  - name: \"1\"\n"
        "    containerEdits:\n"
        "      hooks:\n"
        "        - hookName: \"createRuntime\"\n"
        "          path: \"/usr/bin/vaccelctl\"\n"
        "          args: " + hook_args + ", \"create\", \"--devices\", \"1\"]\n"
        "containerEdits:\n"
        "  env: [\"VACCEL_SOCKET=/run/vaccel/vacceld.sock\"]\n"
        "  mounts:\n"
        "    - hostPath: \"/run/vaccel\"\n"
        "      containerPath: \"/run/vaccel\"\n"
        "      options: [\"bind\", \"rw\"]\n"
        "  hooks:\n"
        "    - hookName: \"poststop\"\n"
        "      path: \"/usr/bin/vaccelctl\"\n"
        "      args: " + hook_args + ", \"remove\"]\n";
    assert_string_equal(spec_yaml(two_devices()).c_str(), expected.c_str());
}

void node_spec_gives_the_node_and_no_socket(void**)
{
    SpecInput input = two_devices();
    input.kernel_node = "/dev/vaccel";
    const std::string text = spec_yaml(input);
    assert_non_null(std::strstr(text.c_str(), "containerEdits:\n  deviceNodes:\n    - path: "
                                              "\"/dev/vaccel\"\n  hooks:\n"));
    assert_null(std::strstr(text.c_str(), "VACCEL_SOCKET"));
    assert_null(std::strstr(text.c_str(), "mounts:"));
    // The hooks still reach the daemon through its socket.
    assert_non_null(std::strstr(text.c_str(), "\"--socket\", \"/run/vaccel/vacceld.sock\""));
}

void socket_elsewhere_is_mounted_at_run_vaccel(void**)
{
    SpecInput input = two_devices();
    input.socket_path = "/tmp/d/my.sock";
    const std::string text = spec_yaml(input);
    assert_non_null(std::strstr(text.c_str(), "env: [\"VACCEL_SOCKET=/run/vaccel/my.sock\"]"));
    assert_non_null(std::strstr(text.c_str(), "hostPath: \"/tmp/d\"\n"));
}

void quoting_keeps_any_path_one_string(void**)
{
    SpecInput input = two_devices();
    input.hook_program = "/opt/a \"b\"\\c\n";
    input.devices = {{0, "x\ny\x01"}};
    const std::string text = spec_yaml(input);
    assert_non_null(std::strstr(text.c_str(), "path: \"/opt/a \\\"b\\\"\\\\c\\n\""));
    // A device name only appears in a comment, where it cannot end the line.
    assert_non_null(std::strstr(text.c_str(), "# device 0: x?y? (its"));
}

void refuses_input_that_makes_no_spec(void**)
{
    SpecInput input = two_devices();
    assert_string_equal(input_problem(input).c_str(), "");
    input.devices.clear();
    assert_non_null(std::strstr(input_problem(input).c_str(), "serves no device"));
    input = two_devices();
    input.socket_path = "run/vacceld.sock";
    assert_non_null(std::strstr(input_problem(input).c_str(), "is not absolute"));
    input = two_devices();
    input.hook_program = "vaccelctl";
    assert_non_null(std::strstr(input_problem(input).c_str(), "not an absolute path"));
}

void write_is_whole_and_world_readable(void**)
{
    char dir[] = "/tmp/vaccel-cdi-test.XXXXXX";
    assert_non_null(mkdtemp(dir));
    const std::string path = std::string(dir) + "/cdi/vaccel.yaml";
    const mode_t old = umask(077);
    assert_string_equal(write_spec(path, "one\n").c_str(), "");
    assert_string_equal(write_spec(path, "two\n").c_str(), "");
    umask(old);
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    assert_string_equal(text.str().c_str(), "two\n");
    struct stat st {};
    assert_int_equal(stat(path.c_str(), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    assert_false(std::filesystem::exists(path + ".tmp"));
    assert_non_null(std::strstr(write_spec("/proc/vaccel/x.yaml", "x").c_str(), "cannot"));
    std::filesystem::remove_all(dir);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(socket_spec_is_exact),
        cmocka_unit_test(node_spec_gives_the_node_and_no_socket),
        cmocka_unit_test(socket_elsewhere_is_mounted_at_run_vaccel),
        cmocka_unit_test(quoting_keeps_any_path_one_string),
        cmocka_unit_test(refuses_input_that_makes_no_spec),
        cmocka_unit_test(write_is_whole_and_world_readable),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
