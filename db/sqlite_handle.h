#pragma once

// Internal to db/: thin RAII over the SQLite C API. Not installed, not included by other modules.

#include <cstdint>
#include <optional>
#include <sqlite3.h>
#include <string>

namespace fulcrum::db::detail {

class Connection {
public:
    // Opens (and with `create` makes) a database file; throws InputError naming the path.
    Connection(const std::string& path, bool create);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    void exec(const char* sql);
    sqlite3* get() const { return db_; }
    const std::string& path() const { return path_; }
    [[noreturn]] void fail(const std::string& what) const;

private:
    sqlite3* db_ = nullptr;
    std::string path_;
};

class Statement {
public:
    Statement(Connection& connection, const char* sql);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, double value);
    Statement& bind(int index, const std::string& value);
    Statement& bind(int index, std::optional<double> value);
    Statement& bind_null(int index);
    Statement& bind_blob(int index, const std::string& bytes);

    // Returns true while a row is available.
    bool step();
    void run(); // step to completion, then reset
    void reset();

    std::int64_t int64(int column) const;
    double real(int column) const;
    std::optional<double> optional_real(int column) const;
    std::string text(int column) const;
    std::string blob(int column) const;
    bool is_null(int column) const;

private:
    Connection& connection_;
    sqlite3_stmt* statement_ = nullptr;
};

} // namespace fulcrum::db::detail
