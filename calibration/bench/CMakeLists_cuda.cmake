# scalepoint-gpu-bench: optional CUDA timings (GEMM, memory bandwidth, NCCL all-reduce) for
# calibrating a platform's GPUs; scalepoint-coloc-bench: K processes sharing one GPU (time slicing,
# MPS) and the board's power. Off by default so that neither the default build nor the tests
# need a CUDA toolkit. Included from calibration/CMakeLists.txt.
option(SCALEPOINT_WITH_CUDA "Build scalepoint-gpu-bench (needs the CUDA toolkit; NCCL optional)" OFF)

if(SCALEPOINT_WITH_CUDA)
  find_package(CUDAToolkit)
  if(NOT CUDAToolkit_FOUND OR NOT CUDAToolkit_NVCC_EXECUTABLE)
    message(FATAL_ERROR
      "SCALEPOINT_WITH_CUDA is ON but no CUDA toolkit (with nvcc) was found. Point CMake at one with "
      "-DCUDAToolkit_ROOT=/usr/local/cuda (or put its nvcc on PATH), "
      "or configure with -DSCALEPOINT_WITH_CUDA=OFF.")
  endif()
  # Compile with the toolkit just found, not another nvcc that happens to come first on PATH.
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER "${CUDAToolkit_NVCC_EXECUTABLE}")
  endif()
  # Before enable_language, which would otherwise fix nvcc's oldest supported architecture.
  # A100 and H100 natively; the PTX of 90 lets newer GPUs JIT-compile the two small kernels.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "GPU architectures for scalepoint-gpu-bench")
  endif()
  enable_language(CUDA)

  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
            PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY nccl HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64)

  add_executable(scalepoint-gpu-bench ${CMAKE_CURRENT_LIST_DIR}/gpu_bench.cu)
  target_include_directories(scalepoint-gpu-bench PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(scalepoint-gpu-bench PRIVATE CUDA::cudart CUDA::cublasLt CLI11::CLI11)
  # C++17, not the project's 20: CMake before 3.26 knows no C++20 flag for nvcc, and the bench and
  # the headers it shares need none. The shared runtime, as CUDA::cudart is: CMake's default static
  # one would put a second copy of the runtime in the executable.
  set_target_properties(scalepoint-gpu-bench PROPERTIES
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_RUNTIME_LIBRARY Shared
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  add_executable(scalepoint-coloc-bench ${CMAKE_CURRENT_LIST_DIR}/coloc_bench.cu)
  target_include_directories(scalepoint-coloc-bench PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(scalepoint-coloc-bench PRIVATE CUDA::cudart CUDA::cublasLt CLI11::CLI11 ${CMAKE_DL_LIBS})
  set_target_properties(scalepoint-coloc-bench PROPERTIES
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_RUNTIME_LIBRARY Shared
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    target_include_directories(scalepoint-gpu-bench PRIVATE ${NCCL_INCLUDE_DIR})
    target_link_libraries(scalepoint-gpu-bench PRIVATE ${NCCL_LIBRARY})
    target_compile_definitions(scalepoint-gpu-bench PRIVATE SCALEPOINT_HAVE_NCCL)
    message(STATUS "scalepoint-gpu-bench: NCCL all-reduce with ${NCCL_LIBRARY}")
  else()
    message(STATUS "scalepoint-gpu-bench: NCCL not found (set NCCL_ROOT); built without all-reduce")
  endif()

  # The project's add_compile_options (-Wall -Wextra -Wpedantic -ffp-contract=off, -Werror) are
  # GCC flags that nvcc rejects. Hand them to the host compiler through -Xcompiler instead, all but
  # -Wpedantic, which fires on the line markers of nvcc's own generated host code.
  foreach(_sp_target scalepoint-gpu-bench scalepoint-coloc-bench)
    get_target_property(_sp_inherited ${_sp_target} COMPILE_OPTIONS)
    if(_sp_inherited)
      set(_sp_options "")
      foreach(_sp_option IN LISTS _sp_inherited)
        if(_sp_option MATCHES "^\\$<")  # already a generator expression: assume it guards itself
          list(APPEND _sp_options "${_sp_option}")
          continue()
        endif()
        list(APPEND _sp_options "$<$<COMPILE_LANGUAGE:CXX,C>:${_sp_option}>")
        if(NOT _sp_option MATCHES "^-Wpedantic$|^-pedantic")
          list(APPEND _sp_options "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_sp_option}>")
        endif()
      endforeach()
      set_property(TARGET ${_sp_target} PROPERTY COMPILE_OPTIONS "${_sp_options}")
    endif()
  endforeach()
endif()
