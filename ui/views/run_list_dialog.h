#pragma once

#include "protocol/messages.h"

#include <QDialog>
#include <optional>
#include <vector>

class QDialogButtonBox;
class QTableView;

namespace fulcrum::ui {

class RunsModel;

// The recorded runs a fulcrumd serves, to pick one to replay: a table over a RunsModel.
// A store that cannot be read shows why and cannot be opened.
class RunListDialog : public QDialog {
    Q_OBJECT
public:
    RunListDialog(
        std::vector<protocol::RunListing> runs, const QString& title, const QString& intro, QWidget* parent = nullptr);

    RunsModel& model() const { return *model_; }
    QTableView& table() const { return *table_; }
    // Selects a row (tests, and the first replayable row when shown).
    void select(int row);
    // The run chosen, once accepted; unset for none or one that cannot be replayed.
    std::optional<protocol::RunListing> chosen() const;

private:
    void update_buttons();

    RunsModel* model_;
    QTableView* table_;
    QDialogButtonBox* buttons_;
};

} // namespace fulcrum::ui
