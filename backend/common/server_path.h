#pragma once

// A path field's type: a name that a scenario, a policy section or a message gives for a file
// or folder fulcrumd opens. The field reader reads every such field through one PathPolicy,
// so a client's names are confined wherever a path field appears, one added later included.

#include "common/error.h"

#include <optional>
#include <string>
#include <string_view>

namespace fulcrum {

// Which of the server's folders a path field names an entry of.
enum class FolderKind { Datasets, Models, Runs };
std::string_view to_string(FolderKind kind);

// What a path field's text becomes. fulcrumd's (ServerFolders) takes only names inside its
// folders from a client; a local tool's takes any path as given.
class PathPolicy {
public:
    virtual ~PathPolicy() = default;
    // The path to open for `name`, given in the field `field` (its full path, such as
    // "changes[0].policy.predictor.warm_start_file"), or nothing, with the reason in `why`.
    // The reason names the client's own name and the folder's role, never a server path.
    virtual std::optional<std::string> resolve(
        FolderKind kind, const std::string& name, const std::string& field, std::string& why) const = 0;
};

// A path field's name that the path policy refused (outside the server's folders, or no
// name at all). The field is the scenario's or message's field path; fulcrumd answers
// `illegal-value`.
class OutsidePath : public InputError {
public:
    using InputError::InputError;
};

// Every name as given (fulcrum-run, fulcrumd --scenario, a recovered job its operator gave
// locally): the person at the server's keyboard may name any file.
const PathPolicy& paths_as_given();

// Why `name` can name no file on any policy: empty, or holding a control character (a NUL
// would cut the name short where the system reads it; a line break forges log lines).
// Empty when it can.
std::string unusable_name(std::string_view name);

} // namespace fulcrum
