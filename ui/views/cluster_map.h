#pragma once

#include <QWidget>
#include <optional>

namespace fulcrum::ui {

class ConsoleStore;

// fulcrumd's cluster: each server with its GPUs, coloured by the job placed on them, memory
// in use as a bar, utilization in the header. Hovering a GPU tells its jobs and, for each,
// the worker placed there with its batch size and state.
class ClusterMap : public QWidget {
    Q_OBJECT
public:
    explicit ClusterMap(ConsoleStore& store, QWidget* parent = nullptr);
    QSize sizeHint() const override { return { 600, 300 }; }

    std::optional<int> gpu_at(QPoint point) const;
    QString gpu_text(int gpu) const;
    QString header_text() const;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRectF cell(int gpu) const;
    ConsoleStore& store_;
};

} // namespace fulcrum::ui
