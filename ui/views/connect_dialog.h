#pragma once

#include "ui/client/protocol_client.h"

#include <QDialog>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;

namespace fulcrum::ui {

// Where to connect: fulcrumd's URL, a token from its token file and, for wss:// with a
// self-signed certificate, the CA file to trust. Recent servers are remembered in QSettings
// (the token only when the operator asks: it is a credential).
class ConnectDialog : public QDialog {
    Q_OBJECT
public:
    // Filled with `current` (the server the console uses now), else the newest recent one.
    explicit ConnectDialog(QWidget* parent = nullptr, const std::optional<ServerAddress>& current = std::nullopt);

    ServerAddress address() const;
    void set_address(const ServerAddress& address);
    // Refused, with the forms it takes, while the server is none of them.
    void accept() override;
    // The operator token of fulcrumd's token file (else its viewer token, else the file's
    // only token), as fulcrumctl --token-file picks it; false, with the reason shown under
    // the token, when the file has none or cannot be read. The "From file…" button's work.
    bool take_token_file(const QString& path);
    // Puts the address first in the recent list (called once it is accepted).
    void remember(const ServerAddress& address) const;

    static QList<ServerAddress> recent_servers();
    static constexpr int kRecentLimit = 8;

private:
    QComboBox* url_;
    QLineEdit* token_;
    QLineEdit* ca_file_;
    QCheckBox* remember_token_;
    QLabel* token_problem_;
};

} // namespace fulcrum::ui
