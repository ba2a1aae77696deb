#pragma once

#include <QColor>
#include <QStringList>
#include <QWidget>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::protocol {
struct Capability;
}

namespace fulcrum::ui {

class Commands;
class ConsoleStore;

// fulcrumd's cluster: each server with its GPUs, coloured by the jobs placed on them (a GPU
// that jobs time-share in bands, one per job; by their tenants instead when the cluster has
// tenants' quotas or its jobs are of two tenants or more, each quota's use in the header),
// memory in use as a bar, each server's link
// load (the live jobs whose pushes and pulls cross it) on its label, utilization in the
// header. Hovering a GPU tells its jobs and, for each, the worker placed there with its batch
// size and state, and what the communication scheduler held its transfers for. An operator changes the cluster's
// placement, elastic and communication policies from its context menu (and the Jobs menu).
class ClusterMap : public QWidget {
    Q_OBJECT
public:
    ClusterMap(ConsoleStore& store, Commands& commands, QWidget* parent = nullptr);
    QList<QAction*> policy_actions() const { return { placement_, elastic_, comm_ }; }
    // The dialogs' answers, sent as set-cluster-policy (tests call these directly).
    void choose_placement();
    void choose_elastic();
    void choose_comm();
    QSize sizeHint() const override { return { 600, 300 }; }

    std::optional<int> gpu_at(QPoint point) const;
    QString gpu_text(int gpu) const;
    QString server_text(int server) const; // its label: "server 0 · link: 2 jobs"
    QString header_text() const;
    // Colouring by tenant: the tenants named by the quotas or by the GPUs' jobs, by name; a
    // tenant's colour is its place among them.
    bool by_tenant() const;
    std::vector<std::string> tenants_shown() const;
    QColor tenant_colour(const std::string& tenant) const;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRectF cell(int gpu) const;
    // A policy chosen among the server's (the current one first when it is not among them);
    // none when cancelled or unchanged.
    std::optional<std::string> ask_policy(const QString& title, const QString& label,
        const std::vector<protocol::Capability>& offered, const std::string& current);
    void update_actions();
    ConsoleStore& store_;
    Commands& commands_;
    QAction* placement_;
    QAction* elastic_;
    QAction* comm_;
};

} // namespace fulcrum::ui
