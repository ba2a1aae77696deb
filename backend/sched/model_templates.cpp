#include "sched/model_templates.h"

namespace fulcrum::sched {

const std::vector<ModelTemplate>& model_templates()
{
    // name, bytes (4 x parameters), memory GB, batch, forward s, backward s. Backward is
    // taken as twice the forward, as measured for these networks on V100s.
    static const std::vector<ModelTemplate> templates = {
        { "vgg16", 4.0 * 138.36e6, 6.5, 32, 0.046, 0.093 },
        { "resnet50", 4.0 * 25.56e6, 5.2, 32, 0.030, 0.059 },
        { "inception-v3", 4.0 * 23.83e6, 5.8, 32, 0.044, 0.089 },
        { "lstm-ptb", 4.0 * 66.0e6, 2.4, 20, 0.020, 0.040 },
    };
    return templates;
}

std::optional<ModelTemplate> find_model_template(const std::string& name)
{
    for (const ModelTemplate& t : model_templates())
        if (t.name == name)
            return t;
    return std::nullopt;
}

} // namespace fulcrum::sched
