#include "apps/tinyddp/repro/plan.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "base/error.h"

namespace tinyddp::app {

namespace {

const char* const kStepWords = "forward, backward(...), grad(...), step, no_sync{...}, freeze(...), unfreeze(...), "
                               "rank(R){...}, iter(N){...}, disc(...) or disc_step";
const std::vector<std::string> kStepNames = {"forward", "backward", "grad",    "step", "no_sync", "freeze",
                                             "unfreeze", "rank",    "iter",    "disc", "disc_step"};
const std::vector<std::string> kForwardFlags = {"no_text", "drop_text", "detach", "ckpt", "ckpt_nr", "reuse", "features"};
const std::vector<std::string> kTermNames = {"a", "b", "t", "t_outside", "dummy", "d_real", "d_fake", "g_adv"};
const std::vector<std::string> kDiscInputs = {"real", "fake", "fake_detached"};

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  std::vector<PlanStep> parse() {
    std::vector<PlanStep> steps = parse_steps('\0', false);
    skip_space();
    if (pos_ < s_.size()) fail("';' or the end of the plan");
    return steps;
  }

 private:
  std::vector<PlanStep> parse_steps(char close, bool in_no_sync) {
    std::vector<PlanStep> steps;
    while (true) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] == close) break;
      steps.push_back(parse_step(in_no_sync));
      if (accept(';')) continue;
      break;
    }
    if (steps.empty()) fail(std::string("a step (") + kStepWords + ")");
    return steps;
  }

  std::vector<PlanStep> block(bool in_no_sync) {
    expect('{');
    std::vector<PlanStep> body = parse_steps('}', in_no_sync);
    expect('}');
    return body;
  }

  PlanStep parse_step(bool in_no_sync) {
    skip_space();
    const size_t start = pos_;
    const std::string word = identifier();
    PlanStep step{};
    step.pos = start;
    if (word == "forward") {
      step.kind = PlanStep::Kind::forward;
      if (accept('(')) {
        do forward_flag(step.forward);
        while (accept(','));
        expect(')');
      }
    } else if (word == "backward" || word == "grad") {
      step.kind = word == "grad" ? PlanStep::Kind::grad : PlanStep::Kind::backward;
      expect('(');
      do step.terms.push_back(term());
      while (accept('+'));
      // Options after the expression, each at most once, in this order: retain, create_graph.
      while (accept(',')) {
        const size_t at = pos_;
        const std::string opt = identifier();
        if (opt == "retain" && !step.retain && !step.create_graph) {
          step.retain = true;
        } else if (opt == "create_graph" && !step.create_graph) {
          step.create_graph = true;
        } else {
          pos_ = at;
          fail(step.retain || step.create_graph ? "'create_graph' once, after 'retain'"
                                                : "'retain' or 'create_graph' after the loss expression",
               opt, {"retain", "create_graph"});
        }
      }
      expect(')');
    } else if (word == "step") {
      step.kind = PlanStep::Kind::step;
    } else if (word == "disc_step") {
      step.kind = PlanStep::Kind::disc_step;
    } else if (word == "disc") {
      step.kind = PlanStep::Kind::disc;
      expect('(');
      const size_t at = pos_;
      step.disc_input = identifier();
      if (step.disc_input != "real" && step.disc_input != "fake" && step.disc_input != "fake_detached") {
        pos_ = at;
        fail("the discriminator's input: real, fake or fake_detached", step.disc_input, kDiscInputs);
      }
      expect(')');
    } else if (word == "no_sync") {
      step.kind = PlanStep::Kind::no_sync;
      if (in_no_sync) {
        pos_ = start;
        fail("a step other than no_sync: no_sync{...} cannot be nested");
      }
      step.body = block(true);
    } else if (word == "freeze" || word == "unfreeze") {
      step.kind = word == "freeze" ? PlanStep::Kind::freeze : PlanStep::Kind::unfreeze;
      expect('(');
      skip_space();
      const size_t at = pos_;
      step.module = dotted_name();
      const auto& names = freezable_modules();
      if (std::find(names.begin(), names.end(), step.module) == names.end()) {
        pos_ = at;
        fail("a module: trunk, trunk.0, trunk.2, head_a, head_b, text_decoder or disc", step.module, names);
      }
      expect(')');
    } else if (word == "rank") {
      step.kind = PlanStep::Kind::rank;
      expect('(');
      step.rank = static_cast<int>(integer("a rank number"));
      expect(')');
      step.body = block(in_no_sync);
    } else if (word == "iter") {
      step.kind = PlanStep::Kind::iteration;
      expect('(');
      step.iteration = static_cast<int>(integer("an iteration number (from 1)"));
      if (step.iteration < 1) fail("an iteration number of at least 1", std::to_string(step.iteration));
      step.and_later = accept('+');
      expect(')');
      step.body = block(in_no_sync);
    } else {
      pos_ = start;
      fail(kStepWords, word, kStepNames);
    }
    return step;
  }

  void forward_flag(models::ScenarioForward& f) {
    const size_t start = pos_;
    const std::string flag = identifier();
    auto text_mode = [&](models::TextMode m) {
      if (f.text != models::TextMode::normal) {
        pos_ = start;
        fail("at most one of no_text, drop_text, detach", flag);
      }
      f.text = m;
    };
    if (flag == "no_text") text_mode(models::TextMode::no_text);
    else if (flag == "drop_text") text_mode(models::TextMode::drop_text);
    else if (flag == "detach") text_mode(models::TextMode::detach);
    else if (flag == "ckpt") f.checkpoint = models::Checkpointing::reentrant;
    else if (flag == "ckpt_nr") f.checkpoint = models::Checkpointing::non_reentrant;
    else if (flag == "reuse") f.reuse = true;
    else if (flag == "features") f.features = true;
    else {
      pos_ = start;
      fail("a forward flag: no_text, drop_text, detach, ckpt, ckpt_nr, reuse or features", flag, kForwardFlags);
    }
  }

  LossTerm term() {
    skip_space();
    LossTerm t;
    if (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) t.scale = scale();
    const size_t start = pos_;
    t.name = identifier();
    if (std::find(kTermNames.begin(), kTermNames.end(), t.name) == kTermNames.end()) {
      pos_ = start;
      fail("a loss term: a, b, t, t_outside, dummy, d_real, d_fake or g_adv", t.name, kTermNames);
    }
    const bool reads_disc = t.name == "d_real" || t.name == "d_fake" || t.name == "g_adv";
    if (!reads_disc && accept('@')) {
      t.forward = static_cast<int>(integer("a forward number after '@' (from 1)"));
      if (t.forward < 1) fail("a forward number of at least 1 after '@'", std::to_string(t.forward));
    }
    return t;
  }

  // SCALE in SCALE*NAME: a finite, positive decimal number (std::stod's out_of_range would surface as "stod").
  double scale() {
    const size_t start = pos_;
    size_t end = pos_;
    while (end < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[end])) || s_[end] == '.' ||
                               ((s_[end] == 'e' || s_[end] == 'E') && end > start) ||
                               ((s_[end] == '+' || s_[end] == '-') && (s_[end - 1] == 'e' || s_[end - 1] == 'E'))))
      ++end;
    const std::string text = s_.substr(start, end - start);
    char* parsed_end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &parsed_end);
    const bool whole = parsed_end == text.c_str() + text.size();
    if (!whole || errno == ERANGE || !std::isfinite(v) || !(v > 0))
      fail("a scale: a finite number above 0 in decimal or e-notation, like 0.5 or 2e-3 (at most about 1.8e308, "
           "the largest double)",
           text, {}, text.size());
    pos_ = end;
    expect('*');
    return v;
  }

  int64_t integer(const char* what) {
    skip_space();
    const size_t start = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (start == pos_ || pos_ - start > 6) {
      pos_ = start;
      fail(what);
    }
    return std::stoll(s_.substr(start, pos_ - start));
  }

  std::string identifier() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (start == pos_) fail("a word");
    return s_.substr(start, pos_ - start);
  }
  std::string dotted_name() {
    std::string name = identifier();
    while (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      name += "." + identifier();
    }
    return name;
  }

  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ >= s_.size() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("'") + c + "'");
  }
  // `found`: the word at pos_ (the caret underlines it); `candidates`: the words allowed there, for "did you
  // mean"; `width`: the caret's width when it is not the found word's.
  [[noreturn]] void fail(const std::string& expected, const std::string& found = "",
                         const std::vector<std::string>& candidates = {}, size_t width = 0) {
    skip_space();
    std::ostringstream os;
    os << "expected " << expected << " at position " << pos_ << " but found "
       << (!found.empty() ? "'" + found + "'" : pos_ < s_.size() ? "'" + s_.substr(pos_, 12) + "'" : "the end");
    if (const std::string meant = closest_word(found, candidates); !meant.empty())
      os << "; did you mean '" << meant << "'?";
    throw PlanError(plan_error_text(os.str(), s_, pos_, width ? width : std::max<size_t>(found.size(), 1)));
  }

  const std::string& s_;
  size_t pos_ = 0;
};

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string forward_text(const models::ScenarioForward& f) {
  std::vector<std::string> flags;
  switch (f.text) {
    case models::TextMode::normal: break;
    case models::TextMode::no_text: flags.push_back("no_text"); break;
    case models::TextMode::drop_text: flags.push_back("drop_text"); break;
    case models::TextMode::detach: flags.push_back("detach"); break;
  }
  if (f.checkpoint == models::Checkpointing::reentrant) flags.push_back("ckpt");
  if (f.checkpoint == models::Checkpointing::non_reentrant) flags.push_back("ckpt_nr");
  if (f.reuse) flags.push_back("reuse");
  if (f.features) flags.push_back("features");
  std::string s = "forward";
  for (size_t i = 0; i < flags.size(); ++i) s += (i ? ", " : "(") + flags[i];
  return flags.empty() ? s : s + ")";
}

}  // namespace

std::string plan_error_text(const std::string& message, const std::string& plan, size_t pos, size_t width) {
  pos = std::min(pos, plan.size());
  return "plan: " + message + "\n  " + plan + "\n  " + std::string(pos, ' ') + "^" +
         std::string(width > 1 ? width - 1 : 0, '~') +
         "\nSee `tinyddp repro --help` for the plan language (docs/the-runtime-error.md, \"Writing your own plan\").";
}

std::string closest_word(const std::string& word, const std::vector<std::string>& candidates) {
  // Levenshtein distance; a typo is at most 2 edits away, and fewer than the word's own length.
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  size_t best_distance = 3;
  for (const std::string& c : candidates) {
    const size_t d = distance(word, c);
    if (d < best_distance && d < std::max(word.size(), c.size())) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

const std::vector<std::string>& freezable_modules() {
  static const std::vector<std::string> names = {"trunk",  "trunk.0",      "trunk.2", "head_a",
                                                 "head_b", "text_decoder", "disc"};
  return names;
}

std::string PlanStep::call_kind() const {
  switch (kind) {
    case Kind::forward: return "forward";
    case Kind::backward: return "backward";
    case Kind::grad: return "grad";
    case Kind::step: return "step";
    case Kind::disc: return "disc";
    case Kind::disc_step: return "disc_step";
    case Kind::freeze: return "freeze";
    case Kind::unfreeze: return "unfreeze";
    case Kind::no_sync:
    case Kind::rank:
    case Kind::iteration: return "";
  }
  return "";
}

std::string PlanStep::text() const {
  switch (kind) {
    case Kind::forward: return forward_text(forward);
    case Kind::backward:
    case Kind::grad: {
      std::string s = kind == Kind::grad ? "grad(" : "backward(";
      for (size_t i = 0; i < terms.size(); ++i) {
        const LossTerm& t = terms[i];
        s += (i ? "+" : "") + (t.scale == 1.0 ? "" : number(t.scale) + "*") + t.name +
             (t.forward ? "@" + std::to_string(t.forward) : "");
      }
      return s + (retain ? ", retain" : "") + (create_graph ? ", create_graph" : "") + ")";
    }
    case Kind::step: return "step";
    case Kind::disc: return "disc(" + disc_input + ")";
    case Kind::disc_step: return "disc_step";
    case Kind::no_sync: return "no_sync{ " + plan_text(body) + " }";
    case Kind::freeze: return "freeze(" + module + ")";
    case Kind::unfreeze: return "unfreeze(" + module + ")";
    case Kind::rank: return "rank(" + std::to_string(rank) + "){ " + plan_text(body) + " }";
    case Kind::iteration:
      return "iter(" + std::to_string(iteration) + (and_later ? "+" : "") + "){ " + plan_text(body) + " }";
  }
  return "?";
}

std::string plan_text(const std::vector<PlanStep>& steps) {
  std::string s;
  for (size_t i = 0; i < steps.size(); ++i) s += (i ? "; " : "") + steps[i].text();
  return s;
}

std::vector<PlanStep> parse_plan(const std::string& plan) { return Parser(plan).parse(); }

}  // namespace tinyddp::app
