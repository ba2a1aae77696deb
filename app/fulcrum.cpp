// fulcrum: the operations console.

#include "ui/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QPixmap>
#include <cstdio>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("fulcrum"));
    QApplication::setApplicationVersion(QStringLiteral(FULCRUM_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Fulcrum operations console"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
        QStringLiteral("Render the main window to a PNG file and exit."), QStringLiteral("FILE"));
    parser.addOption(screenshot);
    parser.process(app);

    fulcrum::ui::MainWindow window;
    if (parser.isSet(screenshot)) {
        window.show();
        QApplication::processEvents();
        const QString file = parser.value(screenshot);
        if (!window.grab().save(file)) {
            std::fprintf(stderr, "fulcrum: --screenshot: cannot write %s\n", qPrintable(file));
            return 1;
        }
        return 0;
    }
    window.show();
    return QApplication::exec();
}
