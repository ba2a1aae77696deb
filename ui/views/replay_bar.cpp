#include "ui/views/replay_bar.h"

#include "ui/client/commands.h"
#include "ui/client/replay_navigator.h"
#include "ui/console_store.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QStyle>
#include <QToolButton>

namespace fulcrum::ui {

namespace {
constexpr int kScrubSteps = 1000;
}

ReplayBar::ReplayBar(ConsoleStore& store, Commands& commands, ReplayNavigator& navigator, QWidget* parent)
    : QWidget(parent)
    , store_(store)
    , commands_(commands)
    , navigator_(navigator)
    , play_(new QToolButton(this))
    , speed_(new QComboBox(this))
    , scrub_(new QSlider(Qt::Horizontal, this))
    , position_(new QLabel(this))
    , close_(new QToolButton(this))
{
    play_->setToolTip(QStringLiteral("Play or pause the replay (Space)"));
    play_->setShortcut(QKeySequence(Qt::Key_Space));
    for (const double s : { 0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 1000.0 })
        speed_->addItem(QStringLiteral("×%1").arg(s), s);
    speed_->addItem(QStringLiteral("as fast as possible"), 0.0);
    speed_->setCurrentIndex(1);
    speed_->setToolTip(QStringLiteral("Run seconds per wall second"));
    scrub_->setRange(0, kScrubSteps);
    scrub_->setToolTip(QStringLiteral("Drag to any moment of the run"));
    close_->setText(QStringLiteral("Close replay"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->addWidget(new QLabel(QStringLiteral("Replay:"), this));
    layout->addWidget(play_);
    layout->addWidget(speed_);
    layout->addWidget(scrub_, 1);
    layout->addWidget(position_);
    layout->addWidget(close_);

    connect(play_, &QToolButton::clicked, this, [this] {
        const protocol::ReplayState* s = store_.replay_state();
        if (!s)
            return;
        protocol::ReplayCommand c;
        c.replay = s->replay;
        c.action
            = s->state == protocol::ReplayPhase::Playing ? protocol::ReplayAction::Pause : protocol::ReplayAction::Play;
        if (s->state == protocol::ReplayPhase::Finished) {
            seek_time(0); // from the start again
            c.action = protocol::ReplayAction::Play;
        }
        commands_.replay(c);
    });
    connect(speed_, &QComboBox::activated, this, [this] {
        const protocol::ReplayState* s = store_.replay_state();
        if (!s)
            return;
        protocol::ReplayCommand c;
        c.replay = s->replay;
        c.action = protocol::ReplayAction::SetSpeed;
        c.speed = speed_->currentData().toDouble();
        commands_.replay(c);
    });
    connect(scrub_, &QSlider::sliderReleased, this, [this] {
        const protocol::ReplayState* s = store_.replay_state();
        if (s)
            seek_time(s->end_time_s * scrub_->value() / kScrubSteps);
    });
    connect(close_, &QToolButton::clicked, this, &ReplayBar::closeRequested);
    connect(&store_, &ConsoleStore::replayStateChanged, this, &ReplayBar::on_state);
    on_state();
}

void ReplayBar::seek_iteration(std::int64_t iteration)
{
    navigator_.go_to_iteration(iteration);
}

void ReplayBar::seek_time(double time_s)
{
    navigator_.go_to_time(time_s);
}

QString ReplayBar::position_text() const
{
    const protocol::ReplayState* s = store_.replay_state();
    if (!s)
        return {};
    const QString phase = QString::fromStdString(std::string(protocol::to_string(s->state)));
    const bool playing = s->state == protocol::ReplayPhase::Playing;
    // What is left of the run: its end less the position, on the run's clock, at the speed
    // it plays (not an extrapolation of the time so far).
    const double left_s = std::max(0.0, s->end_time_s - s->time_s);
    const QString left = playing && s->speed > 0
        ? QStringLiteral(" · %1 s left at ×%2").arg(left_s / s->speed, 0, 'f', 1).arg(s->speed)
        : QStringLiteral(" · %1 s of the run left").arg(left_s, 0, 'f', 1);
    const QString where = s->iteration < 0 ? QStringLiteral("before the first iteration")
                                           : QStringLiteral("iteration %1 of job %2").arg(s->iteration).arg(s->job);
    return QStringLiteral("%1 · %2 s of %3 s%4 · %5 %6")
        .arg(where)
        .arg(s->time_s, 0, 'f', 1)
        .arg(s->end_time_s, 0, 'f', 1)
        .arg(left)
        .arg(phase)
        .arg(!playing          ? QString()
                : s->speed > 0 ? QStringLiteral("×%1").arg(s->speed)
                               : QStringLiteral("as fast as possible"));
}

void ReplayBar::on_state()
{
    const protocol::ReplayState* s = store_.replay_state();
    setVisible(store_.replaying());
    if (!s)
        return;
    const bool playing = s->state == protocol::ReplayPhase::Playing;
    play_->setIcon(style()->standardIcon(playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    play_->setText(playing ? QStringLiteral("Pause") : QStringLiteral("Play"));
    if (const int i = speed_->findData(s->speed); i >= 0)
        speed_->setCurrentIndex(i);
    if (!scrub_->isSliderDown() && s->end_time_s > 0)
        scrub_->setValue(static_cast<int>(s->time_s / s->end_time_s * kScrubSteps));
    position_->setText(position_text());
}

} // namespace fulcrum::ui
