// header_dict.cpp - a strict reader of the .npy header dictionary.
//
// Owns: the tokenizer and grammar of the subset of Python literals NumPy
// writes: {'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }.
// Decides: single- or double-quoted strings without escapes, decimal
// integers, a one-element tuple written with its comma as Python requires,
// an optional trailing comma, and only blanks (ending in '\n') after '}'.
#include "header_dict.hpp"

#include <fmt/format.h>

#include <limits>

namespace vaccel::npy::detail {
namespace {

class DictReader {
public:
    DictReader(std::string_view text, std::string_view origin) : text_(text), origin_(origin) {}

    Result<HeaderDict> read()
    {
        HeaderDict dict;
        bool have_descr = false, have_order = false, have_shape = false;
        skip_blanks();
        if (!take('{'))
            return refuse("the header does not start with '{'");
        for (;;) {
            skip_blanks();
            if (take('}'))
                break;
            auto key = read_string();
            if (!key)
                return std::unexpected(key.error());
            skip_blanks();
            if (!take(':'))
                return refuse(fmt::format("expected ':' after key '{}'", *key));
            skip_blanks();
            if (*key == "descr") {
                if (have_descr)
                    return refuse("key 'descr' appears twice");
                if (peek() == '[')
                    return refuse_plain(fmt::format(
                        "file {} holds a structured dtype (a list of fields); vaccel reads "
                        "plain numeric arrays: save each field as its own array",
                        origin_));
                auto descr = read_string();
                if (!descr)
                    return std::unexpected(descr.error());
                dict.descr = std::move(*descr);
                have_descr = true;
            } else if (*key == "fortran_order") {
                if (have_order)
                    return refuse("key 'fortran_order' appears twice");
                if (take_word("True"))
                    dict.fortran_order = true;
                else if (take_word("False"))
                    dict.fortran_order = false;
                else
                    return refuse("'fortran_order' is neither True nor False");
                have_order = true;
            } else if (*key == "shape") {
                if (have_shape)
                    return refuse("key 'shape' appears twice");
                auto shape = read_shape();
                if (!shape)
                    return std::unexpected(shape.error());
                dict.shape = std::move(*shape);
                have_shape = true;
            } else {
                return refuse(fmt::format("unknown key '{}' (NumPy writes only 'descr', "
                                          "'fortran_order' and 'shape')",
                                          *key));
            }
            skip_blanks();
            if (take(','))
                continue;
            skip_blanks();
            if (take('}'))
                break;
            return refuse(fmt::format("expected ',' or '}}' after the value of '{}'", *key));
        }
        for (char c : text_.substr(pos_)) {
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
                return refuse("unexpected text after the closing '}'");
        }
        if (!have_descr)
            return refuse("key 'descr' is missing");
        if (!have_order)
            return refuse("key 'fortran_order' is missing");
        if (!have_shape)
            return refuse("key 'shape' is missing");
        return dict;
    }

private:
    std::unexpected<Error> refuse(std::string what) const
    {
        return std::unexpected(Error{fmt::format(
            "file {} has a malformed .npy header: {} (at header byte {}); re-save it with "
            "numpy.save",
            origin_, what, pos_)});
    }
    static std::unexpected<Error> refuse_plain(std::string message)
    {
        return std::unexpected(Error{std::move(message)});
    }

    char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
    bool take(char c)
    {
        if (peek() != c)
            return false;
        ++pos_;
        return true;
    }
    bool take_word(std::string_view word)
    {
        if (text_.substr(pos_, word.size()) != word)
            return false;
        pos_ += word.size();
        return true;
    }
    void skip_blanks()
    {
        while (peek() == ' ' || peek() == '\t')
            ++pos_;
    }

    Result<std::string> read_string()
    {
        char quote = peek();
        if (quote != '\'' && quote != '"')
            return refuse("expected a quoted string");
        ++pos_;
        std::string value;
        for (;;) {
            if (pos_ >= text_.size())
                return refuse("unterminated string");
            char c = text_[pos_++];
            if (c == quote)
                return value;
            if (c == '\\' || c == '\n')
                return refuse("escapes and line breaks are not allowed in header strings");
            value.push_back(c);
        }
    }

    Result<std::int64_t> read_dimension()
    {
        std::size_t start = pos_;
        std::uint64_t value = 0;
        while (peek() >= '0' && peek() <= '9') {
            unsigned digit = static_cast<unsigned>(peek() - '0');
            if (value >
                (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - digit) / 10)
                return refuse("a shape dimension does not fit in 64 bits");
            value = value * 10 + digit;
            ++pos_;
        }
        if (pos_ == start) {
            if (peek() == '-')
                return refuse("a shape dimension is negative");
            return refuse("expected a non-negative integer in 'shape'");
        }
        return static_cast<std::int64_t>(value);
    }

    Result<std::vector<std::int64_t>> read_shape()
    {
        std::vector<std::int64_t> shape;
        if (!take('('))
            return refuse("'shape' is not a tuple");
        bool comma_after_last = false;
        for (;;) {
            skip_blanks();
            if (take(')'))
                break;
            auto dim = read_dimension();
            if (!dim)
                return std::unexpected(dim.error());
            shape.push_back(*dim);
            skip_blanks();
            comma_after_last = take(',');
            if (comma_after_last)
                continue;
            skip_blanks();
            if (take(')'))
                break;
            return refuse("expected ',' or ')' in 'shape'");
        }
        // Python reads "(3)" as the integer 3, not a tuple.
        if (shape.size() == 1 && !comma_after_last)
            return refuse("'shape' of one dimension must be written (n,)");
        return shape;
    }

    std::string_view text_;
    std::string_view origin_;
    std::size_t pos_ = 0;
};

}  // namespace

Result<HeaderDict> parse_header_dict(std::string_view text, std::string_view origin)
{
    return DictReader(text, origin).read();
}

}  // namespace vaccel::npy::detail
