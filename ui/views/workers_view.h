#pragma once

#include "common/records.h"

#include <QDialog>
#include <QWidget>
#include <optional>

class QAction;
class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace fulcrum::ui {

class Commands;
class ConsoleStore;

// Pin a worker's batch size: shows the current size and the size that would equalise its
// batch time with the others' at their latest measured speeds, both kept up to date while
// the dialog is open (set_current), as the table behind it is.
class PinDialog : public QDialog {
    Q_OBJECT
public:
    PinDialog(WorkerId worker, std::int32_t current, std::optional<std::int32_t> suggested, QWidget* parent = nullptr);
    std::int32_t batch_size() const;
    void set_batch_size(std::int32_t size);
    // A newer iteration arrived: the sizes shown follow it; the size being chosen is the
    // operator's and stays.
    void set_current(std::int32_t current, std::optional<std::int32_t> suggested);
    QString current_text() const;

private:
    QSpinBox* size_;
    QLabel* current_;
    QLabel* suggested_;
};

// Exclude a worker from its job's barriers, for good or for a time on the run's clock.
class ExcludeDialog : public QDialog {
    Q_OBJECT
public:
    explicit ExcludeDialog(WorkerId worker, QWidget* parent = nullptr);
    std::optional<double> for_s() const;
    void set_for_s(std::optional<double> seconds);

private:
    QCheckBox* limited_;
    QDoubleSpinBox* seconds_;
};

// The shown job's workers with the operator's actions on them: pin (P), unpin (U),
// exclude (E) and re-include (I), from the context menu, the tool bar or the keyboard; and
// for an elastic job, adding a free worker slot to it or removing a worker (Elastic PS),
// within the job's min and max workers. The table sorts by any column (a header click) and
// filters by a worker's id, name, device or state, so that a 256-worker job's stragglers
// are one click away ("Stragglers first": the longest batch time at the top).
class WorkersView : public QWidget {
    Q_OBJECT
public:
    WorkersView(ConsoleStore& store, Commands& commands, QWidget* parent = nullptr);

    QTableView* table() const { return table_; }
    QLineEdit* filter() const { return filter_; }
    std::optional<WorkerId> selected_worker() const;
    // Selects the worker's row and scrolls to it, clearing a filter that hides it.
    void select_worker(WorkerId worker);
    QList<QAction*> worker_actions() const;

    // The batch size that equalises the worker's batch time with the others' at their latest
    // speeds: its share of the job's total batch in proportion to its speed (LB-BSP eq. 3's
    // equilibrium with constant speeds). Unset without a measured speed for every worker.
    std::optional<std::int32_t> suggested_size(WorkerId worker) const;

    void pin_selected();
    void unpin_selected();
    void exclude_selected();
    void include_selected();
    void add_selected_to_job();
    void remove_selected_from_job();
    // Sorts by batch time, the longest first: the worker the others wait for leads.
    void stragglers_first();

private:
    void update_actions();
    // The device and GPU columns, shown once a worker of the job is on a GPU.
    void update_gpu_columns();

    ConsoleStore& store_;
    Commands& commands_;
    QSortFilterProxyModel* sorted_;
    QLineEdit* filter_;
    QTableView* table_;
    QAction* pin_;
    QAction* add_to_job_;
    QAction* remove_from_job_;
    QAction* unpin_;
    QAction* exclude_;
    QAction* include_;
    QAction* stragglers_first_;
};

} // namespace fulcrum::ui
