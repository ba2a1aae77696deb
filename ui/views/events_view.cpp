#include "ui/views/events_view.h"

#include "ui/console_store.h"

#include <QHeaderView>
#include <QLineEdit>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace fulcrum::ui {

EventsView::EventsView(ConsoleStore& store, QWidget* parent)
    : QWidget(parent)
    , store_(store)
    , filter_(new QSortFilterProxyModel(this))
    , table_(new QTableView(this))
    , search_(new QLineEdit(this))
{
    filter_->setSourceModel(&store_.events());
    filter_->setFilterKeyColumn(-1);
    filter_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    search_->setPlaceholderText(QStringLiteral("Filter events (kind, worker, message, who)…"));
    search_->setClearButtonEnabled(true);
    connect(search_, &QLineEdit::textChanged, filter_, &QSortFilterProxyModel::setFilterFixedString);
    table_->setModel(filter_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(false);
    table_->horizontalHeader()->setSectionResizeMode(EventsModel::Message, QHeaderView::Stretch);
    table_->setToolTip(QStringLiteral("Double-click or Enter: show this moment in the charts and the timeline"));
    connect(table_, &QTableView::activated, this, [this](const QModelIndex& index) {
        const QModelIndex source = filter_->mapToSource(index);
        if (source.isValid())
            emit jumpRequested(store_.events().at(source.row()));
    });
    // Newest last, and kept in view while the operator is at the bottom.
    connect(&store_.events(), &QAbstractItemModel::rowsInserted, this, [this] {
        if (table_->verticalScrollBar()->value() >= table_->verticalScrollBar()->maximum() - 2)
            table_->scrollToBottom();
    });
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(search_);
    layout->addWidget(table_);
}

} // namespace fulcrum::ui
