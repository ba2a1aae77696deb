#pragma once

// The one shape of every kind a scenario, a command or an option names: batch-size policies,
// predictors, placements, communication schedulers, barrier-window algorithms, models. Each
// kind is an entry of its module's table: its name, what it does, the fields only it reads,
// how it reads them and how it is made. A kind's name is compared as a string here and in no
// other place: code asks the entry, never the name.

#include "common/named_values.h"

#include <charconv>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fulcrum {

// The number N in a name of the form PREFIX + N ("lwf-4", "srsf-2", "microsoft-160"), when
// it is a whole number of at least `minimum`.
inline std::optional<int> numbered_name(std::string_view name, std::string_view prefix, int minimum = 1)
{
    if (!name.starts_with(prefix) || name.size() == prefix.size())
        return std::nullopt;
    int n = 0;
    const char* last = name.data() + name.size();
    const auto [end, error] = std::from_chars(name.data() + prefix.size(), last, n);
    if (error != std::errc() || end != last || n < minimum)
        return std::nullopt;
    return n;
}

// What every entry says about itself. A numbered kind is a family named PREFIX + a letter
// ("lwf-K", "srsf-N"): its names are PREFIX + a whole number >= 1 ("lwf-2").
struct KindInfo {
    std::string_view name;
    std::string_view description;
    bool numbered = false;
    std::string_view family = {}; // which kind among its peers (sync models: "barrier"), "" for none
    std::string_view required = {}; // a field its section must give besides its name, "" for none
    std::string_view fields = {}; // the fields its section may give, separated by spaces

    // "lwf-" for "lwf-K"; the whole name otherwise.
    constexpr std::string_view prefix() const { return numbered ? name.substr(0, name.rfind('-') + 1) : name; }
};

// A module's table of kinds. `Entry` has a `KindInfo kind` and whatever the module's kinds
// need beside it (a parse, a make, a property the callers ask instead of comparing names).
template <class Entry> class Registry {
public:
    // `what` names the kind in errors: "placement", "speed predictor".
    constexpr Registry(std::string_view what, std::span<const Entry> entries)
        : what_(what)
        , entries_(entries)
    {
    }

    // An entry with the number its name carries (0 for a kind that is not numbered).
    struct Found {
        const Entry& entry;
        int number = 0;
    };

    std::optional<Found> find(std::string_view name) const
    {
        for (const Entry& e : entries_) {
            if (!e.kind.numbered && name == e.kind.name)
                return Found { e, 0 };
            if (e.kind.numbered)
                if (const auto n = numbered_name(name, e.kind.prefix()))
                    return Found { e, *n };
        }
        return std::nullopt;
    }

    // Throws std::invalid_argument naming the kind and what is expected.
    Found at(std::string_view name) const
    {
        if (auto found = find(name))
            return *found;
        throw std::invalid_argument(
            "unknown " + std::string(what_) + " '" + std::string(name) + "' (expected " + expected() + ")");
    }

    const Entry& entry(std::string_view name) const { return at(name).entry; }

    // The names as a person writes them ("lwf-K" for the family).
    std::vector<std::string> names() const
    {
        std::vector<std::string> out;
        for (const Entry& e : entries_)
            out.emplace_back(e.kind.name);
        return out;
    }

    // "rand, ff, ls or lwf-K with K >= 1 (e.g. lwf-1)".
    std::string expected() const
    {
        std::string list;
        for (std::size_t i = 0; i < entries_.size(); ++i) {
            const KindInfo& k = entries_[i].kind;
            list += i == 0 ? "" : (i + 1 == entries_.size() ? " or " : ", ");
            list += k.name;
            if (k.numbered) {
                const std::string_view letter = k.name.substr(k.prefix().size());
                list += " with " + std::string(letter) + " >= 1 (e.g. " + std::string(k.prefix()) + "1)";
            }
        }
        return list;
    }

    // Every kind with what it does (list-capabilities).
    std::vector<CatalogueEntry> catalogue() const
    {
        std::vector<CatalogueEntry> out;
        for (const Entry& e : entries_) {
            CatalogueEntry c { std::string(e.kind.name), std::string(e.kind.description), std::string(e.kind.family),
                {} };
            if (!e.kind.required.empty())
                c.required.emplace_back(e.kind.required);
            for (std::string_view rest = e.kind.fields; !rest.empty();) {
                const std::size_t space = rest.find(' ');
                c.fields.emplace_back(rest.substr(0, space));
                rest = space == std::string_view::npos ? std::string_view {} : rest.substr(space + 1);
            }
            out.push_back(std::move(c));
        }
        return out;
    }

    std::span<const Entry> entries() const { return entries_; }

private:
    std::string_view what_;
    std::span<const Entry> entries_;
};

} // namespace fulcrum
