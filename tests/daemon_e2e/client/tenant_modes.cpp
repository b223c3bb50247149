// tenant_modes.cpp - a tenant's process for the tenant-totals script: one
// of several processes of one user, each holding what it could get.
//
// Owns: the mode's protocol with tenant_totals.sh. Decides: the mode prints
// exactly one line, "held" once its session, context and buffer exist, or
// "refused: <libvaccel's sentence>" at the first refusal, and exits 0 in
// both cases (the script judges which processes should hold); a holder
// keeps everything until its stdin closes, then releases and exits.
#include <grp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "e2e_client.hpp"
#include "modes.hpp"

namespace vaccel::e2e {

namespace {

void say(const std::string& line)
{
    std::fputs((line + "\n").c_str(), stdout);
    std::fflush(stdout);
}

int refused()
{
    say(std::string("refused: ") + vaccel_last_error_message());
    return 0;
}

}  // namespace

int tenant_hold_mode(std::uint32_t uid, std::uint64_t bytes)
{
    E2E_EXPECT(setgroups(0, nullptr) == 0 && setgid(uid) == 0 && setuid(uid) == 0,
               "dropping to uid/gid {}: {} (run as root)", uid, std::strerror(errno));
    vaccel_client* client = nullptr;
    if (vaccel_client_open(nullptr, &client) != 0)
        return refused();
    // The socket transport admits the session at connect and answers its
    // first request: a refused session fails here at the latest.
    std::uint32_t devices = 0;
    if (vaccel_device_count(client, &devices) != 0)
        return refused();
    std::uint64_t context = 0;
    if (vaccel_context_create(client, 0, &context) != 0)
        return refused();
    struct vaccel_buffer_alloc req{};
    req.context = context;
    req.bytes = bytes;
    req.domain = VACCEL_DOMAIN_HOST;
    req.usage = VACCEL_USAGE_ALL;
    req.access = VACCEL_ACCESS_RW;
    if (vaccel_buffer_alloc(client, &req) != 0)
        return refused();
    say("held");
    char ignored[64];
    while (::read(STDIN_FILENO, ignored, sizeof ignored) > 0) {
    }
    E2E_CALL(vaccel_buffer_free(client, req.buffer));
    E2E_CALL(vaccel_context_destroy(client, context));
    vaccel_client_close(client);
    return 0;
}

}  // namespace vaccel::e2e
