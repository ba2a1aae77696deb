#pragma once

// Test helper: writes `text` to a file in the temporary folder and returns its path.

#include <filesystem>
#include <fstream>
#include <string>

inline std::string write_temp_file(const std::string& name, const std::string& text)
{
    const auto path = std::filesystem::temp_directory_path() / ("fulcrum-sched-" + name);
    std::ofstream(path) << text;
    return path.string();
}
