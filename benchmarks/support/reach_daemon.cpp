// reach_daemon.cpp - the benchmarks' daemon (see reach_daemon.hpp).
#include "reach_daemon.hpp"

#include <stdlib.h>

#include <iostream>

namespace vaccel::bench {

bool reach_daemon(const std::string& socket, const std::string& binary, const char* argv0,
                  int cpu, VacceldProcess& started, std::string& path,
                  const std::string& devices)
{
    if (!socket.empty()) {
        if (!test::connectable(socket)) {
            std::cerr << "no daemon accepts connections on " << socket << '\n';
            return false;
        }
        path = socket;
    } else {
        test::VacceldOptions options;
        options.binary = binary.empty() ? test::find_vacceld(argv0) : binary;
        options.cpu = cpu;
        options.config = test::devices_config(devices);
        if (options.binary.empty()) {
            std::cerr << "vacceld not found: pass --vacceld PATH or --socket PATH, or set "
                         "VACCELD (build it with `cmake --build <dir> --target vacceld`)\n";
            return false;
        }
        if (!started.start(options)) {
            std::cerr << started.error() << "; vacceld log:\n" << started.log_text() << '\n';
            return false;
        }
        path = started.socket_path();
    }
    setenv("VACCEL_SOCKET", path.c_str(), 1);
    return true;
}

}  // namespace vaccel::bench
