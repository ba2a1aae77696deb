#pragma once

// What the console tests against a real fulcrumd share: an in-process daemon with its
// WebSocket server and a paced job to act on, waiting on the event loop, and answering the
// next modal dialog the way an operator would.

#include "access/auth.h"
#include "daemon/daemon.h"
#include "server/ws_server.h"
#include "ui/main_window.h"
#include "ui/views/jobs_view.h"
#include "ui/views/workers_view.h"

#include <QAction>
#include <QApplication>
#include <QElapsedTimer>
#include <QTableView>
#include <QThread>
#include <QTimer>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <unistd.h>

namespace fulcrum::console_test {

using namespace fulcrum::protocol;

inline bool wait_until(const std::function<bool()>& done, int ms = 30000)
{
    QElapsedTimer clock;
    clock.start();
    while (!done()) {
        if (clock.elapsed() > ms)
            return false;
        QApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(2);
    }
    return true;
}

// A paced job slow enough to act on while it runs: 4 workers, one slow.
inline constexpr const char* kScenario = R"({"name": "console-live", "seed": 5, "mode": "paced", "pace": 2,
  "data": {"source": "synthetic", "train_size": 1200, "test_size": 200, "dim": 12, "classes": 3},
  "model": {"type": "mlp", "hidden": [16]},
  "training": {"total_batch": 64, "learning_rate": 0.1, "iterations": 3000, "eval_interval": 50},
  "policy": {"type": "uniform"}, "workers": [{"speed": 3000, "count": 3}, {"speed": 1000}]})";

struct LiveDaemon {
    // TLS (wss://) with the test certificate of tests/daemon/tls, when asked for.
    bool tls = false;
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-console-" + std::to_string(::getpid()));
    std::unique_ptr<daemon::Daemon> daemon;
    std::unique_ptr<access::TokenStore> tokens;
    std::unique_ptr<server::WebSocketServer> server;
    std::string operator_token;
    JobId job = 0;

    // `tag` names its folder apart, for a test that runs two.
    explicit LiveDaemon(bool with_tls = false, const std::string& scenario = kScenario, const std::string& tag = {})
        : tls(with_tls)
    {
        if (!tag.empty())
            dir += "-" + tag;
        std::filesystem::create_directories(dir);
        operator_token = "operator-token-for-the-console-test";
        std::ofstream(dir / "tokens") << "operator " << operator_token
                                      << "\nviewer viewer-token-for-the-console-test\n"
                                         "admin admin-token-for-the-console-test\n"
                                         "viewer research-viewer-token-for-the-console tenant=research\n";
        std::filesystem::permissions(
            dir / "tokens", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
        daemon::DaemonOptions options;
        options.data_dir = dir;
        options.cluster.servers = 2;
        options.cluster.gpus_per_server = 4;
        daemon = std::make_unique<daemon::Daemon>(options);
        tokens = std::make_unique<access::TokenStore>(access::TokenStore::load_or_create(dir / "tokens"));
        serve(0);
        job = daemon->submit(scenario, "console test");
    }
    ~LiveDaemon()
    {
        server.reset();
        daemon.reset();
        std::filesystem::remove_all(dir);
    }
    void serve(unsigned short port)
    {
        server::ServerOptions o;
        o.port = port;
        if (tls) {
            o.tls_certificate = tls_directory() / "server.crt";
            o.tls_key = tls_directory() / "server.key";
        }
        server = std::make_unique<server::WebSocketServer>(*daemon, *tokens, o);
        server->start();
    }
    ui::ServerAddress address(const std::string& token) const
    {
        return { QUrl(QStringLiteral("%1://127.0.0.1:%2")
                          .arg(tls ? QStringLiteral("wss") : QStringLiteral("ws"))
                          .arg(server->port())),
            QString::fromStdString(token), {} };
    }
    static std::filesystem::path tls_directory()
    {
        return std::filesystem::path(FULCRUM_SOURCE_DIR) / "tests/daemon/tls";
    }
};

// Answers the next modal dialog of type D (opened by exec()) with `fill`, then accepts it.
template <class D> inline void answer_next_dialog(std::function<void(D&)> fill)
{
    QTimer::singleShot(50, [fill] {
        auto* dialog = qobject_cast<D*>(QApplication::activeModalWidget());
        ASSERT_NE(dialog, nullptr) << "no dialog of the expected type is open";
        fill(*dialog);
        dialog->accept();
    });
}

inline void select_worker(ui::MainWindow& window, int worker)
{
    QTableView* table = window.workers_view().table();
    table->selectRow(worker);
    ASSERT_EQ(window.workers_view().selected_worker(), worker);
}

inline QAction* action_named(ui::MainWindow& window, const QString& prefix)
{
    for (QAction* a : window.workers_view().worker_actions())
        if (a->text().startsWith(prefix))
            return a;
    for (QAction* a : window.jobs_view().job_actions())
        if (a->text().startsWith(prefix))
            return a;
    return nullptr;
}

// An event of this kind about `worker` (nullopt: about the job) in the events list.
inline bool has_event(ui::MainWindow& window, const std::string& kind, std::optional<WorkerId> worker)
{
    for (int row = 0; row < window.store().events().rowCount(); ++row) {
        const EventRecord& e = window.store().events().at(row);
        if (e.kind == kind && e.worker == worker)
            return true;
    }
    return false;
}

} // namespace fulcrum::console_test
