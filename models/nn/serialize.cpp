#include "models/nn/serialize.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_set>
#include <vector>

namespace tinyddp::nn {

namespace {

const char* dtype_token(DType dtype) { return dtype == DType::f64 ? "f64" : "f32"; }

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return "[" + out + "]";
}

std::vector<std::string> split_spaces(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string tok; in >> tok;) out.push_back(tok);
  return out;
}

// One parameter read from a file; `value` already has the file's dtype and shape.
struct Entry {
  std::string name;
  size_t line = 0;   // 1-based line of the entry's header, for messages
  Tensor value;
};

// Reads and checks the file's own structure (not yet against a module). `where` prefixes every message.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), in_(path) {
    TINYDDP_CHECK(in_.is_open(), "load_parameters: cannot open '", path, "' for reading (", std::strerror(errno),
                  "). Check the path; relative paths are resolved from the working directory.");
  }

  std::vector<Entry> read_all() {
    std::string line;
    const bool has_header = next(line);
    TINYDDP_CHECK(has_header && line == kParamsHeaderV1, where(), "expected the header line '", kParamsHeaderV1,
                  "' but found ", has_header ? "'" + line + "'" : std::string("an empty file"),
                  ". Is this a tinyddp parameter file? Write one with nn::save_parameters (C++) or "
                  "tests/golden/tdp_params.py's write_params (Python).");
    std::vector<Entry> entries;
    while (next(line)) {
      if (line.empty()) {   // only trailing blank lines may follow the last entry
        std::string rest;
        while (next(rest))
          TINYDDP_CHECK(rest.empty(), where(), "unexpected blank line before '", rest,
                        "'; each parameter is a header line followed by one line of values.");
        break;
      }
      entries.push_back(read_entry(line));
    }
    return entries;
  }

 private:
  bool next(std::string& line) {
    if (!std::getline(in_, line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();   // tolerate CRLF files
    ++line_no_;
    return true;
  }

  std::string where() const { return detail::concat("load_parameters('", path_, "', line ", line_no_, "): "); }

  Entry read_entry(const std::string& header) {
    const auto tok = split_spaces(header);
    const char* kHeaderForm = "<name> <f32|f64> <ndim> <d0> ... <d_{ndim-1}>";
    TINYDDP_CHECK(tok.size() >= 3, where(), "expected a parameter header '", kHeaderForm, "' but found '", header,
                  "'.");
    Entry e{tok[0], line_no_, Tensor()};
    TINYDDP_CHECK(tok[1] == "f32" || tok[1] == "f64", where(), "parameter '", e.name, "' has dtype '", tok[1],
                  "'; expected f32 or f64.");
    const DType dtype = tok[1] == "f64" ? DType::f64 : DType::f32;
    const int64_t ndim = parse_int(tok[2], e.name, "ndim");
    TINYDDP_CHECK(ndim >= 0 && static_cast<size_t>(ndim) == tok.size() - 3, where(), "parameter '", e.name,
                  "' says ndim ", tok[2], " but lists ", tok.size() - 3, " dims: '", header, "'. Expected '",
                  kHeaderForm, "'.");
    Shape shape;
    for (size_t i = 3; i < tok.size(); ++i) {
      shape.push_back(parse_int(tok[i], e.name, "dim"));
      TINYDDP_CHECK(shape.back() >= 0, where(), "parameter '", e.name, "' has a negative dim ", shape.back(), ".");
    }

    std::string values_line;
    TINYDDP_CHECK(next(values_line), where(), "the file ends after the header of parameter '", e.name,
                  "'; its values line is missing (the file may be truncated).");
    e.value = dispatch_floating(dtype, "load_parameters", [&]<typename T>() {
      std::vector<T> values;
      values.reserve(static_cast<size_t>(numel_of(shape)));
      const char* p = values_line.data();
      const char* end = p + values_line.size();
      while (true) {
        while (p < end && *p == ' ') ++p;
        if (p == end) break;
        T v{};
        const auto [ptr, ec] = std::from_chars(p, end, v);
        const char* stop = ptr;
        while (stop < end && *stop != ' ') ++stop;
        TINYDDP_CHECK(ec == std::errc() && ptr == stop, where(), "parameter '", e.name, "': value ",
                      values.size(), " ('", std::string(p, stop), "') is not a valid ", dtype_name(dtype), " number.");
        values.push_back(v);
        p = ptr;
      }
      TINYDDP_CHECK(static_cast<int64_t>(values.size()) == numel_of(shape), where(), "parameter '", e.name,
                    "' of shape ", shape_str(shape), " needs ", numel_of(shape), " values but its line has ",
                    values.size(), ". The file may be truncated or edited by hand; regenerate it.");
      return from_vector<T>(values, shape, dtype);
    });
    return e;
  }

  int64_t parse_int(const std::string& s, const std::string& name, const char* what) const {
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    TINYDDP_CHECK(ec == std::errc() && ptr == s.data() + s.size(), where(), "parameter '", name, "': ", what, " '",
                  s, "' is not an integer.");
    return v;
  }

  std::string path_;
  std::ifstream in_;
  size_t line_no_ = 0;
};

}  // namespace

std::vector<std::pair<std::string, Tensor>> state_entries(const Module& module) {
  std::vector<std::pair<std::string, Tensor>> out;
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& [prefix, m] : module.named_modules()) {
    for (const auto* own : {&m->named_own_parameters(), &m->named_own_buffers()})
      for (const auto& [name, t] : *own)
        if (seen.insert(t.impl()).second) out.emplace_back(prefix.empty() ? name : prefix + "." + name, t);
  }
  return out;
}

void save_parameters(const Module& module, const std::string& path) {
  std::ofstream out(path);
  TINYDDP_CHECK(out.is_open(), "save_parameters: cannot open '", path, "' for writing (", std::strerror(errno),
                "). Check that the directory exists and is writable.");
  out << kParamsHeaderV1 << '\n';
  for (const auto& [name, p] : state_entries(module)) {
    TINYDDP_CHECK(p.dtype() == DType::f32 || p.dtype() == DType::f64, "save_parameters('", path, "'): entry '",
                  name, "' is ", dtype_name(p.dtype()), "; the format holds f32 and f64 only.");
    out << name << ' ' << dtype_token(p.dtype()) << ' ' << p.dim();
    for (int64_t d : p.shape()) out << ' ' << d;
    out << '\n';
    dispatch_floating(p.dtype(), "save_parameters", [&]<typename T>() {
      char buf[64];   // the shortest round-trip form of a double needs at most 24 characters
      bool first = true;
      for (T v : p.detach().template to_vector<T>()) {
        const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
        TINYDDP_INTERNAL_ASSERT(ec == std::errc(), "to_chars overflowed a 64-byte buffer");
        if (!first) out << ' ';
        out.write(buf, end - buf);
        first = false;
      }
    });
    out << '\n';
  }
  out.flush();
  TINYDDP_CHECK(out.good(), "save_parameters: writing '", path, "' failed (disk full?); the file is incomplete.");
}

void load_parameters(Module& module, const std::string& path) {
  const std::vector<Entry> entries = Reader(path).read_all();

  const auto named = state_entries(module);
  std::map<std::string, Tensor> by_name(named.begin(), named.end());
  std::vector<std::string> module_names;
  for (const auto& [n, _] : named) module_names.push_back(n);
  std::set<std::string> buffer_names;
  for (const auto& [n, _] : module.named_buffers()) buffer_names.insert(n);
  auto kind = [&](const std::string& n) { return buffer_names.contains(n) ? "buffer" : "parameter"; };

  std::map<std::string, size_t> seen;   // name -> line of its first entry
  for (const Entry& e : entries) {
    const std::string where = detail::concat("load_parameters('", path, "', line ", e.line, "): ");
    const auto [it, inserted] = seen.emplace(e.name, e.line);
    TINYDDP_CHECK(inserted, where, "parameter '", e.name, "' appears twice (first on line ", it->second,
                  "). Each parameter must appear once; regenerate the file.");
    const auto found = by_name.find(e.name);
    TINYDDP_CHECK(found != by_name.end(), where, "unexpected parameter '", e.name, "': ", module.type_name(),
                  " has no parameter or buffer of that name. Its ",
                  buffer_names.empty() ? "parameters are " : "parameters and buffers are ", join_names(module_names),
                  ". Was the file saved from a different model (or with different module names)?");
    const Tensor& p = found->second;
    TINYDDP_CHECK(p.dtype() == e.value.dtype(), where, "dtype mismatch for ", kind(e.name), " '", e.name,
                  "': the module has ", dtype_token(p.dtype()), ", the file has ", dtype_token(e.value.dtype()),
                  ". Build the module with the file's dtype (e.g. Linear(..., DType::", dtype_token(e.value.dtype()),
                  ")).");
    TINYDDP_CHECK(p.shape() == e.value.shape(), where, "size mismatch for ", kind(e.name), " '", e.name,
                  "': the module expects shape ", shape_str(p.shape()), " but the file has shape ",
                  shape_str(e.value.shape()), ". Check the layer sizes the model was built with.");
  }
  std::vector<std::string> missing_params, missing_buffers;
  for (const auto& n : module_names)
    if (!seen.contains(n)) (buffer_names.contains(n) ? missing_buffers : missing_params).push_back(n);
  const std::string missing =
      (missing_params.empty() ? "" : "parameters " + join_names(missing_params)) +
      (missing_params.empty() || missing_buffers.empty() ? "" : " and ") +
      (missing_buffers.empty() ? "" : "buffers " + join_names(missing_buffers));
  TINYDDP_CHECK(missing.empty(), "load_parameters('", path, "'): missing ", missing, ": ", module.type_name(),
                " has them but the file does not. Was the file saved from a different model (or before buffers "
                "were registered)? Save it again with nn::save_parameters from this model's architecture.");

  NoGradGuard no_grad;
  for (const Entry& e : entries) {
    Tensor p = by_name.at(e.name);
    p.copy_(e.value);
  }
}

}  // namespace tinyddp::nn
