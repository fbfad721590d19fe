// Byte sizes on the command line (core/units.h): a number of bytes, or one with a unit, as a
// person writes it (64MiB, 1GB, 1.5GiB). Every command's size options take them the same way.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/units.h"

namespace chakrasim::cli {

inline CLI::Option* add_size_option(CLI::App* app, const std::string& name, std::uint64_t& bytes,
                                    const std::string& description) {
  return app->add_option(name, bytes, description + " (bytes, or with a unit: 64MiB, 1GB, 1.5GiB)")
      ->transform(CLI::Validator(
          [](std::string& text) -> std::string {
            const auto parsed = parse_byte_size(text);
            if (!parsed) {
              return fmt::format("\"{}\" is not a size; expected bytes, or a number with B, KB, MB, GB, TB "
                                 "(powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), e.g. 64MiB",
                                 text);
            }
            text = std::to_string(*parsed);
            return "";
          },
          "SIZE"));
}

}  // namespace chakrasim::cli
