# Which GPUs the CUDA code is compiled for, unless CMAKE_CUDA_ARCHITECTURES is
# given. Every architecture costs a full compile of every kernel, so a machine
# with GPUs builds for those GPUs alone; a machine without one (a build or CI
# host, a release build) gets the release list.
#
# The release list: real code for Turing (sm_75, the T4), Ampere, Ada and
# Hopper, and compute_90 PTX that the driver compiles for newer GPUs.
set(WARPCRYPT_CUDA_RELEASE_ARCHITECTURES "75-real;80-real;86-real;89-real;90")

function(warpcrypt_choose_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES)
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
    set(detected "${WARPCRYPT_CUDA_RELEASE_ARCHITECTURES}")
    set(origin "no GPU found: the release list")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${detected}" CACHE STRING
      "CUDA architectures to build for (default: the GPUs present, else the release list)")
  message(STATUS "warpcrypt: CUDA architectures ${detected} (${origin})")
endfunction()
warpcrypt_choose_cuda_architectures()
