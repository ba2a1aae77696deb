#pragma once

#include "protocol/messages.h"
#include "ui/client/protocol_client.h"

#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace fulcrum::ui {

class Commands;
class ConsoleStore;
class LocalReplayHost;
class ReplayNavigator;

// Opens a recorded run for replay and says when it stands where it was asked to, as
// hotspot's PerfParser owns loading a file: a run of the connected fulcrumd (open-replay),
// or a run file from disk through a private fulcrumd (LocalReplayHost, then list-runs to
// find the file's runs). With an iteration to stand at, the replay opens paused and the
// navigator fast-forwards there; without, the whole run loads as fast as it is read and
// then plays at the run's own pace. The window shows what it reports and nothing else of
// its state.
class ReplayOpener : public QObject {
    Q_OBJECT
public:
    ReplayOpener(ProtocolClient& client, Commands& commands, ConsoleStore& store, ReplayNavigator& navigator,
        QObject* parent = nullptr);
    ~ReplayOpener() override;

    // Which of a file's runs to replay when it holds several (default: its first).
    using RunChooser
        = std::function<std::optional<RunId>(const QString& file, const std::vector<protocol::RunListing>& runs)>;
    void set_run_chooser(RunChooser chooser) { choose_run_ = std::move(chooser); }
    // The fulcrumd that replays run files (default: beside the console, then on PATH).
    void set_daemon_path(QString path) { daemon_path_ = std::move(path); }

    void open_server_run(const QString& database, RunId run, std::optional<std::int64_t> at = std::nullopt);
    void open_run_file(const QString& path, std::optional<std::int64_t> at = std::nullopt);
    // Closes the replay and goes back to the live stream of the server connected before.
    void back_to_live();
    // The window connects to a server: any replay being opened is dropped, and this is the
    // live server back_to_live() returns to.
    void connecting_to(const ServerAddress& address);

    // Whether a list-runs answer is this opener's (it lists a run file's runs).
    bool wants_runs() const { return phase_ == Phase::ListingFile && local_; }
    void on_runs(const std::vector<protocol::RunListing>& runs);
    void on_message(const protocol::ServerMessage& message);
    // The navigator stands where it was sent.
    void on_arrived();
    // A command of the opening was refused (the reason is reported by the window).
    void on_refused();
    // While a whole run loads: how much has arrived (0..1); unset otherwise.
    std::optional<double> loading_fraction() const;

signals:
    void status(const QString& text);
    void failed(const QString& why);
    // The replay is loaded, or stands at the iteration asked for.
    void ready(const QString& summary);

private:
    enum class Phase { None, ListingFile, Loading, Positioning, Ready };
    void fail(const QString& why);

    ProtocolClient& client_;
    Commands& commands_;
    ConsoleStore& store_;
    ReplayNavigator& navigator_;
    RunChooser choose_run_;
    QString daemon_path_;
    Phase phase_ = Phase::None;
    std::optional<std::int64_t> open_at_;
    std::optional<ServerAddress> live_address_;
    std::unique_ptr<LocalReplayHost> local_;
};

} // namespace fulcrum::ui
