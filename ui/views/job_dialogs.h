#pragma once

#include "protocol/messages.h"

#include <QDialog>
#include <optional>

class QComboBox;
class QLineEdit;
class QSpinBox;

namespace fulcrum::ui {

// A job from a few choices: the scenario it makes is in docs/scenarios.md's format, and the
// daemon checks it (a bad field comes back named in the reply).
class SubmitJobDialog : public QDialog {
    Q_OBJECT
public:
    // `offered`: what the server offers (list-capabilities): the form lists its models and
    // those of its policies that need no field besides their name.
    explicit SubmitJobDialog(const protocol::Capabilities& offered, QWidget* parent = nullptr);

    void set_name(const QString& name);
    void set_model(const QString& model); // one the server offers: mlp, softmax, svm
    void set_policy(const QString& policy); // one the server offers: uniform, lbbsp-cpu, lbbsp-gpu
    void set_mode(const QString& mode); // paced, virtual
    void set_workers(int workers, int slow);
    void set_total_batch(int samples);
    void set_iterations(int iterations);
    // The scenario as compact JSON.
    QString scenario_json() const;

private:
    QLineEdit* name_;
    QComboBox* model_;
    QComboBox* policy_;
    QComboBox* mode_;
    QSpinBox* workers_;
    QSpinBox* slow_;
    QSpinBox* batch_;
    QSpinBox* iterations_;
};

// A running job's batch-size policy and, optionally, its sync model; both take effect at the
// job's next safe point (its next barrier for bsp and backup). The sync models offered are
// the server's of the job's family, those its trainer switches among: bsp and backup, or
// asp, ssp and elastic-bsp.
class ChangePolicyDialog : public QDialog {
    Q_OBJECT
public:
    ChangePolicyDialog(
        JobId job, const protocol::JobStatus* status, const protocol::Capabilities& offered, QWidget* parent = nullptr);

    void set_policy(const QString& policy);
    // A sync model's name ("backup" with k backup workers, "ssp" with staleness s); an empty
    // name leaves the sync model as it is.
    void set_sync(const QString& sync, int backups = 1, int staleness = 5);
    QString policy_json() const;
    std::optional<QString> sync_json() const;

private:
    QComboBox* policy_;
    QComboBox* sync_;
    QSpinBox* backups_;
    QSpinBox* staleness_;
};

} // namespace fulcrum::ui
