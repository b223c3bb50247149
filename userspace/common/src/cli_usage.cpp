// cli_usage.cpp - usage errors in the tool's voice (vaccel/cli/usage.hpp).
#include "vaccel/cli/usage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace vaccel::cli {

std::size_t edit_distance(std::string_view a, std::string_view b)
{
    std::vector<std::size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), 0);
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& names)
{
    const std::size_t allowed = std::max<std::size_t>(1, word.size() / 3);
    std::string best;
    std::size_t best_distance = allowed + 1;
    for (const std::string& name : names) {
        const std::size_t d = edit_distance(word, name);
        if (d < best_distance) {
            best = name;
            best_distance = d;
        }
    }
    return best;
}

namespace {

// The deepest command the parser entered: the tool, or its subcommands.
std::vector<const CLI::App*> parsed_chain(const CLI::App& app)
{
    std::vector<const CLI::App*> chain{&app};
    for (;;) {
        const CLI::App* next = nullptr;
        for (const CLI::App* sub : chain.back()->get_subcommands({}))
            if (sub->parsed()) next = sub;
        if (next == nullptr) return chain;
        chain.push_back(next);
    }
}

std::vector<std::string> subcommand_names(const CLI::App& at)
{
    std::vector<std::string> names;
    for (const CLI::App* sub : at.get_subcommands({})) names.push_back(sub->get_name());
    return names;
}

std::vector<std::string> option_names(const CLI::App& at)
{
    std::vector<std::string> names;
    for (const CLI::Option* option : at.get_options())
        for (const std::string& long_name : option->get_lnames()) names.push_back("--" + long_name);
    if (at.get_parent() != nullptr && at.get_fallthrough())
        for (const std::string& n : option_names(*at.get_parent())) names.push_back(n);
    return names;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& names)
{
    const std::string near = nearest(word, names);
    return near.empty() ? std::string() : fmt::format("; did you mean '{}'?", near);
}

std::string joined(const std::vector<std::string>& names)
{
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

// What follows the last ": " of the parser's message (its argument list).
std::string after_colon(const std::string& message)
{
    const auto at = message.rfind(": ");
    return at == std::string::npos ? message : message.substr(at + 2);
}

}  // namespace

std::string usage_sentence(const CLI::App& app, const CLI::ParseError& error,
                           const std::vector<std::string>& args, std::string& help)
{
    const std::vector<const CLI::App*> chain = parsed_chain(app);
    const CLI::App& at = *chain.back();
    help.clear();
    for (const CLI::App* c : chain) help += (help.empty() ? "" : " ") + c->get_name();
    const std::string message = error.what();
    const std::vector<std::string> commands = subcommand_names(at);

    if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
        if (message.find("subcommand") != std::string::npos) {
            // A misspelt command is not parsed as one: find the word that
            // was meant to be it, the first argument that is no option and
            // no command of the chain.
            for (const std::string& a : args) {
                if (a.empty() || a[0] == '-') continue;
                if (std::ranges::any_of(chain,
                                        [&](const CLI::App* c) { return c->get_name() == a; }))
                    continue;
                return fmt::format("'{}' is not a command of {}{}", a, help,
                                   did_you_mean(a, commands));
            }
            return fmt::format("{} needs a command: {}", help, joined(commands));
        }
        // "model is required", "--uid is required"
        const auto end = message.find(" is required");
        if (end != std::string::npos) {
            const std::string what = message.substr(0, end);
            return what.starts_with("-") ? fmt::format("{} needs {}", help, what)
                                         : fmt::format("{} needs its {} argument", help, what);
        }
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
        // The parser lists them last first: take an option if there is one,
        // else the first word given.
        std::vector<std::string> words;
        for (std::string rest = after_colon(message); !rest.empty();) {
            const auto space = rest.find(' ');
            words.push_back(rest.substr(0, space));
            rest = space == std::string::npos ? std::string() : rest.substr(space + 1);
        }
        auto option = std::ranges::find_if(words, [](const std::string& w) { return w.starts_with("-"); });
        if (option != words.end()) {
            const std::string name = option->substr(0, option->find('='));
            return fmt::format("{} has no option {}{}", help, name,
                               did_you_mean(name, option_names(at)));
        }
        const std::string word = words.empty() ? std::string() : words.back();
        if (!commands.empty())
            return fmt::format("'{}' is not a command of {}{}", word, help,
                               did_you_mean(word, commands));
        return fmt::format("{} takes no argument '{}'", help, word);
    }
    if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
        // "Could not convert: --uid = abc"
        const auto colon = message.find(": ");
        const auto equals = message.find(" = ");
        if (colon != std::string::npos && equals != std::string::npos && equals > colon)
            return fmt::format("{} does not take '{}': it takes a number",
                               message.substr(colon + 2, equals - colon - 2),
                               message.substr(equals + 3));
    }
    if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
        // "--repeat: Value 0 not in range 1 to 1000000",
        // "--log-level: loud not in {trace,debug}"
        const auto colon = message.find(": ");
        if (colon != std::string::npos) {
            const std::string option = message.substr(0, colon);
            std::string rest = message.substr(colon + 2);
            if (rest.starts_with("Value ")) rest = rest.substr(6);
            const auto range = rest.find(" not in range ");
            if (range != std::string::npos)
                return fmt::format("{} takes {}, not {}", option,
                                   rest.substr(range + 14), rest.substr(0, range));
            const auto set = rest.find(" not in {");
            if (set != std::string::npos) {
                std::string members = rest.substr(set + 9);
                if (!members.empty() && members.back() == '}') members.pop_back();
                std::ranges::replace(members, ',', '|');
                return fmt::format("{} takes one of {}, not '{}'", option, members,
                                   rest.substr(0, set));
            }
        }
    }
    std::string sentence = message;
    if (!sentence.empty()) sentence[0] = static_cast<char>(std::tolower(sentence[0]));
    return sentence;
}

std::optional<int> parse(CLI::App& app, int argc, char** argv)
{
    try {
        app.parse(argc, argv);
        return std::nullopt;
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::vector<std::string> args(argv + 1, argv + argc);
        std::string help;
        const std::string sentence = usage_sentence(app, e, args, help);
        const std::string tool = app.get_name();
        std::fprintf(stderr, "%s: %s\n%s: see '%s --help'\n", tool.c_str(), sentence.c_str(),
                     tool.c_str(), help.c_str());
        return 2;
    }
}

}  // namespace vaccel::cli
