# Which GPUs the CUDA code is compiled for, unless CMAKE_CUDA_ARCHITECTURES is
# given. Every architecture costs a full compile of every kernel, so:
# - a machine with GPUs builds for those GPUs alone (real code, from
#   nvidia-smi's compute capabilities);
# - a machine without one (a development or CI host) builds once, PTX for
#   compute_75, which the driver compiles at load time for any GPU from
#   Turing on: it runs everywhere, without Hopper's own instructions;
# - a release (-DWARPCRYPT_CUDA_RELEASE=ON, as the wheel is built) gets the
#   release list: real code for Turing (sm_75, the T4), Ampere, Ada and
#   Hopper, and compute_90 PTX that the driver compiles for newer GPUs.
set(WARPCRYPT_CUDA_RELEASE_ARCHITECTURES "75-real;80-real;86-real;89-real;90")
set(WARPCRYPT_CUDA_PORTABLE_ARCHITECTURES "75-virtual")
option(WARPCRYPT_CUDA_RELEASE "Compile the CUDA code for the release list of GPUs (the wheel's)" OFF)

function(warpcrypt_choose_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES)
    return()
  endif()
  if(WARPCRYPT_CUDA_RELEASE)
    set(CMAKE_CUDA_ARCHITECTURES "${WARPCRYPT_CUDA_RELEASE_ARCHITECTURES}" CACHE STRING "CUDA architectures to build for")
    message(STATUS "warpcrypt: CUDA architectures ${WARPCRYPT_CUDA_RELEASE_ARCHITECTURES} (the release list)")
    return()
  endif()
  # nvidia-smi prints one compute capability per GPU ("9.0"). CMake's own
  # "native" would do the same but fails outright where no GPU is found.
  find_program(WARPCRYPT_NVIDIA_SMI nvidia-smi)
  set(detected "")
  if(WARPCRYPT_NVIDIA_SMI)
    execute_process(COMMAND "${WARPCRYPT_NVIDIA_SMI}" --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE capabilities RESULT_VARIABLE smi_status ERROR_QUIET)
    if(smi_status EQUAL 0)
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" capabilities "${capabilities}")
      foreach(capability IN LISTS capabilities)
        string(REPLACE "." "" arch "${capability}")
        list(APPEND detected "${arch}-real")
      endforeach()
      list(REMOVE_DUPLICATES detected)
    endif()
  endif()
  if(detected)
    set(origin "the GPUs present (nvidia-smi)")
  else()
    set(detected "${WARPCRYPT_CUDA_PORTABLE_ARCHITECTURES}")
    set(origin "no GPU found: one portable build, PTX the driver compiles for any GPU from Turing on; \
-DWARPCRYPT_CUDA_RELEASE=ON builds the release list")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${detected}" CACHE STRING
      "CUDA architectures to build for (default: the GPUs present, else one portable PTX build)")
  message(STATUS "warpcrypt: CUDA architectures ${detected} (${origin})")
endfunction()
warpcrypt_choose_cuda_architectures()
