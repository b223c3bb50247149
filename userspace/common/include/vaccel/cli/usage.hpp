// usage.hpp - a command line that vaccel's tools (vaccelctl, vacceld)
// cannot parse, said in the tool's own voice.
//
// Decides:
//  - a usage error exits 2, as command-line tools conventionally do (1 is
//    a refusal of a well-formed command); --help and --version print as
//    the argument parser does and exit 0;
//  - the message is "TOOL: SENTENCE" (a sentence of ours, never the
//    parser's stock text), then "TOOL: see 'TOOL ... --help'" for the
//    command that was being parsed;
//  - a word that is close to a command or option the tool knows gets
//    "did you mean 'devices'?" (at most a third of its letters differ).
// Pure: reads the parser's state after it failed, writes nothing itself.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vaccel::cli {

// The number of single-letter insertions, deletions and substitutions
// between `a` and `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name in `names` nearest to `word`, when it is near enough to be
// what was meant; else empty.
std::string nearest(std::string_view word, const std::vector<std::string>& names);

// The sentence for `error`, which `app` raised parsing `args` (argv
// without the program name). `help` is set to the command whose --help to
// point at ("vaccelctl run").
std::string usage_sentence(const CLI::App& app, const CLI::ParseError& error,
                           const std::vector<std::string>& args, std::string& help);

// Parses argv into `app`: nothing when the command line parsed and the
// tool should go on, else the exit status (0 after --help or --version,
// 2 after a usage error, printed on stderr as the header says).
std::optional<int> parse(CLI::App& app, int argc, char** argv);

}  // namespace vaccel::cli
