#include "ui/main_window.h"

#include <QApplication>
#include <QImage>
#include <QStatusBar>
#include <gtest/gtest.h>

TEST(MainWindow, OpensWithTheProductNameAndRendersOffscreen)
{
    fulcrum::ui::MainWindow window;
    window.show();
    QApplication::processEvents();
    EXPECT_EQ(window.windowTitle(), QStringLiteral("Fulcrum"));
    EXPECT_TRUE(window.statusBar()->currentMessage().contains(QStringLiteral("not connected")));
    const QImage image = window.grab().toImage();
    ASSERT_FALSE(image.isNull());
    EXPECT_GE(image.width(), 640);
    // Not a blank frame: the title and chart put more than one colour on screen.
    EXPECT_NE(image.pixel(20, 20), image.pixel(image.width() / 2, image.height() / 2));
}

// The application must outlive every widget and die before Qt's globals: own it in main().
int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen"); // CI has no display
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
