#pragma once

#include <QMainWindow>

namespace fulcrum::ui {

// The console's main window. For now a frame with the product name and an empty
// equilibrium chart; the live and replay views arrive with the console issue.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
};

} // namespace fulcrum::ui
