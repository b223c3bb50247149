// status.cpp - errors as a person reads them, and the per-thread last status.
//
// Owns: the thread-local last status and its sentence. Decides: the sentence
// is vaccel::describe() of the status, built lazily when asked for, except
// for refusals the library makes itself, which carry their own sentence.
#include <array>
#include <cstring>
#include <string>

#include "client.hpp"

namespace vaccel::lib {

namespace {

struct LastCall {
    vaccel_status status{};
    std::string local_message;  // set only for the library's own refusals
    std::string message;        // the sentence last handed out
};

LastCall& last_call()
{
    thread_local LastCall last;
    return last;
}

constexpr std::uint32_t contract_error_count = VACCEL_E_COUNT;

// "Name: meaning", one per contract code, built once.
const std::array<std::string, contract_error_count>& error_sentences()
{
    static const std::array<std::string, contract_error_count> sentences = [] {
        std::array<std::string, contract_error_count> out;
        for (std::uint32_t code = 0; code < contract_error_count; ++code) {
            const auto errc = static_cast<Errc>(code);
            out[code] = std::string(error_name(errc)) + ": " + std::string(error_meaning(errc));
        }
        return out;
    }();
    return sentences;
}

}  // namespace

void record_status(const vaccel_status& status)
{
    LastCall& last = last_call();
    last.status = status;
    last.local_message.clear();
}

int record_local(Errc code, std::string message)
{
    LastCall& last = last_call();
    last.status = vaccel_status{};
    last.status.error = static_cast<std::uint32_t>(code);
    last.local_message = std::move(message);
    return error_errno(code);
}

int record_explained(const vaccel_status& status, std::string message)
{
    LastCall& last = last_call();
    last.status = status;
    last.local_message = std::move(message);
    return error_errno(Error::from_status(status).code);
}

}  // namespace vaccel::lib

using namespace vaccel;

extern "C" {

const char* vaccel_strerror(int negative_errno_or_contract_code)
{
    const auto& sentences = lib::error_sentences();
    const int value = negative_errno_or_contract_code;
    if (value >= 0)
        return static_cast<std::uint32_t>(value) < sentences.size()
                   ? sentences[static_cast<std::size_t>(value)].c_str()
                   : "unknown contract error";
    for (std::uint32_t code = 1; code < sentences.size(); ++code)
        if (error_errno(static_cast<Errc>(code)) == value)
            return sentences[code].c_str();
    // Not one of the contract's errnos (e.g. -EPROTONOSUPPORT from open).
    return strerror(-value);
}

const char* vaccel_error_name(uint32_t contract_error)
{
    if (contract_error >= VACCEL_E_COUNT)
        return "Unknown";
    // error_name() returns views of string literals: NUL-terminated.
    return error_name(static_cast<Errc>(contract_error)).data();
}

const struct vaccel_status* vaccel_last_status(void)
{
    return &lib::last_call().status;
}

const char* vaccel_last_error_message(void)
{
    lib::LastCall& last = lib::last_call();
    if (!last.local_message.empty())
        last.message = last.local_message;
    else if (last.status.error == VACCEL_OK)
        last.message.clear();
    else
        last.message = describe(Error::from_status(last.status));
    return last.message.c_str();
}

int vaccel_status_message(const struct vaccel_status* status, char* buf, size_t size)
{
    const std::string sentence =
        status == nullptr || status->error == VACCEL_OK ? std::string()
                                                        : describe(Error::from_status(*status));
    if (buf != nullptr && size > 0) {
        const std::size_t n = sentence.size() < size - 1 ? sentence.size() : size - 1;
        std::memcpy(buf, sentence.data(), n);
        buf[n] = '\0';
    }
    return static_cast<int>(sentence.size());
}

}  // extern "C"
