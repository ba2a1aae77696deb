#pragma once

#include "ui/models/iteration_history.h"

#include <QImage>
#include <cstdint>
#include <vector>

namespace fulcrum::ui {

// How one worker's iteration ran late: (its batch time − the fastest worker's) / the
// iteration's length. The straggler timeline's heat strip shows its mean.
double lateness_of(const WorkerSample& sample, const IterationSummary& iteration);

// The straggler timeline's lanes as pixels, for one mapping of run time to x. Each worker's
// iterations are drawn as compute, communication and wait segments where they are at least
// a few pixels wide; narrower ones are summed per pixel column and drawn as stacked shares.
//
// It is built once per mapping and then only extended with the iterations that arrive, so
// a frame costs the new samples, not a pass over 64 workers × 10,000 iterations.
class LaneRaster {
public:
    // What the pixels depend on; a different key means a rebuild.
    struct Key {
        const JobHistory* history = nullptr;
        std::uint64_t generation = 0; // the history's: it changes when iterations are dropped
        double t0 = 0, t1 = 1; // run seconds at the left and right edges
        int width = 0, height = 0; // pixels
        std::int64_t first = 0; // the first iteration drawn
        // The lanes drawn, the image's height shared among them: `lanes` workers from
        // `first_worker` (0 lanes: every worker). Every worker's lateness is kept either way.
        int first_worker = 0, lanes = 0;

        bool operator==(const Key&) const = default;
    };

    const Key& key() const { return key_; }
    // Rebuilds from `key.first` through `last` if the key differs, else adds the iterations
    // after the last one drawn through `last`.
    void update(const Key& key, std::int64_t last);
    const QImage& image() const { return image_; }
    // Each worker's mean lateness over the iterations drawn (0 without any).
    std::vector<double> lateness() const;
    // A drawn worker's lane, from the image's top; only meaningful where shows(worker).
    int lane_top(int worker) const;
    int lane_height() const;
    bool shows(int worker) const;

private:
    struct Column {
        float compute = 0, comm = 0, wait = 0;
        int stragglers = 0;
    };
    struct Lane {
        std::vector<Column> columns;
        std::int64_t drawn_through = -1;
        int min_dirty = 0, max_dirty = -1; // columns to repaint
        double lateness_sum = 0;
        int lateness_count = 0;
    };
    void add(int worker, std::int64_t last);
    void paint_columns(int worker);
    double x_of(double t) const { return (t - key_.t0) * scale_; }
    int lanes_drawn() const; // how many lanes share the image's height

    Key key_;
    double scale_ = 1; // pixels per run second
    std::vector<Lane> lanes_;
    QImage image_;
};

} // namespace fulcrum::ui
