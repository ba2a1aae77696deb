#pragma once

#include "common/records.h"

#include <QColor>
#include <QString>
#include <vector>

namespace fulcrum::ui {

class EventsModel;

// What the time views mark on their axes: the policy's phase changes (LB-BSP Algorithm 2's
// fast-approach -> fine-tune), the equilibria, and every change an operator (or the
// scenario) made to the job: pins, exclusions, stragglers, pauses, policy and sync-model
// changes and resizes, each with who made it in its tooltip, and the automatic ones too (a
// timed exclusion's readmission, a restart); and a worker's trouble: a stall, its recovery,
// its loss.
struct EventMark {
    enum class Kind { Phase, Equilibrium, Operator, Trouble };
    Kind kind = Kind::Phase;
    std::int64_t iteration = 0;
    double time_s = 0; // run clock
    QString label; // short: "pin w2", "policy: lbbsp-cpu"
    QString tooltip; // the event's message and actor
};

// The job's marked events, in the order they happened.
std::vector<EventMark> event_marks(const EventsModel& events, JobId job);
// Marks of one kind at one iteration become one, their labels joined ("pin w1, exclude w2")
// and their tooltips one after the other, so that no action's label hides another's.
std::vector<EventMark> merge_marks(const std::vector<EventMark>& marks);
QColor mark_colour(EventMark::Kind kind);

} // namespace fulcrum::ui
