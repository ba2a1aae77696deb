#pragma once

#include "ui/client/protocol_client.h"

#include <QObject>
#include <QString>
#include <memory>

class QProcess;
class QTemporaryDir;

namespace fulcrum::ui {

// Replays a run file from disk without linking the backend: starts a private fulcrumd
// (--no-demo, a fresh operator token, any free loopback port) whose runs folder holds a
// link to the file, so the console replays it through the same protocol as any recorded
// run. fulcrumd stops with this object (or with the console: it gets SIGTERM when its
// parent dies).
class LocalReplayHost : public QObject {
    Q_OBJECT
public:
    explicit LocalReplayHost(QObject* parent = nullptr);
    ~LocalReplayHost() override;

    // fulcrumd next to the console's executable, then on PATH; empty when neither.
    static QString find_daemon();
    void set_daemon(QString path) { daemon_ = std::move(path); }

    // Starts serving `database`; ready() or failed() follows.
    void start(const QString& database);
    // The file's name in the private runs folder: what list-runs and open-replay call it.
    QString database_name() const { return name_; }
    QString database_path() const { return path_; }

signals:
    void ready(const fulcrum::ui::ServerAddress& address);
    void failed(const QString& why);

private:
    void fail(const QString& why);

    QString daemon_;
    QString name_, path_, token_;
    std::unique_ptr<QTemporaryDir> dir_;
    QProcess* process_ = nullptr;
    QByteArray output_;
    bool announced_ = false;
};

} // namespace fulcrum::ui
