#include "ui/main_window.h"

#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QStatusBar>
#include <QVBoxLayout>

namespace fulcrum::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("Fulcrum"));
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);

    auto* title = new QLabel(QStringLiteral("<h1>Fulcrum</h1><p>Cluster-operations console for distributed training "
                                            "on non-dedicated clusters.</p>"),
        central);
    title->setTextFormat(Qt::RichText);
    layout->addWidget(title);

    auto* chart = new QChart;
    chart->setTitle(QStringLiteral("Equilibrium: batch size per worker (no run connected)"));
    auto* view = new QChartView(chart, central);
    view->setRenderHint(QPainter::Antialiasing);
    layout->addWidget(view, 1);

    setCentralWidget(central);
    statusBar()->showMessage(QStringLiteral("Fulcrum %1 — not connected. Record runs with fulcrum-run.")
                                 .arg(QStringLiteral(FULCRUM_VERSION)));
    resize(960, 600);
}

} // namespace fulcrum::ui
