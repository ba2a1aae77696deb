#include "ui/views/export.h"

#include <QAbstractItemModel>
#include <QFile>
#include <QPixmap>
#include <QSaveFile>
#include <QWidget>

namespace fulcrum::ui {

namespace {

QString field(QString text)
{
    if (text.contains(QLatin1Char(',')) || text.contains(QLatin1Char('"')) || text.contains(QLatin1Char('\n'))) {
        text.replace(QStringLiteral("\""), QStringLiteral("\"\""));
        return QLatin1Char('"') + text + QLatin1Char('"');
    }
    return text;
}

} // namespace

QString table_csv(const QAbstractItemModel& model)
{
    QString csv;
    const int columns = model.columnCount();
    for (int c = 0; c < columns; ++c)
        csv += (c ? QStringLiteral(",") : QString()) + field(model.headerData(c, Qt::Horizontal).toString());
    csv += QLatin1Char('\n');
    for (int r = 0; r < model.rowCount(); ++r) {
        for (int c = 0; c < columns; ++c)
            csv += (c ? QStringLiteral(",") : QString()) + field(model.index(r, c).data().toString());
        csv += QLatin1Char('\n');
    }
    return csv;
}

bool write_text(const QString& path, const QString& text, QString* error)
{
    QSaveFile file(path); // all or nothing: a failed export never leaves half a file
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(text.toUtf8()) < 0 || !file.commit()) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool save_png(QWidget& widget, const QString& path, QString* error)
{
    if (!widget.grab().save(path, "PNG")) {
        if (error)
            *error = QStringLiteral("%1: cannot be written as PNG").arg(path);
        return false;
    }
    return true;
}

} // namespace fulcrum::ui
