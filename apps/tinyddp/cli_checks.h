// CLI11 checks for the commands' numeric options, with messages that say what the flag takes: CLI11's own
// PositiveNumber prints its range as "0.000000 to 1.797e308" in full.
#pragma once

#include <CLI/CLI.hpp>

#include <sstream>
#include <string>

namespace tinyddp::app {

// The option's value must be a number >= min: "--batch: must be at least 1, got 0".
inline CLI::Validator at_least(double min) {
  std::ostringstream bound;
  bound << min;
  return CLI::Validator(
      [min, b = bound.str()](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "expected a number, got '" + text + "'";
        if (value < min) return "must be at least " + b + ", got " + text;
        return {};
      },
      "NUMBER>=" + bound.str());
}

// The option's value must be a number > 0 (a learning rate): "--lr: must be more than 0, got 0".
inline CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "expected a number, got '" + text + "'";
        if (!(value > 0)) return "must be more than 0, got " + text;
        return {};
      },
      "NUMBER>0");
}

}  // namespace tinyddp::app
