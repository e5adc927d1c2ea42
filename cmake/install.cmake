# Installs the static and shared libraries, the CLI, the public header, a CMake
# package (find_package(warpcrypt)) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS warpcrypt_static warpcrypt_shared warpcrypt_cli
        EXPORT warpcryptTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/warpcrypt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(WARPCRYPT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/warpcrypt)
install(EXPORT warpcryptTargets NAMESPACE warpcrypt:: DESTINATION ${WARPCRYPT_CMAKE_DIR})
configure_package_config_file(cmake/warpcryptConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/warpcryptConfig.cmake
  INSTALL_DESTINATION ${WARPCRYPT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/warpcryptConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/warpcryptConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/warpcryptConfigVersion.cmake
              cmake/FindSodium.cmake
        DESTINATION ${WARPCRYPT_CMAKE_DIR})

# The build tree is a CMake package as well (-Dwarpcrypt_DIR=<build dir>): the
# Python extension links the library already built there instead of
# compiling it, CUDA kernels included, a second time (python/CMakeLists.txt).
export(EXPORT warpcryptTargets NAMESPACE warpcrypt:: FILE ${CMAKE_CURRENT_BINARY_DIR}/warpcryptTargets.cmake)
configure_file(cmake/FindSodium.cmake ${CMAKE_CURRENT_BINARY_DIR}/FindSodium.cmake COPYONLY)

if(WARPCRYPT_HAVE_CUDA)
  set(WARPCRYPT_PC_CUDA_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
configure_file(cmake/warpcrypt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/warpcrypt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/warpcrypt.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
