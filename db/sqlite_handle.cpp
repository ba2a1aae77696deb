#include "db/sqlite_handle.h"

#include "common/error.h"
#include "common/file_text.h"

namespace fulcrum::db::detail {

Connection::Connection(const std::string& path, bool create)
    : path_(path)
{
    // SQLite's open would wait on a FIFO for a writer, forever: the store's and its journal's.
    for (const char* suffix : { "", "-journal", "-wal", "-shm" })
        if (const std::optional<std::string> kind = not_a_regular_file(path + suffix))
            throw InputError(path, "",
                "cannot open run database: " + (*suffix ? "its " + std::string(suffix + 1) + " file is " : "it is ")
                    + *kind + ", not a regular file");
    const int flags = create ? (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) : SQLITE_OPEN_READONLY;
    const int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close(db_);
        db_ = nullptr;
        throw InputError(path, "", "cannot open run database: " + message);
    }
    sqlite3_busy_timeout(db_, 5000);
    sqlite3_extended_result_codes(db_, 1);
}

Connection::~Connection()
{
    sqlite3_close(db_);
}

void Connection::fail(const std::string& what) const
{
    throw InputError(path_, "", what + ": " + sqlite3_errmsg(db_));
}

void Connection::exec(const char* sql)
{
    char* error = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
        const std::string message = error ? error : "unknown error";
        sqlite3_free(error);
        throw InputError(path_, "", message);
    }
}

Statement::Statement(Connection& connection, const char* sql)
    : connection_(connection)
{
    if (sqlite3_prepare_v3(connection.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &statement_, nullptr) != SQLITE_OK)
        connection.fail("cannot prepare statement");
}

Statement::~Statement()
{
    sqlite3_finalize(statement_);
}

Statement& Statement::bind(int index, std::int64_t value)
{
    sqlite3_bind_int64(statement_, index, value);
    return *this;
}

Statement& Statement::bind(int index, double value)
{
    sqlite3_bind_double(statement_, index, value);
    return *this;
}

Statement& Statement::bind(int index, const std::string& value)
{
    sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return *this;
}

Statement& Statement::bind_blob(int index, const std::string& bytes)
{
    sqlite3_bind_blob64(statement_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
    return *this;
}

Statement& Statement::bind(int index, std::optional<double> value)
{
    return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_null(int index)
{
    sqlite3_bind_null(statement_, index);
    return *this;
}

bool Statement::step()
{
    const int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    connection_.fail("statement failed");
}

void Statement::run()
{
    while (step()) { }
    reset();
}

void Statement::reset()
{
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
}

std::int64_t Statement::int64(int column) const
{
    return sqlite3_column_int64(statement_, column);
}
double Statement::real(int column) const
{
    return sqlite3_column_double(statement_, column);
}
bool Statement::is_null(int column) const
{
    return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

std::optional<double> Statement::optional_real(int column) const
{
    if (is_null(column))
        return std::nullopt;
    return real(column);
}

std::string Statement::blob(int column) const
{
    const auto* bytes = static_cast<const char*>(sqlite3_column_blob(statement_, column));
    return bytes ? std::string(bytes, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)))
                 : std::string();
}

std::string Statement::text(int column) const
{
    const auto* chars = sqlite3_column_text(statement_, column);
    return chars ? std::string(
               reinterpret_cast<const char*>(chars), static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)))
                 : std::string();
}

} // namespace fulcrum::db::detail
