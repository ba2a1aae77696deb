#include "serve/replies.h"

#include "common/error.h"
#include "common/server_path.h"

namespace fulcrum::serve {

using namespace protocol;

Reply ok(const std::string& id, std::optional<JobId> job)
{
    Reply r;
    r.id = id;
    r.job = job;
    return r;
}

Reply failure(const std::string& id, ErrorInfo error)
{
    Reply r;
    r.id = id;
    r.error = std::move(error);
    return r;
}

Reply failure(const std::string& id, std::string code, std::string message, std::string field)
{
    return failure(id, ErrorInfo { std::move(code), std::move(message), std::move(field) });
}

Reply failure_of(const std::string& id, std::exception_ptr error)
{
    try {
        std::rethrow_exception(std::move(error));
    } catch (const OutsidePath& e) {
        return failure(id, "illegal-value", e.what(), e.field());
    } catch (const RefusedRequest& e) {
        return failure(id, e.code(), e.what());
    } catch (const InputError& e) {
        return failure(id, "invalid-scenario", e.what(), e.field());
    } catch (const std::exception& e) {
        return failure(id, "internal", e.what());
    }
}

} // namespace fulcrum::serve
