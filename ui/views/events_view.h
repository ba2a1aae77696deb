#pragma once

#include "common/records.h"

#include <QWidget>

class QSortFilterProxyModel;
class QTableView;
class QLineEdit;

namespace fulcrum::ui {

class ConsoleStore;

// Warnings, phase changes, operator actions (who and when) and scheduler events, newest
// last, with a filter. Activating one asks the window to jump to it in time.
class EventsView : public QWidget {
    Q_OBJECT
public:
    explicit EventsView(ConsoleStore& store, QWidget* parent = nullptr);
    QTableView* table() const { return table_; }

signals:
    void jumpRequested(const fulcrum::EventRecord& event);

private:
    ConsoleStore& store_;
    QSortFilterProxyModel* filter_;
    QTableView* table_;
    QLineEdit* search_;
};

} // namespace fulcrum::ui
