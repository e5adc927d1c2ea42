// The CPU backend's table (core/backend_tables.h).
#include "core/backend_tables.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/evp_aead.h"

namespace warpcrypt {

const CpuBackend kCpuBackend = {
    .make_cipher = cpu::make_cipher,
    .make_lane = cpu::make_lane,
    .make_aead = cpu::make_evp_aead,
    .make_aead_stream = cpu::make_evp_aead_stream,
    .openssl_version = cpu::openssl_version,
};

}  // namespace warpcrypt
