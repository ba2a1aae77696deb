#pragma once

#include "sched/job.h"

#include <optional>
#include <string>
#include <vector>

namespace fulcrum::sched {

// The models a workload may name, with what the scheduler needs of each (size, forward
// and backward time, batch, memory). Two sets are built in:
// - "table3" (the default): the scheduling paper's Table III, as the authors' simulator
//   holds it (HKBU-HPML/dl-scheduling, online/job_master.py), for one V100;
// - "estimates": the figures Fulcrum used before Table III was at hand, from public
//   V100 throughputs (docs/scheduling.md).
// A user's own set is a CSV file with the header `model,size_mb,forward_ms,backward_ms,
// batch,memory_mb` in Table III's units (1 MB = 10^6 bytes of model, memory in MiB).
class ModelCatalogue {
public:
    static ModelCatalogue table3();
    static ModelCatalogue estimates();
    // Throws InputError naming the file, line and field.
    static ModelCatalogue load(const std::string& path);
    // "table3", "estimates" or the path of a models file.
    static ModelCatalogue named_or_file(const std::string& spec);

    const std::vector<ModelTemplate>& models() const { return models_; }
    std::optional<ModelTemplate> find(const std::string& name) const;
    std::string names() const; // "vgg16, resnet50, ...", for error messages
    std::string csv() const; // in the file format load() reads

private:
    explicit ModelCatalogue(std::vector<ModelTemplate> models)
        : models_(std::move(models))
    {
    }
    std::vector<ModelTemplate> models_;
};

// The default set (Table III).
const std::vector<ModelTemplate>& model_templates();
std::optional<ModelTemplate> find_model_template(const std::string& name);

} // namespace fulcrum::sched
