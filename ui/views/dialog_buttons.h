#pragma once

#include <QDialog>
#include <QDialogButtonBox>

namespace fulcrum::ui {

// OK and Cancel wired to the dialog's accept and reject.
inline QDialogButtonBox* ok_cancel_buttons(QDialog* dialog)
{
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, dialog);
    QObject::connect(buttons, &QDialogButtonBox::accepted, dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    return buttons;
}

} // namespace fulcrum::ui
