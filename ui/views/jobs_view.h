#pragma once

#include "common/records.h"

#include <QWidget>
#include <optional>

class QAction;
class QComboBox;
class QTableView;

namespace fulcrum::ui {

class Commands;
class ConsoleStore;

// The jobs table (progress as a bar) with submit, cancel, pause/resume, change-policy and
// replay actions. Choosing a row shows that job in the workers table, the charts and the
// timeline.
class JobsView : public QWidget {
    Q_OBJECT
public:
    JobsView(ConsoleStore& store, Commands& commands, QWidget* parent = nullptr);

    QTableView* table() const { return table_; }
    std::optional<JobId> selected_job() const;
    // Actions for menus and the tool bar; enabled while commands can be sent.
    QList<QAction*> job_actions() const;

    // The tenant filter (shown once the jobs are of two tenants or more): one tenant's jobs
    // only, or every job for an empty name or "All tenants".
    void show_tenant(const QString& tenant);
    QComboBox* tenant_filter() const { return tenant_filter_; }
    bool tenant_filter_shown() const;

    void submit_from_file();
    void submit_from_form();
    void change_policy();

signals:
    // "Replay job" on a job that ended: its run store (as list-runs names it) and run.
    void replayRequested(const QString& database, RunId run);

private:
    void update_actions();
    void follow_tenants(); // the tenant column, the filter's tenants, and the rows it hides

    ConsoleStore& store_;
    Commands& commands_;
    QTableView* table_;
    QAction* submit_file_;
    QAction* submit_form_;
    QAction* cancel_;
    QAction* pause_;
    QAction* resume_;
    QAction* freeze_;
    QAction* change_policy_;
    QAction* replay_;
    QComboBox* tenant_filter_;
    QAction* tenant_action_ = nullptr; // the filter on the tool bar
};

} // namespace fulcrum::ui
