#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QSlider;
class QToolButton;

namespace fulcrum::ui {

class Commands;
class ConsoleStore;
class ReplayNavigator;

// Play, pause, speed, a scrubber over the run's clock and close, for the replay the console
// follows. Hidden while it follows the live stream.
class ReplayBar : public QWidget {
    Q_OBJECT
public:
    ReplayBar(ConsoleStore& store, Commands& commands, ReplayNavigator& navigator, QWidget* parent = nullptr);

    // Through the navigator: forward fast-forwards, so the views miss nothing in between.
    void seek_iteration(std::int64_t iteration);
    void seek_time(double time_s);
    // "iteration 42 of job 0 · 12.3 s of 80.1 s · playing ×10"
    QString position_text() const;

signals:
    void closeRequested();

private:
    void on_state();

    ConsoleStore& store_;
    Commands& commands_;
    ReplayNavigator& navigator_;
    QToolButton* play_;
    QComboBox* speed_;
    QSlider* scrub_;
    QLabel* position_;
    QToolButton* close_;
};

} // namespace fulcrum::ui
