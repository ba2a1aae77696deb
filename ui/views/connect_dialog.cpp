#include "ui/views/connect_dialog.h"

#include "protocol/token_file.h"
#include "ui/views/dialog_buttons.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>

namespace fulcrum::ui {

namespace {
const QString kGroup = QStringLiteral("recent-servers");
}

ConnectDialog::ConnectDialog(QWidget* parent, const std::optional<ServerAddress>& current)
    : QDialog(parent)
    , url_(new QComboBox(this))
    , token_(new QLineEdit(this))
    , ca_file_(new QLineEdit(this))
    , remember_token_(new QCheckBox(QStringLiteral("Remember the token on this computer"), this))
    , token_problem_(new QLabel(this))
{
    setWindowTitle(QStringLiteral("Connect to fulcrumd"));
    url_->setEditable(true);
    url_->setMinimumWidth(320);
    token_->setEchoMode(QLineEdit::Password);
    token_->setPlaceholderText(QStringLiteral("a token from fulcrumd's token file"));
    ca_file_->setPlaceholderText(QStringLiteral("wss:// with a self-signed certificate only"));

    const QList<ServerAddress> recent = recent_servers();
    for (const ServerAddress& a : recent)
        url_->addItem(a.url.toString());
    if (recent.isEmpty())
        url_->addItem(default_server());
    url_->setToolTip(QStringLiteral("ws://HOST:PORT, wss://HOST:PORT (TLS) or HOST:PORT, as every Fulcrum program "
                                    "takes it"));
    if (current)
        set_address(*current);
    else if (!recent.isEmpty())
        set_address(recent.front());
    connect(url_, &QComboBox::activated, this, [this](int index) {
        const QList<ServerAddress> servers = recent_servers();
        if (index >= 0 && index < servers.size())
            set_address(servers[index]);
    });

    auto* browse = new QPushButton(QStringLiteral("Browse…"), this);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(
            this, QStringLiteral("CA certificate (PEM)"), {}, QStringLiteral("PEM files (*.pem *.crt);;All files (*)"));
        if (!file.isEmpty())
            ca_file_->setText(file);
    });
    auto* ca_row = new QHBoxLayout;
    ca_row->addWidget(ca_file_, 1);
    ca_row->addWidget(browse);
    auto* from_file = new QPushButton(QStringLiteral("From file…"), this);
    from_file->setToolTip(QStringLiteral("Read the token from fulcrumd's token file (its operator token, else its "
                                         "viewer token), e.g. /var/lib/fulcrum/tokens"));
    connect(from_file, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, QStringLiteral("fulcrumd's token file"));
        if (!file.isEmpty())
            take_token_file(file);
    });
    auto* token_row = new QHBoxLayout;
    token_row->addWidget(token_, 1);
    token_row->addWidget(from_file);
    token_problem_->setWordWrap(true);
    token_problem_->setStyleSheet(QStringLiteral("color: #b00020"));
    token_problem_->hide();

    // Labels of rows that hold a layout name their field as buddy, or the '&' shows.
    const auto label = [this](const QString& text, QWidget* buddy) {
        auto* l = new QLabel(text, this);
        l->setBuddy(buddy);
        return l;
    };
    auto* form = new QFormLayout;
    form->addRow(label(QStringLiteral("&Server:"), url_), url_);
    form->addRow(label(QStringLiteral("&Token:"), token_), token_row);
    form->addRow(QString(), token_problem_);
    form->addRow(label(QStringLiteral("&CA file:"), ca_file_), ca_row);
    form->addRow(QString(), remember_token_);
    auto* hint = new QLabel(QStringLiteral("fulcrumd prints its address and token file when it starts. "
                                           "An operator token allows commands; a viewer token only watching."),
        this);
    hint->setWordWrap(true);
    auto* buttons = ok_cancel_buttons(this);
    buttons->button(QDialogButtonBox::Ok)->setText(QStringLiteral("Connect"));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(hint);
    layout->addWidget(buttons);
}

bool ConnectDialog::take_token_file(const QString& path)
{
    QString problem;
    try {
        const auto picked = protocol::pick_token(protocol::read_token_file(path.toStdString()),
            { protocol::Role::Admin, protocol::Role::Operator, protocol::Role::Viewer }, true);
        if (picked)
            token_->setText(QString::fromStdString(*picked));
        else
            problem = QStringLiteral("%1 holds no operator or viewer token").arg(path);
    } catch (const std::exception& e) {
        problem = QString::fromStdString(e.what());
    }
    token_problem_->setText(problem);
    token_problem_->setVisible(!problem.isEmpty());
    return problem.isEmpty();
}

ServerAddress ConnectDialog::address() const
{
    return { server_url(url_->currentText()).value_or(QUrl()), token_->text().trimmed(), ca_file_->text().trimmed() };
}

void ConnectDialog::accept()
{
    QString problem;
    if (!server_url(url_->currentText(), &problem)) { // said where the token's problems are said
        token_problem_->setText(problem);
        token_problem_->show();
        url_->setFocus();
        return;
    }
    QDialog::accept();
}

void ConnectDialog::set_address(const ServerAddress& address)
{
    url_->setCurrentText(address.url.toString());
    token_->setText(address.token);
    ca_file_->setText(address.ca_file);
    remember_token_->setChecked(!address.token.isEmpty());
}

QList<ServerAddress> ConnectDialog::recent_servers()
{
    QSettings settings;
    QList<ServerAddress> out;
    const int n = settings.beginReadArray(kGroup);
    for (int i = 0; i < n; ++i) {
        settings.setArrayIndex(i);
        out.push_back({ QUrl(settings.value(QStringLiteral("url")).toString()),
            settings.value(QStringLiteral("token")).toString(), settings.value(QStringLiteral("ca_file")).toString() });
    }
    settings.endArray();
    return out;
}

void ConnectDialog::remember(const ServerAddress& address) const
{
    QList<ServerAddress> servers = recent_servers();
    servers.removeIf([&](const ServerAddress& a) { return a.url == address.url; });
    ServerAddress kept = address;
    if (!remember_token_->isChecked())
        kept.token.clear();
    servers.prepend(kept);
    while (servers.size() > kRecentLimit)
        servers.removeLast();
    QSettings settings;
    settings.beginWriteArray(kGroup, static_cast<int>(servers.size()));
    for (int i = 0; i < servers.size(); ++i) {
        settings.setArrayIndex(i);
        settings.setValue(QStringLiteral("url"), servers[i].url.toString());
        settings.setValue(QStringLiteral("token"), servers[i].token);
        settings.setValue(QStringLiteral("ca_file"), servers[i].ca_file);
    }
    settings.endArray();
}

} // namespace fulcrum::ui
