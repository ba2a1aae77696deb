#pragma once

#include "ui/client/commands.h"
#include "ui/client/protocol_client.h"
#include "ui/client/replay_navigator.h"
#include "ui/console_store.h"
#include "ui/views/iteration_window.h"

#include <QMainWindow>
#include <memory>
#include <optional>

class QLabel;
class QLineEdit;
class QSplitter;
class QTabWidget;
class QTimer;

namespace fulcrum::ui {

class ClusterMap;
class EquilibriumView;
class EventsView;
class JobsView;
class PredictionView;
class ReplayBar;
class ReplayOpener;
class SchedulerView;
class StragglerTimeline;
class WorkersView;

// The console's window: it owns the store, the protocol client and the command interface,
// and lays out the views, which only read the store and send through the commands. Views
// are redrawn at most `kFrameMs` apart, however fast messages arrive.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    static constexpr int kFrameMs = 50;

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    ConsoleStore& store() { return store_; }
    ProtocolClient& client() { return client_; }
    Commands& commands() { return commands_; }
    ReplayNavigator& navigator() { return navigator_; }
    IterationWindow& iteration_window() { return window_; }
    JobsView& jobs_view() const { return *jobs_; }
    WorkersView& workers_view() const { return *workers_; }
    EquilibriumView& equilibrium_view() const { return *equilibrium_; }
    StragglerTimeline& timeline() const { return *timeline_; }
    PredictionView& prediction_view() const { return *prediction_; }
    ClusterMap& cluster_map() const { return *cluster_; }
    SchedulerView& scheduler_view() const { return *scheduler_; }
    EventsView& events_view() const { return *events_; }
    ReplayBar& replay_bar() const { return *replay_bar_; }
    ReplayOpener& replay_opener() const { return *opener_; }

    // The application's window keeps its splitter and the workers table's columns as the
    // operator left them (QSettings), from one session to the next. Off by default (tests).
    void set_remember_layout(bool on);
    // Problems (a run file that cannot be replayed, a refused command) are shown in a
    // non-modal dialog unless dialogs are off (the --screenshot mode prints them instead).
    void set_dialogs(bool on) { dialogs_ = on; }
    // The fulcrumd that replays run files (default: beside the console, then on PATH).
    void set_daemon_path(QString path);

    void connect_to(const ServerAddress& address);
    // Replays a run of the connected fulcrumd (list-runs' database name and run id). With
    // `at`, the replay opens paused and moves to that iteration of the run's first job
    // (replayReady once there); without, it loads the whole run as fast as it can be read.
    void open_server_run(const QString& database, RunId run, std::optional<std::int64_t> at = std::nullopt);
    // Replays a run file from disk through a private fulcrumd; `at` as above.
    void open_run_file(const QString& path, std::optional<std::int64_t> at = std::nullopt);
    // Leaves a replay and follows the live stream of the server connected before.
    void back_to_live();
    // Shows one tab by name: equilibrium, timeline, prediction, cluster, scheduler.
    bool show_view(const QString& name);
    // Redraws every view from the store now (the frame timer does it otherwise).
    void refresh_views();
    // What File ▸ Export does once its dialogs are answered: the chart tab on screen as a
    // PNG; one of csv_exports() ("Workers table", "Straggler timeline data", …) as CSV.
    // False, with the reason, when the file cannot be written.
    bool export_png_to(const QString& path, QString* error);
    static const QStringList& csv_exports();
    bool export_csv_to(const QString& what, const QString& path, QString* error);

signals:
    // The replay asked for with open_run_file(…, at) stands at its iteration.
    void replayReady();
    void problemReported(const QString& text);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void build_menus();
    // The first layout: the jobs table a few rows high, the workers table at least eight,
    // the charts the rest; or the one the operator left, when remembered.
    void lay_out_first();
    // Jobs that arrived while the operator watched (issue 44 item 4): said in the status bar,
    // shown in bold until chosen, scrolled to, and the jobs pane grown to show up to six.
    void announce_jobs(int first, int last);
    void report(const QString& title, const QString& text);
    void show_notice(const QString& text, bool warning);
    void on_runs(const std::vector<protocol::RunListing>& runs);
    void open_server_run_dialog();
    void open_run_file_dialog();
    void export_png();
    void export_csv();
    void jump_to(const EventRecord& event);
    void schedule_frame();
    // One frame's redraw of the view on screen; `complete` draws everything at once rather
    // than spreading a large first drawing over frames.
    void redraw(bool complete);

    ConsoleStore store_;
    ProtocolClient client_;
    Commands commands_;
    ReplayNavigator navigator_;
    IterationWindow window_;
    JobsView* jobs_;
    WorkersView* workers_;
    EquilibriumView* equilibrium_;
    StragglerTimeline* timeline_;
    PredictionView* prediction_;
    ClusterMap* cluster_;
    SchedulerView* scheduler_;
    EventsView* events_;
    ReplayBar* replay_bar_;
    QTabWidget* charts_;
    QSplitter* split_ = nullptr;
    bool laid_out_ = false;
    bool announce_jobs_ = false; // after the live snapshot: the jobs it lists are not news
    bool remember_layout_ = false;
    QTabWidget* tables_;
    QLabel* notice_;
    QLabel* connection_;
    QLabel* details_;
    QLineEdit* find_worker_ = nullptr; // the timeline's worker search
    QTimer* frame_;
    bool dirty_ = false;
    bool dialogs_ = true;
    ReplayOpener* opener_;
};

} // namespace fulcrum::ui
