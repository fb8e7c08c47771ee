// What a bad input is told: the message of the InputError `f` throws, or "(no error)" where it
// accepts the input, so that a test of file:line messages reads each case in one line.
#pragma once

#include <string>

#include "sim/core/error.hpp"

namespace sp {

template <class F>
std::string input_error_message(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace sp
