#include "model_file.hpp"

#include <cmath>

#include "toml_file.hpp"

namespace fabricsim::app {

using namespace toml_file;

namespace {

// The documented ranges (docs/models.md): sizes per sample up to 1 TiB,
// counts of collectives per pass up to 1024, so that their products with a
// layout's samples, ranks and micro-batches stay far inside 64 bits (the
// products are checked where the layout is known, dnn_endpoints).
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 40;
constexpr std::uint64_t kMaxCollectivesPerPass = 1024;

std::uint64_t get_count(const toml::table& t, const char* key, const std::string& file, const char* ctx,
                        std::uint64_t def, std::uint64_t min, std::uint64_t max) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return def;
  const auto v = n->value<std::int64_t>();
  if (!v || n->is_floating_point())
    throw ConfigError(fmt::format("{}: {}.{}: expected an integer", at(file, n->source()), ctx, key));
  if (*v < static_cast<std::int64_t>(min))
    throw ConfigError(fmt::format("{}: {}.{}: {} is below {}", at(file, n->source()), ctx, key, *v, min));
  if (static_cast<std::uint64_t>(*v) > max)
    throw ConfigError(fmt::format("{}: {}.{}: {} is above {}", at(file, n->source()), ctx, key, *v, max));
  return static_cast<std::uint64_t>(*v);
}

double get_time(const toml::table& t, const char* key, const std::string& file, const char* ctx) {
  const double v = get_number(t, key, file, ctx, 0.0, -1.0);
  if (!std::isfinite(v) || v < 0 || v > 1e15)
    throw ConfigError(
        fmt::format("{}: {}.{}: must be a finite time from 0 to 1e15 ns", at(file, t.get(key)->source()), ctx, key));
  return v;
}

}  // namespace

workload::DnnModel load_model(const std::string& path) {
  const toml::table root = parse_file(path, "workload.model");
  check_keys(root, {"model", "layer"}, path, "model file");
  const toml::node* mnode = root.get("model");
  if (mnode == nullptr) throw ConfigError(fmt::format("{}: model file: missing [model]", path));
  const toml::table& m = as_table(*mnode, path, "model");
  check_keys(m, {"name", "source", "bytes_per_value", "minibatch", "optimizer_ns"}, path, "model");
  workload::DnnModel model;
  model.name = get_string(m, "name", path, "model", true);
  model.source = get_string(m, "source", path, "model", false);
  model.bytes_per_value = static_cast<std::uint32_t>(get_count(m, "bytes_per_value", path, "model", 4, 1, 16));
  model.minibatch = get_count(m, "minibatch", path, "model", 0, 1, kMaxBytes);
  if (model.minibatch == 0) throw ConfigError(fmt::format("{}: model: missing `minibatch`", at(path, m.source())));
  if (m.get("optimizer_ns")) model.optimizer_ns = get_time(m, "optimizer_ns", path, "model");
  const toml::array* layers = root["layer"].as_array();
  if (layers == nullptr || layers->empty()) throw ConfigError(fmt::format("{}: model file: no [[layer]] tables", path));
  std::uint64_t gradient_bytes = 0;
  for (const toml::node& n : *layers) {
    const toml::table& t = as_table(n, path, "layer");
    check_keys(t,
               {"name", "count", "forward_ns", "backward_ns", "params", "activation_bytes", "tp_allreduce_bytes",
                "tp_allreduces", "alltoall_bytes", "alltoalls"},
               path, "layer");
    workload::DnnLayer l;
    l.name = get_string(t, "name", path, "layer", true);
    // Required (docs/models.md): a forgotten one would silently be 0 (no
    // compute, no gradients); a layer without them says 0.
    for (const char* key : {"forward_ns", "backward_ns", "params"})
      if (t.get(key) == nullptr)
        throw ConfigError(fmt::format("{}: layer: missing `{}` (layer '{}'; write 0 for none)", at(path, t.source()),
                                      key, l.name));
    l.forward_ns = get_time(t, "forward_ns", path, "layer");
    l.backward_ns = get_time(t, "backward_ns", path, "layer");
    l.params = get_count(t, "params", path, "layer", 0, 0, kMaxBytes);
    l.activation_bytes = get_count(t, "activation_bytes", path, "layer", 0, 0, kMaxBytes);
    l.tp_allreduce_bytes = get_count(t, "tp_allreduce_bytes", path, "layer", 0, 0, kMaxBytes);
    l.tp_allreduces = static_cast<std::uint32_t>(get_count(t, "tp_allreduces", path, "layer", 0, 0, kMaxCollectivesPerPass));
    l.alltoall_bytes = get_count(t, "alltoall_bytes", path, "layer", 0, 0, kMaxBytes);
    l.alltoalls = static_cast<std::uint32_t>(get_count(t, "alltoalls", path, "layer", 0, 0, kMaxCollectivesPerPass));
    if ((l.tp_allreduces > 0) != (l.tp_allreduce_bytes > 0) || (l.alltoalls > 0) != (l.alltoall_bytes > 0))
      throw ConfigError(fmt::format("{}: layer {}: give both the count and the bytes of its allreduces/alltoalls",
                                    at(path, t.source()), l.name));
    const std::uint64_t count = get_count(t, "count", path, "layer", 1, 1, 100000);
    if (model.layers.size() + count > 100000)
      throw ConfigError(fmt::format("{}: layer.count: more than 100000 layers in all", at(path, t.source())));
    // The gradients of the whole model (params x bytes_per_value, summed):
    // at most 2^50 bytes, so every bucket and shard of them fits.
    gradient_bytes += count * l.params * model.bytes_per_value;
    if (gradient_bytes > (std::uint64_t{1} << 50))
      throw ConfigError(fmt::format("{}: layer.params: the model's gradients (params x bytes_per_value over all "
                                    "layers) exceed 2^50 bytes",
                                    at(path, t.get("params") ? t.get("params")->source() : t.source())));
    for (std::uint64_t i = 0; i < count; ++i) model.layers.push_back(l);
  }
  return model;
}

}  // namespace fabricsim::app
