#include "ui/views/run_list_dialog.h"

#include "ui/models/runs_model.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace fulcrum::ui {

RunListDialog::RunListDialog(
    std::vector<protocol::RunListing> runs, const QString& title, const QString& intro, QWidget* parent)
    : QDialog(parent)
    , model_(new RunsModel(this))
    , table_(new QTableView(this))
    , buttons_(new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(title);
    model_->set_runs(std::move(runs));
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->resizeColumnsToContents();
    connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(table_, &QTableView::doubleClicked, this, [this] {
        if (chosen())
            accept();
    });
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunListDialog::update_buttons);
    auto* layout = new QVBoxLayout(this);
    if (!intro.isEmpty())
        layout->addWidget(new QLabel(intro, this));
    if (model_->rowCount() == 0)
        layout->addWidget(new QLabel(QStringLiteral("No recorded runs yet: a job's run appears here once it has "
                                                    "started recording."),
            this));
    layout->addWidget(table_);
    layout->addWidget(buttons_);
    resize(820, 420);
    for (int row = 0; row < model_->rowCount(); ++row)
        if (RunsModel::replayable(*model_->run(row))) {
            select(row);
            break;
        }
    update_buttons();
}

void RunListDialog::select(int row)
{
    table_->selectRow(row);
    update_buttons();
}

std::optional<protocol::RunListing> RunListDialog::chosen() const
{
    const QModelIndexList rows = table_->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return std::nullopt;
    const protocol::RunListing* run = model_->run(rows.front().row());
    if (!run || !RunsModel::replayable(*run))
        return std::nullopt;
    return *run;
}

void RunListDialog::update_buttons()
{
    buttons_->button(QDialogButtonBox::Open)->setEnabled(chosen().has_value());
}

} // namespace fulcrum::ui
