#include "ui/local_replay.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <csignal>
#include <sys/prctl.h>

namespace fulcrum::ui {

namespace {
constexpr int kStartTimeoutMs = 20000;
}

LocalReplayHost::LocalReplayHost(QObject* parent)
    : QObject(parent)
    , daemon_(find_daemon())
{
}

LocalReplayHost::~LocalReplayHost()
{
    if (process_ && process_->state() != QProcess::NotRunning) {
        process_->disconnect(this);
        process_->terminate();
        if (!process_->waitForFinished(5000))
            process_->kill();
    }
}

QString LocalReplayHost::find_daemon()
{
    QString beside = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("fulcrumd"));
    if (QFileInfo(beside).isExecutable())
        return beside;
    return QStandardPaths::findExecutable(QStringLiteral("fulcrumd"));
}

void LocalReplayHost::fail(const QString& why)
{
    if (process_)
        process_->disconnect(this);
    emit failed(why);
}

void LocalReplayHost::start(const QString& database)
{
    const QFileInfo file(database);
    path_ = file.absoluteFilePath();
    if (!file.exists())
        return fail(QStringLiteral("%1: no such file").arg(database));
    if (!file.isFile() || !file.isReadable())
        return fail(QStringLiteral("%1: not a readable file").arg(database));
    if (daemon_.isEmpty())
        return fail(QStringLiteral(
            "fulcrumd was found neither beside the console nor on PATH: a run file is replayed through it"));
    dir_ = std::make_unique<QTemporaryDir>();
    if (!dir_->isValid())
        return fail(QStringLiteral("cannot create a temporary folder for the replay: %1").arg(dir_->errorString()));
    const QDir root(dir_->path());
    root.mkpath(QStringLiteral("runs"));
    name_ = file.fileName();
    // The private fulcrumd reads the file where it is: its folder is one of the daemon's runs
    // folders (a link into its own runs folder would lead out of it, which fulcrumd refuses).
    const QString folder = file.absolutePath();
    token_ = QString::number(QRandomGenerator::system()->generate64(), 16)
        + QString::number(QRandomGenerator::system()->generate64(), 16);
    QFile tokens(root.filePath(QStringLiteral("tokens")));
    if (!tokens.open(QIODevice::WriteOnly) || tokens.write(QStringLiteral("operator %1\n").arg(token_).toUtf8()) < 0)
        return fail(QStringLiteral("cannot write the replay's token file %1").arg(tokens.fileName()));
    tokens.setPermissions(QFile::ReadOwner | QFile::WriteOwner);
    tokens.close();

    process_ = new QProcess(this);
    process_->setProcessChannelMode(QProcess::MergedChannels);
    // The private daemon must not outlive the console, even if the console is killed.
    process_->setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
    connect(process_, &QProcess::readyRead, this, [this] {
        output_ += process_->readAll();
        if (announced_)
            return;
        static const QRegularExpression serving(QStringLiteral("serving (ws://[0-9.]+:[0-9]+)"));
        const auto match = serving.match(QString::fromUtf8(output_));
        if (!match.hasMatch())
            return;
        announced_ = true;
        emit ready(ServerAddress { QUrl(match.captured(1)), token_, {} });
    });
    connect(process_, &QProcess::finished, this, [this](int code) {
        if (!announced_)
            fail(QStringLiteral("fulcrumd (%1) stopped before serving, exit code %2: %3")
                     .arg(daemon_)
                     .arg(code)
                     .arg(QString::fromUtf8(output_).trimmed()));
    });
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            fail(QStringLiteral("cannot start %1: %2").arg(daemon_, process_->errorString()));
    });
    QTimer::singleShot(kStartTimeoutMs, this, [this] {
        if (!announced_ && process_ && process_->state() != QProcess::NotRunning)
            fail(QStringLiteral("fulcrumd (%1) did not start serving within %2 s: %3")
                     .arg(daemon_)
                     .arg(kStartTimeoutMs / 1000)
                     .arg(QString::fromUtf8(output_).trimmed()));
    });
    process_->start(daemon_,
        { QStringLiteral("--no-demo"), QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
            QStringLiteral("--data-dir"), root.path(), QStringLiteral("--runs-folder"), folder,
            QStringLiteral("--token-file"), root.filePath(QStringLiteral("tokens")) });
}

} // namespace fulcrum::ui
