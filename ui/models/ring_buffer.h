#pragma once

#include <cassert>
#include <cstddef>
#include <vector>

namespace fulcrum::ui {

// The newest `capacity` values, oldest first; pushing into a full buffer drops the oldest.
// What keeps the console's memory bounded on long runs: the run store has everything.
template <class T> class RingBuffer {
public:
    explicit RingBuffer(std::size_t capacity = 1)
        : capacity_(capacity ? capacity : 1)
    {
    }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::size_t capacity() const { return capacity_; }

    const T& operator[](std::size_t i) const
    {
        assert(i < size_);
        return data_[slot(i)];
    }
    T& operator[](std::size_t i)
    {
        assert(i < size_);
        return data_[slot(i)];
    }
    const T& back() const { return (*this)[size_ - 1]; }
    const T& front() const { return (*this)[0]; }

    void push_back(T value)
    {
        if (size_ < capacity_) {
            // Storage grows until the first wrap (head_ stays 0 until then); after a pop_back
            // the next slot may already exist and hold a dropped value.
            const std::size_t k = slot(size_);
            if (k < data_.size())
                data_[k] = std::move(value);
            else
                data_.push_back(std::move(value));
            ++size_;
            return;
        }
        data_[head_] = std::move(value);
        head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
    }
    void pop_back()
    {
        assert(size_ > 0);
        --size_;
    }
    void clear()
    {
        data_.clear();
        head_ = size_ = 0;
    }

    // The first position whose value `before` no longer holds for (values ordered by it).
    template <class Before> std::size_t partition_point(Before before) const
    {
        std::size_t lo = 0, hi = size_;
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (before((*this)[mid]))
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }

private:
    // head_ + i < 2 * capacity_: one compare instead of a division, which the views' passes
    // over 64 workers × 10,000 iterations per frame would otherwise pay per sample.
    std::size_t slot(std::size_t i) const
    {
        const std::size_t k = head_ + i;
        return k >= capacity_ ? k - capacity_ : k;
    }

    std::size_t capacity_;
    std::vector<T> data_;
    std::size_t head_ = 0, size_ = 0;
};

} // namespace fulcrum::ui
