// `tinyddp train`'s outputs: the weight table, --json, the CSV and the plot (gnuplot PNG or a hand-drawn SVG).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>

#include "apps/tinyddp/train/train.h"
#include "apps/tinyddp/svg.h"
#include "models/experiments/experiment.h"
#include "base/error.h"

namespace tinyddp::app {

namespace {

std::string fmt(double v, int precision = 3) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

std::string gfmt(double v, int precision = 4) {
  std::ostringstream s;
  s << std::setprecision(precision) << v;
  return s.str();
}

std::string weighting_summary(const TrainResult& r) {
  const TrainOptions& o = r.options;
  std::ostringstream s;
  s << o.weighting;
  if (o.weighting == "gradnorm" || o.weighting == "gradnorm-squared")
    s << " (alpha " << gfmt(r.alpha) << ", weights " << o.weights_optimizer << " lr " << gfmt(o.lr_weights)
      << ", update every " << o.update_every
      << (o.update_every == 1 ? " step" : " steps") << ")";
  return s.str();
}

// The run's warnings: DDP's, the train loop's (--skip-nonfinite), then one per task whose weight GradNorm's clamp
// held at the floor.
std::vector<std::string> all_warnings(const TrainResult& r) {
  std::vector<std::string> all = r.warnings;
  for (size_t i = 0; i < r.clamped_per_task.size() && i < r.task_names.size(); ++i)
    if (r.clamped_per_task[i] > 0)
      all.push_back("GradNorm's clamp raised the weight of task " + r.task_names[i] + " to the floor min_weight = 1e-6 in " +
                    std::to_string(r.clamped_per_task[i]) + " of " + std::to_string(r.weight_updates) +
                    " weight updates (the latest at step " + std::to_string(r.last_clamped_step[i]) +
                    "): the update pushed it to 0 or below, so that task trains little at those steps; a smaller "
                    "--lr-weights or --weights-optimizer adam clamps less (docs/gradnorm.md)");
  return all;
}

}  // namespace

void print_train_report(std::ostream& out, const TrainResult& r) {
  const TrainOptions& o = r.options;
  out << "tinyddp train: " << o.experiment << " with " << weighting_summary(r) << "\n";
  out << "  " << r.steps << " steps, batch " << r.batch_size << ", " << o.optimizer << " lr " << gfmt(r.lr) << ", "
      << r.world << (r.world == 1 ? " process" : " ranks (" + o.backend + ", DDP)") << ", " << dtype_name(o.dtype)
      << ", " << gfmt(r.seconds, 3) << " s\n";
  out << "  data: " << r.description << "\n";
  if (!o.detach_tasks.empty()) {
    out << "  constructed fault (--detach-task): the head of";
    for (const std::string& t : o.detach_tasks) out << " " << t;
    out << " reads the trunk through .detach()\n";
  }
  out << "\n";

  const size_t tasks = r.task_names.size();
  constexpr int kCol = 18;
  out << "Task weights at chosen steps: normalized to sum 1 (raw in parentheses), and the held-out metric\n"
      << "sum_i L_i(t)/L_i(0) (" << tasks << " = no progress; lower is better).\n\n";
  out << std::right << std::setw(7) << "step";
  for (const std::string& name : r.task_names) out << std::setw(kCol) << name;
  out << std::setw(10) << "metric" << "\n";
  bool floor_marked = false;
  for (const ReportRow& row : r.report) {
    out << std::setw(7) << row.step;
    for (size_t i = 0; i < tasks; ++i) {
      const bool floor = i < row.at_floor.size() && row.at_floor[i];
      floor_marked |= floor;
      out << std::setw(kCol) << (fmt(row.normalized[i]) + " (" + gfmt(row.weights[i], 3) + ")" + (floor ? "*" : ""));
    }
    out << std::setw(10) << fmt(row.metric, 4) << "\n";
  }
  if (floor_marked)
    out << "  * at the floor: the latest update left this weight below min_weight = 1e-6 and the clamp raised it "
           "there (then all were renormalized to sum T)\n";
  out << "\nHeld-out task losses, step 0 -> step " << r.steps << ":";
  for (size_t i = 0; i < tasks; ++i)
    out << "  " << r.task_names[i] << " " << gfmt(r.initial_test_losses[i]) << " -> " << gfmt(r.final_test_losses[i]);
  out << "\nFinal metric sum_i L_i/L_i(0) = " << fmt(r.metric, 4) << "   (weight updates: " << r.weight_updates
      << ", of which clamped at min_weight: " << r.clamped_updates << ")\n";
  if (r.world > 1 && r.batch_size % r.world != 0) {
    const int64_t shard = models::experiments::Experiment::rows_per_rank(r.batch_size, r.world);
    out << "DDP: " << r.world << " ranks x " << shard << " rows: the batch of " << r.batch_size << " is padded to "
        << shard * r.world << " by repeating its first " << shard * r.world - r.batch_size
        << " row(s), as DistributedSampler pads (--batch a multiple of " << r.world << " avoids it)\n";
  }
  if (r.world > 1)
    out << "DDP: task weights bit-identical on every rank after every iteration: "
        << (r.weights_identical_across_ranks ? "yes" : "NO") << "; replicas in sync: "
        << (r.replicas_in_sync ? "yes" : "NO") << "; warnings: " << r.warnings.size() << "\n";
  for (const std::string& w : all_warnings(r)) out << "  warning: " << w << "\n";
}

nlohmann::json train_to_json(const TrainResult& r) {
  const TrainOptions& o = r.options;
  nlohmann::json j;
  j["experiment"] = o.experiment;
  j["weighting"] = o.weighting;
  j["steps"] = r.steps;
  j["tasks"] = r.task_names;
  j["weights"] = r.final_weights;
  j["weights_normalized"] = normalized(r.final_weights);
  j["metric"] = r.metric;
  j["options"] = {{"alpha", r.alpha},
                  {"lr_weights", o.lr_weights},
                  {"weights_optimizer", o.weights_optimizer},
                  {"grad_norm", o.grad_norm},
                  {"update_every", o.update_every},
                  {"batch_size", r.batch_size},
                  {"optimizer", o.optimizer},
                  {"lr", r.lr},
                  {"dtype", dtype_name(o.dtype)},
                  {"ema", o.ema},
                  {"warmup_steps", o.warmup_steps},
                  {"freeze_after", o.freeze_after},
                  {"data_seed", o.data_seed},
                  {"model_seed", o.model_seed}};
  if (!o.detach_tasks.empty()) j["options"]["detach_tasks"] = o.detach_tasks;
  j["ranks"] = r.world;
  j["rows_per_rank"] = models::experiments::Experiment::rows_per_rank(r.batch_size, r.world);   // padded shards
  j["backend"] = o.backend;
  j["description"] = r.description;
  j["initial_test_losses"] = r.initial_test_losses;
  j["final_test_losses"] = r.final_test_losses;
  j["weight_updates"] = r.weight_updates;
  j["clamped_updates"] = r.clamped_updates;
  j["weights_identical_across_ranks"] = r.weights_identical_across_ranks;
  j["replicas_in_sync"] = r.replicas_in_sync;
  j["warnings"] = all_warnings(r);
  nlohmann::json report = nlohmann::json::array();
  for (const ReportRow& row : r.report)
    report.push_back({{"step", row.step},
                      {"weights", row.weights},
                      {"weights_normalized", row.normalized},
                      {"test_losses", row.test_losses},
                      {"metric", row.metric}});
  j["report"] = report;
  nlohmann::json history = nlohmann::json::array();
  for (const HistoryRow& row : r.history) {
    nlohmann::json h = {{"step", row.step}, {"weights", row.weights}, {"losses", row.losses}, {"ratios", row.ratios}};
    if (!row.grad_norms.empty()) h["grad_norms"] = row.grad_norms;
    history.push_back(std::move(h));
  }
  j["history"] = history;
  if (!r.grad_reports.empty()) {
    nlohmann::json reports = nlohmann::json::array();
    for (const models::GradReport& g : r.grad_reports) reports.push_back(grad_report_to_json(g));
    j["grad_report"] = reports;
  }
  return j;
}

// ---- --grad-report ----

nlohmann::json grad_report_to_json(const models::GradReport& g) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const models::TaskGradRow& t : g.tasks)
    tasks.push_back({{"name", t.name},
                     {"loss", t.loss},
                     {"inverse_rate", t.inverse_rate},
                     {"ratio", t.ratio},
                     {"grad_norm", t.grad_norm},
                     {"weight", t.weight},
                     {"weighted_grad_norm", t.weighted_grad_norm},
                     {"target", t.target},
                     {"reaches_shared", t.reaches_shared},
                     {"status", t.status},
                     {"causes", t.causes}});
  nlohmann::json cosine = nlohmann::json::array();
  for (const auto& row : g.cosine) {
    nlohmann::json r = nlohmann::json::array();
    for (const std::optional<double>& c : row) r.push_back(c ? nlohmann::json(*c) : nlohmann::json(nullptr));
    cosine.push_back(r);
  }
  return {{"step", g.step}, {"alpha", g.alpha}, {"shared_shape", g.shared_shape}, {"tasks", tasks},
          {"cosine", cosine}};
}

void print_grad_reports(std::ostream& out, const TrainResult& r) {
  if (r.grad_reports.empty()) return;
  const models::GradReport& first = r.grad_reports.front();
  std::string shape;
  for (int64_t d : first.shared_shape) {
    if (!shape.empty()) shape += "x";
    shape += std::to_string(d);
  }
  out << "\nPer-task gradients on the shared layer W (the trunk's last weight, " << shape << "), "
      << (r.world > 1 ? "averaged over the " + std::to_string(r.world) + " ranks" : "one process") << ":\n"
      << "  G_i = ||grad_W L_i||   w_i = d total/d L_i (what the step's backward applies)   w_i*G_i = what W gets\n"
      << "  r_i = (L_i/L_i(0)) / mean_j(L_j/L_j(0))   target = mean_j(w_j G_j) r_i^alpha, GradNorm's for w_i*G_i "
         "(alpha "
      << gfmt(first.alpha) << ")\n";
  size_t name_width = 6;
  for (const std::string& n : r.task_names) name_width = std::max(name_width, n.size() + 2);
  const int w = static_cast<int>(name_width);
  for (const models::GradReport& g : r.grad_reports) {
    out << "\nstep " << g.step << "\n";
    out << std::right << std::setw(w) << "task" << std::setw(11) << "loss" << std::setw(9) << "L/L(0)" << std::setw(8)
        << "r_i" << std::setw(11) << "G_i" << std::setw(9) << "w_i" << std::setw(11) << "w_i*G_i" << std::setw(11)
        << "target" << "  status\n";
    for (const models::TaskGradRow& t : g.tasks) {
      out << std::setw(w) << t.name << std::setw(11) << gfmt(t.loss) << std::setw(9) << fmt(t.inverse_rate)
          << std::setw(8) << fmt(t.ratio) << std::setw(11) << gfmt(t.grad_norm) << std::setw(9) << gfmt(t.weight)
          << std::setw(11) << gfmt(t.weighted_grad_norm) << std::setw(11) << gfmt(t.target) << "  "
          << (t.status == "ok" ? "ok" : "! " + t.status) << "\n";
    }
    // The cosine matrix; a full one up to 10 tasks (toy10), else each task's most conflicting partner.
    const size_t T = g.tasks.size();
    auto cos_text = [&](size_t i, size_t j) { return g.cosine[i][j] ? fmt(*g.cosine[i][j]) : std::string("-"); };
    if (T <= 10) {
      out << "  cosine between task gradients on W (-1: opposite pulls, which no weighting can fix; "
             "-: no gradient)\n";
      out << std::setw(w + 2) << "";
      for (const models::TaskGradRow& t : g.tasks) out << std::setw(std::max(w, 8)) << t.name;
      out << "\n";
      for (size_t i = 0; i < T; ++i) {
        out << std::setw(w + 2) << g.tasks[i].name;
        for (size_t j = 0; j < T; ++j) out << std::setw(std::max(w, 8)) << cos_text(i, j);
        out << "\n";
      }
    } else {
      out << "  most conflicting task pairs (cosine of the gradients on W):\n";
      for (size_t i = 0; i < T; ++i) {
        std::optional<size_t> worst;
        for (size_t j = 0; j < T; ++j)
          if (j != i && g.cosine[i][j] && (!worst || *g.cosine[i][j] < *g.cosine[i][*worst])) worst = j;
        if (worst) out << "    " << g.tasks[i].name << " vs " << g.tasks[*worst].name << ": " << cos_text(i, *worst) << "\n";
      }
    }
    for (size_t i : g.flagged()) {
      const models::TaskGradRow& t = g.tasks[i];
      out << "  ! " << t.name << ": ";
      if (t.status == "disconnected")
        out << "disconnected from the shared layer: its loss has no gradient on W (on any rank),\n"
               "    so neither the trunk nor GradNorm sees this task. Likely causes:\n";
      else if (t.status == "zero gradient")
        out << "its gradient on the shared layer W is zero at this step,\n"
               "    so the trunk learns nothing from it. Likely causes:\n";
      else
        out << "its gradient on W exists but its weight in the step's loss is 0,\n"
               "    so W receives nothing from it. Likely causes:\n";
      for (const std::string& c : t.causes) out << "      - " << c << "\n";
    }
  }
}

void write_csv(const std::string& path, const TrainResult& r) {
  std::ofstream f(path);
  TINYDDP_CHECK(f.good(), "train: cannot write the CSV file '", path, "' (does its directory exist?).");
  const size_t tasks = r.task_names.size();
  bool have_norms = false;
  for (const HistoryRow& row : r.history) have_norms |= !row.grad_norms.empty();
  f << "step";
  for (const char* prefix : {"w_", "wn_", "loss_", "ratio_"})
    for (const std::string& name : r.task_names) f << "," << prefix << name;
  if (have_norms)
    for (const std::string& name : r.task_names) f << ",gradnorm_" << name;
  f << "\n";
  f << std::setprecision(17);
  for (const HistoryRow& row : r.history) {
    f << row.step;
    for (double w : row.weights) f << "," << w;
    for (double w : normalized(row.weights)) f << "," << w;
    for (double l : row.losses) f << "," << l;
    for (double x : row.ratios) f << "," << x;
    if (have_norms)
      for (size_t i = 0; i < tasks; ++i) {
        f << ",";
        if (i < row.grad_norms.size()) f << row.grad_norms[i];
      }
    f << "\n";
  }
}

// ---- plots ----

namespace {

// Ten distinguishable colors (Tableau 10).
const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string title_of(const TrainResult& r) {
  std::ostringstream s;
  s << r.options.experiment << ", " << weighting_summary(r) << ", " << r.world << (r.world == 1 ? " process" : " ranks");
  return s.str();
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && std::filesystem::exists(std::filesystem::path(dir) / program)) return true;
  return false;
}

std::string gnuplot_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string render_svg(const TrainResult& r) {
  // Two panels side by side: normalized weights (linear, 0..1) and loss ratios L_i(t)/L_i(0) (log10).
  constexpr double kW = 900, kPanelW = 360, kPanelH = 270, kTop = 50, kLeft[2] = {70, 520};
  constexpr size_t kLegendPerRow = 5;
  constexpr double kLegendDx = 160, kLegendDy = 16;
  const size_t tasks = r.task_names.size();
  const double kH = kTop + kPanelH + 62 + kLegendDy * static_cast<double>((tasks + kLegendPerRow - 1) / kLegendPerRow);
  const double max_step = std::max<double>(1, static_cast<double>(r.steps));
  double lo = INFINITY, hi = -INFINITY;
  for (const HistoryRow& row : r.history)
    for (double x : row.ratios)
      if (x > 0 && std::isfinite(x)) lo = std::min(lo, std::log10(x)), hi = std::max(hi, std::log10(x));
  if (!std::isfinite(lo)) lo = -1, hi = 0;
  lo = std::floor(lo), hi = std::max(std::ceil(hi), lo + 1);
  std::ostringstream s;
  s << std::fixed << std::setprecision(1);
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << kW / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" << xml_escape(title_of(r))
    << "</text>\n";
  for (int panel = 0; panel < 2; ++panel) {
    const double x0 = kLeft[panel], y0 = kTop;
    const double ylo = panel == 0 ? 0 : lo, yhi = panel == 0 ? 1 : hi;
    auto px = [&](double step) { return x0 + kPanelW * step / max_step; };
    auto py = [&](double v) { return y0 + kPanelH * (1 - (v - ylo) / (yhi - ylo)); };
    s << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << kPanelW << "\" height=\"" << kPanelH
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
    s << "<text x=\"" << x0 + kPanelW / 2 << "\" y=\"" << y0 - 8 << "\" text-anchor=\"middle\">"
      << (panel == 0 ? "task weights (normalized to sum 1)" : "loss ratio L_i(t)/L_i(0) (log scale)") << "</text>\n";
    for (int k = 0; k <= 4; ++k) {   // x ticks
      const double step = max_step * k / 4;
      s << "<line x1=\"" << px(step) << "\" y1=\"" << y0 + kPanelH << "\" x2=\"" << px(step) << "\" y2=\""
        << y0 + kPanelH + 4 << "\" stroke=\"#333\"/><text x=\"" << px(step) << "\" y=\"" << y0 + kPanelH + 17
        << "\" text-anchor=\"middle\">" << static_cast<int64_t>(std::llround(step)) << "</text>\n";
    }
    s << "<text x=\"" << x0 + kPanelW / 2 << "\" y=\"" << y0 + kPanelH + 34 << "\" text-anchor=\"middle\">step</text>\n";
    const int yticks = panel == 0 ? 4 : static_cast<int>(yhi - ylo);
    for (int k = 0; k <= yticks; ++k) {
      const double v = ylo + (yhi - ylo) * k / yticks;
      const std::string label = panel == 0 ? fmt(v, 2) : "1e" + std::to_string(static_cast<int>(std::lround(v)));
      s << "<line x1=\"" << x0 << "\" y1=\"" << py(v) << "\" x2=\"" << x0 + kPanelW << "\" y2=\"" << py(v)
        << "\" stroke=\"#ddd\"/><text x=\"" << x0 - 6 << "\" y=\"" << py(v) + 4 << "\" text-anchor=\"end\">" << label
        << "</text>\n";
    }
    for (size_t i = 0; i < tasks; ++i) {
      s << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << kColors[i % 10] << "\" points=\"";
      for (const HistoryRow& row : r.history) {
        double v = panel == 0 ? normalized(row.weights)[i] : row.ratios[i];
        if (panel == 1) {
          if (!(v > 0) || !std::isfinite(v)) continue;
          v = std::log10(v);
        }
        s << px(static_cast<double>(row.step)) << "," << py(std::clamp(v, ylo, yhi)) << " ";
      }
      s << "\"/>\n";
    }
  }
  for (size_t i = 0; i < tasks; ++i) {   // legend under the panels
    const double x = kLeft[0] + kLegendDx * static_cast<double>(i % kLegendPerRow),
                 y = kTop + kPanelH + 58 + kLegendDy * static_cast<double>(i / kLegendPerRow);
    s << "<line x1=\"" << x << "\" y1=\"" << y - 4 << "\" x2=\"" << x + 20 << "\" y2=\"" << y - 4 << "\" stroke=\""
      << kColors[i % 10] << "\" stroke-width=\"2\"/><text x=\"" << x + 25 << "\" y=\"" << y << "\">"
      << xml_escape(r.task_names[i]) << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string write_plot(const std::string& path, const TrainResult& r) {
  namespace fs = std::filesystem;
  const bool want_png = fs::path(path).extension() == ".png";
  if (want_png && on_path("gnuplot")) {
    // gnuplot reads a CSV we write next to the plot, then both it and the script are removed.
    const std::string data = path + ".data.csv", script = path + ".gp";
    write_csv(data, r);
    const size_t tasks = r.task_names.size();
    std::ofstream g(script);
    g << "set terminal pngcairo size 1000,420 font ',10'\nset output " << gnuplot_quote(path) << "\n"
      << "set datafile separator ','\nset key outside bottom center horizontal\n"
      << "set multiplot layout 1,2 title " << gnuplot_quote(title_of(r)) << "\n"
      << "set xlabel 'step'\nset title 'task weights (normalized to sum 1)'\nset yrange [0:1]\n";
    g << "plot ";
    for (size_t i = 0; i < tasks; ++i)
      g << (i ? ", " : "") << gnuplot_quote(data) << " skip 1 using 1:" << 2 + tasks + i << " with lines lw 2 lc rgb '"
        << kColors[i % 10] << "' title " << gnuplot_quote(r.task_names[i]);
    g << "\nset title 'loss ratio L_i(t)/L_i(0)'\nset logscale y\nset autoscale y\nplot ";
    for (size_t i = 0; i < tasks; ++i)
      g << (i ? ", " : "") << gnuplot_quote(data) << " skip 1 using 1:" << 2 + 3 * tasks + i << " with lines lw 2 lc rgb '"
        << kColors[i % 10] << "' title " << gnuplot_quote(r.task_names[i]);
    g << "\nunset multiplot\n";
    g.close();
    const std::string cmd = "gnuplot " + gnuplot_quote(script) + " 2>&1";
    const int rc = std::system(cmd.c_str());
    fs::remove(data);
    fs::remove(script);
    TINYDDP_CHECK(rc == 0, "train: gnuplot failed (exit ", rc, ") writing '", path,
                  "'; write an SVG instead with --plot FILE.svg.");
    return path;
  }
  std::string out = path;
  if (want_png) out = fs::path(path).replace_extension(".svg").string();
  std::ofstream f(out);
  TINYDDP_CHECK(f.good(), "train: cannot write the plot file '", out, "' (does its directory exist?).");
  f << render_svg(r);
  return out;
}

}  // namespace tinyddp::app
