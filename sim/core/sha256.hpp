// SHA-256 (FIPS 180-4) for provenance: manifests record the hash of every input so a user can
// check it with `sha256sum`.
#pragma once

#include <string>
#include <string_view>

namespace sp {

/// Lower-case hex digest of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace sp
