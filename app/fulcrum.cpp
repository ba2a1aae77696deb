// fulcrum: the operations console.

#include "common/error.h"
#include "protocol/token_file.h"
#include "ui/main_window.h"
#include "ui/views/workers_view.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QPixmap>
#include <QTimer>
#include <cstdio>

namespace {

int fail(const QString& text)
{
    std::fprintf(stderr, "fulcrum: %s\n", qPrintable(text));
    return 1;
}

bool has_display()
{
    return !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")
        || !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

void name_application()
{
    QCoreApplication::setApplicationName(QStringLiteral("fulcrum"));
    QCoreApplication::setOrganizationName(QStringLiteral("fulcrum"));
    QCoreApplication::setApplicationVersion(QStringLiteral(FULCRUM_VERSION));
}

} // namespace

int main(int argc, char** argv)
{
    // --help, --version and bad options are answered before any window system is touched:
    // a QApplication without a display aborts inside Qt.
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Fulcrum operations console: watch fulcrumd's jobs live (equilibrium, straggler timeline, "
                       "prediction, cluster, scheduler),\n"
                       "pin or exclude workers, and replay recorded runs for post-mortems.\n\n"
                       "  fulcrum --connect ws://127.0.0.1:7480 --token-file fulcrum-data/tokens\n"
                       "  fulcrum --replay runs/job-1.db\n"
                       "  fulcrum --replay runs/job-1.db --at 300 --view timeline --screenshot timeline.png"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption connect_to(QStringList { QStringLiteral("connect"), QStringLiteral("server") },
        QStringLiteral("Connect to fulcrumd at this address: ws://HOST:PORT, wss://HOST:PORT (TLS) or HOST:PORT, as "
                       "every Fulcrum program takes it (the Connect dialog offers $FULCRUM_SERVER first)."),
        QStringLiteral("URL"));
    const QCommandLineOption token(QStringLiteral("token"),
        QStringLiteral("Bearer token for --connect (default: --token-file, else $FULCRUM_TOKEN)."),
        QStringLiteral("TOKEN"));
    const QCommandLineOption token_file(QStringLiteral("token-file"),
        QStringLiteral(
            "Read the token from fulcrumd's token file (the first operator token, else the first viewer token)."),
        QStringLiteral("FILE"));
    const QCommandLineOption ca_file(
        QStringLiteral("ca-file"), QStringLiteral("Trust this CA (PEM) for wss://."), QStringLiteral("FILE"));
    const QCommandLineOption replay(QStringLiteral("replay"),
        QStringLiteral("Replay a recorded run file (a run store .db) through a private fulcrumd."),
        QStringLiteral("RUN.db"));
    const QCommandLineOption at(QStringLiteral("at"),
        QStringLiteral("With --replay: stop the replay at this iteration of the run's first job."),
        QStringLiteral("ITERATION"));
    const QCommandLineOption view(QStringLiteral("view"),
        QStringLiteral("Show this view first: equilibrium, timeline, prediction, cluster or scheduler."),
        QStringLiteral("NAME"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
        QStringLiteral("Render the main window to a PNG file and exit (after the replay is loaded, with --replay)."),
        QStringLiteral("FILE"));
    const QCommandLineOption after(QStringLiteral("after"),
        QStringLiteral("With --connect and --screenshot: watch the live stream this many seconds first (default 0)."),
        QStringLiteral("SECONDS"));
    const QCommandLineOption worker(QStringLiteral("worker"),
        QStringLiteral("With --screenshot: choose this worker, as a click on its row in the workers table would: the "
                       "prediction view shows it, the timeline outlines it, the equilibrium charts highlight it."),
        QStringLiteral("N"));
    const QCommandLineOption size(
        QStringLiteral("size"), QStringLiteral("Window size, WIDTHxHEIGHT (default 1280x800)."), QStringLiteral("WxH"));
    parser.addOptions({ connect_to, token, token_file, ca_file, replay, at, view, screenshot, after, worker, size });
    {
        QCoreApplication probe(argc, argv);
        name_application();
        parser.process(probe);
    }
    if (!has_display()) {
        if (!parser.isSet(screenshot))
            return fail(QStringLiteral(
                "no display to open the console on: run it on a desktop, over 'ssh -X', or headless with "
                "QT_QPA_PLATFORM=offscreen and --screenshot FILE"));
        qputenv("QT_QPA_PLATFORM", "offscreen"); // a screenshot needs no screen
    }
    QApplication app(argc, argv);
    name_application();

    fulcrum::ui::MainWindow window;
    const bool shooting = parser.isSet(screenshot);
    window.set_dialogs(!shooting);
    window.set_remember_layout(!shooting); // a screenshot shows the default layout
    if (parser.isSet(size)) {
        const QStringList wh = parser.value(size).split(QLatin1Char('x'));
        bool w_ok = false, h_ok = false;
        const int w = wh.size() == 2 ? wh[0].toInt(&w_ok) : 0, h = wh.size() == 2 ? wh[1].toInt(&h_ok) : 0;
        if (!w_ok || !h_ok || w < 320 || h < 240)
            return fail(
                QStringLiteral("--size: expected WIDTHxHEIGHT of at least 320x240, got '%1'").arg(parser.value(size)));
        window.resize(w, h);
    }
    if (parser.isSet(view) && !window.show_view(parser.value(view)))
        return fail(QStringLiteral("--view: expected equilibrium, timeline, prediction, cluster or scheduler, got '%1'")
                        .arg(parser.value(view)));
    std::optional<std::int64_t> at_iteration;
    if (parser.isSet(at)) {
        bool ok = false;
        at_iteration = parser.value(at).toLongLong(&ok);
        if (!ok || *at_iteration < 0)
            return fail(QStringLiteral("--at: expected an iteration number ≥ 0, got '%1'").arg(parser.value(at)));
        if (!parser.isSet(replay))
            return fail(QStringLiteral("--at needs --replay RUN.db"));
    }

    std::optional<fulcrum::WorkerId> chosen_worker;
    if (parser.isSet(worker)) {
        bool ok = false;
        chosen_worker = parser.value(worker).toInt(&ok);
        if (!ok || *chosen_worker < 0)
            return fail(QStringLiteral("--worker: expected a worker number ≥ 0, got '%1'").arg(parser.value(worker)));
        if (!parser.isSet(screenshot))
            return fail(QStringLiteral("--worker needs --screenshot FILE (in the console, click the worker's row)"));
    }

    if (parser.isSet(connect_to)) {
        QString problem;
        const std::optional<QUrl> url = fulcrum::ui::server_url(parser.value(connect_to), &problem, "--server");
        if (!url)
            return fail(problem);
        fulcrum::ui::ServerAddress address { *url, parser.value(token), parser.value(ca_file) };
        if (parser.isSet(token_file)) {
            const QString file = parser.value(token_file);
            try {
                using fulcrum::protocol::Role;
                const auto picked
                    = fulcrum::protocol::pick_token(fulcrum::protocol::read_token_file(file.toStdString()),
                        { Role::Admin, Role::Operator, Role::Viewer });
                if (!picked)
                    return fail(QStringLiteral("--token-file %1: no operator or viewer token in it").arg(file));
                address.token = QString::fromStdString(*picked);
            } catch (const fulcrum::InputError& e) {
                return fail(QStringLiteral("--token-file %1").arg(QString::fromStdString(e.what())));
            }
        }
        if (address.token.isEmpty())
            address.token = QString::fromLocal8Bit(qgetenv("FULCRUM_TOKEN"));
        window.connect_to(address);
    }

    int exit_code = 0;
    // The screenshot's file and the step that takes it outlive this block: the replay calls
    // `shoot` from the event loop, after the block has ended.
    const QString file = parser.value(screenshot);
    if (shooting) {
        const auto shoot = [&] {
            if (chosen_worker) {
                window.workers_view().select_worker(*chosen_worker);
                if (window.workers_view().selected_worker() != chosen_worker) {
                    const int workers = window.store().workers().rowCount();
                    exit_code = fail(workers == 0
                            ? QStringLiteral("--worker: no job's workers are shown yet")
                            : QStringLiteral("--worker: the job shown has no worker %1 (its workers: w0–w%2)")
                                  .arg(*chosen_worker)
                                  .arg(workers - 1));
                    QApplication::exit(exit_code);
                    return;
                }
            }
            window.refresh_views();
            QApplication::processEvents();
            if (!window.grab().save(file, "PNG")) {
                exit_code = fail(QStringLiteral("--screenshot: cannot write %1").arg(file));
            }
            QApplication::exit(exit_code);
        };
        window.show();
        if (!parser.isSet(replay)) {
            bool number = false;
            const double wait_s = parser.isSet(after) ? parser.value(after).toDouble(&number) : 0.0;
            if (parser.isSet(after) && (!number || wait_s < 0 || wait_s > 3600))
                return fail(
                    QStringLiteral("--after: expected seconds from 0 to 3600, got '%1'").arg(parser.value(after)));
            if (wait_s <= 0) {
                QApplication::processEvents();
                shoot();
                return exit_code;
            }
            QTimer::singleShot(static_cast<int>(wait_s * 1000), &window, shoot);
            return QApplication::exec() == 0 ? exit_code : 1;
        }
        QObject::connect(&window, &fulcrum::ui::MainWindow::replayReady, &window,
            [&window, shoot] { QTimer::singleShot(0, &window, shoot); });
        QObject::connect(&window, &fulcrum::ui::MainWindow::problemReported, &window, [&](const QString& text) {
            exit_code = fail(text);
            QApplication::exit(exit_code);
        });
        QTimer::singleShot(120000, &window, [&] {
            exit_code = fail(QStringLiteral("--screenshot: the replay was not ready within 120 s"));
            QApplication::exit(exit_code);
        });
    } else {
        window.show();
    }
    if (parser.isSet(replay))
        window.open_run_file(parser.value(replay), at_iteration);
    const int code = QApplication::exec();
    return exit_code ? exit_code : code;
}
