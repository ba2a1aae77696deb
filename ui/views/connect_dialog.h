#pragma once

#include "ui/client/protocol_client.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLineEdit;

namespace fulcrum::ui {

// Where to connect: fulcrumd's URL, a token from its token file and, for wss:// with a
// self-signed certificate, the CA file to trust. Recent servers are remembered in QSettings
// (the token only when the operator asks: it is a credential).
class ConnectDialog : public QDialog {
    Q_OBJECT
public:
    explicit ConnectDialog(QWidget* parent = nullptr);

    ServerAddress address() const;
    void set_address(const ServerAddress& address);
    // Puts the address first in the recent list (called once it is accepted).
    void remember(const ServerAddress& address) const;

    static QList<ServerAddress> recent_servers();
    static constexpr int kRecentLimit = 8;

private:
    QComboBox* url_;
    QLineEdit* token_;
    QLineEdit* ca_file_;
    QCheckBox* remember_token_;
};

} // namespace fulcrum::ui
