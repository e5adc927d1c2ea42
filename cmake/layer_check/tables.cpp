// The backend tables, empty, for the layer checks of the engine and the
// formats (src/CMakeLists.txt): linked in place of the backends, so a call
// into a backend other than through its table is an undefined reference.
// Never run.
#include "core/backend_tables.h"

namespace warpcrypt {

const CpuBackend kCpuBackend{};
const CudaBackend kCudaBackend{};

}  // namespace warpcrypt
