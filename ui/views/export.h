#pragma once

#include <QString>

class QAbstractItemModel;
class QWidget;

namespace fulcrum::ui {

// A table as CSV: the header row, then every row as shown (display role), quoted where a
// field holds a comma, a quote or a line break.
QString table_csv(const QAbstractItemModel& model);
// Writes text to a file; false and a reason when it cannot.
bool write_text(const QString& path, const QString& text, QString* error);
// Renders a widget (a chart, the timeline) to a PNG at the screen's pixel ratio.
bool save_png(QWidget& widget, const QString& path, QString* error);

} // namespace fulcrum::ui
