#include "ui/views/job_dialogs.h"

#include "ui/views/dialog_buttons.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

namespace fulcrum::ui {

namespace {

// The server's entries a form can set up by name alone (fixed needs a size per worker: a
// scenario file's), of `family` when one is given.
QStringList settable(const std::vector<protocol::Capability>& offered, const QString& family = {})
{
    QStringList names;
    for (const protocol::Capability& c : offered)
        if (c.required.empty() && (family.isEmpty() || QString::fromStdString(c.family) == family))
            names << QString::fromStdString(c.name);
    return names;
}

// The family of the sync model `name`, as the server names it ("barrier" when it does not).
QString family_of(const QString& name, const protocol::Capabilities& offered)
{
    for (const protocol::Capability& c : offered.sync_models)
        if (QString::fromStdString(c.name) == name && !c.family.empty())
            return QString::fromStdString(c.family);
    return QStringLiteral("barrier");
}

// An offered entry's optional fields, as the server lists them.
constexpr int kFieldsRole = Qt::UserRole + 1;

// Offers the server's entries among `names`, each with its description as the tooltip.
void add_offered(QComboBox* box, const QStringList& names, const std::vector<protocol::Capability>& offered)
{
    for (const QString& name : names)
        for (const protocol::Capability& c : offered)
            if (QString::fromStdString(c.name) == name) {
                QStringList fields;
                for (const std::string& f : c.fields)
                    fields << QString::fromStdString(f);
                box->addItem(name);
                box->setItemData(box->count() - 1, QString::fromStdString(c.description), Qt::ToolTipRole);
                box->setItemData(box->count() - 1, fields, kFieldsRole);
                break;
            }
}

// Whether the chosen entry's section takes `field`.
bool takes(const QComboBox* box, const QString& field)
{
    return box->currentData(kFieldsRole).toStringList().contains(field);
}

QString compact(const QJsonObject& object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

// Picks `text` in a combo box that offers it; anything else is a caller's mistake.
void choose(QComboBox* box, const QString& text)
{
    const int i = box->findText(text);
    Q_ASSERT_X(i >= 0, "choose", "not one of the offered choices");
    if (i >= 0)
        box->setCurrentIndex(i);
}

} // namespace

SubmitJobDialog::SubmitJobDialog(const protocol::Capabilities& offered, QWidget* parent)
    : QDialog(parent)
    , name_(new QLineEdit(QStringLiteral("console-job"), this))
    , model_(new QComboBox(this))
    , policy_(new QComboBox(this))
    , mode_(new QComboBox(this))
    , workers_(new QSpinBox(this))
    , slow_(new QSpinBox(this))
    , batch_(new QSpinBox(this))
    , iterations_(new QSpinBox(this))
{
    setWindowTitle(QStringLiteral("Submit a job"));
    add_offered(model_, settable(offered.models), offered.models);
    model_->setCurrentIndex(std::max(0, model_->findText(QStringLiteral("mlp"))));
    add_offered(policy_, settable(offered.policies), offered.policies);
    policy_->setCurrentIndex(std::max(0, policy_->findText(QStringLiteral("lbbsp-cpu"))));
    mode_->addItems({ QStringLiteral("paced"), QStringLiteral("virtual") });
    mode_->setToolTip(QStringLiteral("paced: watchable in real time; virtual: as fast as the machine computes"));
    workers_->setRange(1, 256);
    workers_->setValue(4);
    slow_->setRange(0, 256);
    slow_->setValue(1);
    slow_->setToolTip(QStringLiteral("how many of the workers run at a third of the others' speed"));
    batch_->setRange(1, 1000000);
    batch_->setValue(256);
    iterations_->setRange(1, 10000000);
    iterations_->setValue(500);
    auto* form = new QFormLayout;
    form->addRow(QStringLiteral("Name:"), name_);
    form->addRow(QStringLiteral("Model:"), model_);
    form->addRow(QStringLiteral("Batch-size policy:"), policy_);
    form->addRow(QStringLiteral("Mode:"), mode_);
    form->addRow(QStringLiteral("Workers:"), workers_);
    form->addRow(QStringLiteral("Of which slow:"), slow_);
    form->addRow(QStringLiteral("Total batch:"), batch_);
    form->addRow(QStringLiteral("Iterations:"), iterations_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(ok_cancel_buttons(this));
}

void SubmitJobDialog::set_name(const QString& name)
{
    name_->setText(name);
}
void SubmitJobDialog::set_model(const QString& model)
{
    choose(model_, model);
}
void SubmitJobDialog::set_policy(const QString& policy)
{
    choose(policy_, policy);
}
void SubmitJobDialog::set_mode(const QString& mode)
{
    choose(mode_, mode);
}
void SubmitJobDialog::set_total_batch(int samples)
{
    batch_->setValue(samples);
}
void SubmitJobDialog::set_iterations(int iterations)
{
    iterations_->setValue(iterations);
}

void SubmitJobDialog::set_workers(int workers, int slow)
{
    workers_->setValue(workers);
    slow_->setValue(slow);
}

QString SubmitJobDialog::scenario_json() const
{
    const int slow = std::min(slow_->value(), workers_->value());
    QJsonArray workers;
    if (workers_->value() - slow > 0)
        workers.append(
            QJsonObject { { QStringLiteral("speed"), 3000 }, { QStringLiteral("count"), workers_->value() - slow } });
    if (slow > 0)
        workers.append(QJsonObject { { QStringLiteral("speed"), 1000 }, { QStringLiteral("count"), slow } });
    // A small network, so a console's job runs quickly: the model's own default for the rest.
    QJsonObject model; // a server that lists no models (before list-capabilities had them) takes its default
    if (!model_->currentText().isEmpty())
        model.insert(QStringLiteral("type"), model_->currentText());
    if (takes(model_, QStringLiteral("hidden")))
        model.insert(QStringLiteral("hidden"), QJsonArray { 64 });
    return compact({
        { QStringLiteral("name"), name_->text() },
        { QStringLiteral("mode"), mode_->currentText() },
        { QStringLiteral("model"), model },
        { QStringLiteral("training"),
            QJsonObject { { QStringLiteral("total_batch"), batch_->value() },
                { QStringLiteral("iterations"), iterations_->value() } } },
        { QStringLiteral("policy"), QJsonObject { { QStringLiteral("type"), policy_->currentText() } } },
        { QStringLiteral("workers"), workers },
    });
}

ChangePolicyDialog::ChangePolicyDialog(
    JobId job, const protocol::JobStatus* status, const protocol::Capabilities& offered, QWidget* parent)
    : QDialog(parent)
    , policy_(new QComboBox(this))
    , sync_(new QComboBox(this))
    , backups_(new QSpinBox(this))
    , staleness_(new QSpinBox(this))
{
    setWindowTitle(QStringLiteral("Change the policy of job %1").arg(job));
    add_offered(policy_, settable(offered.policies), offered.policies);
    if (status) {
        // The status names the policy with its parameters, "lbbsp-cpu(narx)".
        const QString current = QString::fromStdString(status->policy).section(QLatin1Char('('), 0, 0);
        if (const int i = policy_->findText(current); i >= 0)
            policy_->setCurrentIndex(i);
    }
    // The status names the sync model with its parameters, "ssp(s=5)". A job with a barrier
    // per iteration switches between bsp and backup; the others among asp, ssp and
    // elastic-bsp (fulcrumd refuses the rest with its reason).
    const QString sync_now
        = status ? QString::fromStdString(status->sync_model).section(QLatin1Char('('), 0, 0) : QString();
    const QString family = family_of(sync_now, offered);
    const bool free_running = family == QStringLiteral("free-running");
    sync_->addItem(QStringLiteral("(unchanged)"));
    add_offered(sync_, settable(offered.sync_models, family), offered.sync_models);
    backups_->setRange(1, std::max(1, status ? status->workers - 1 : 1));
    staleness_->setRange(0, 1000);
    staleness_->setValue(5);
    auto* form = new QFormLayout;
    form->addRow(QStringLiteral("Batch-size policy:"), policy_);
    form->addRow(QStringLiteral("Sync model:"), sync_);
    if (free_running)
        form->addRow(QStringLiteral("Staleness bound (s, for ssp):"), staleness_);
    else
        form->addRow(QStringLiteral("Backup workers (k):"), backups_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(new QLabel(free_running
            ? QStringLiteral("Takes effect between two of the job's updates. Pins and exclusions stay; "
                             "without a barrier only the uniform policy applies.")
            : QStringLiteral("Takes effect at the job's next barrier. Pins and exclusions stay."),
        this));
    layout->addWidget(ok_cancel_buttons(this));
}

void ChangePolicyDialog::set_policy(const QString& policy)
{
    choose(policy_, policy);
}

void ChangePolicyDialog::set_sync(const QString& sync, int backups, int staleness)
{
    if (sync.isEmpty())
        sync_->setCurrentIndex(0);
    else
        choose(sync_, sync);
    backups_->setValue(backups);
    staleness_->setValue(staleness);
}

QString ChangePolicyDialog::policy_json() const
{
    return compact({ { QStringLiteral("type"), policy_->currentText() } });
}

std::optional<QString> ChangePolicyDialog::sync_json() const
{
    if (sync_->currentIndex() == 0)
        return std::nullopt;
    QJsonObject sync { { QStringLiteral("type"), sync_->currentText() } };
    if (takes(sync_, QStringLiteral("backups")))
        sync.insert(QStringLiteral("backups"), backups_->value());
    if (takes(sync_, QStringLiteral("staleness")))
        sync.insert(QStringLiteral("staleness"), staleness_->value());
    return compact(sync);
}

} // namespace fulcrum::ui
