# Hot kernels compiled for several instruction sets in one binary, chosen at run time
# (isa/level.h, isa/kernels.h, docs/build.md §1).
#
# fastk_add_kernels(LIBRARY SOURCES file... ENTRIES name...) compiles SOURCES once more for each
# level of FASTK_KERNEL_LEVELS (-march=LEVEL, FASTK_KERNEL_LEVEL=x86_64_v3 ...), links each
# level's objects into one relocatable object (ld -r, COMDAT groups dissolved), and makes every
# symbol of it local but the entry points fastk_kernel_<name>_<level>. That object joins
# LIBRARY. So the one-definition rule cannot bite: an inline function or template instantiated
# in a kernel (Eigen's, the standard library's, ours) is that object's private copy, and the
# linker never picks it for the baseline code, which keeps its own. The sources are also
# compiled into LIBRARY itself, where FASTK_KERNEL_LEVEL is base (isa/kernels.h). check_kernel_object.sh fails the
# build if the object exports anything else or has code that runs at start-up or exit.
set(FASTK_KERNELS "x86-64-v3;x86-64-v4" CACHE STRING
    "Instruction-set levels the hot kernels are also compiled for, chosen at run time (those above FASTK_MARCH)")

# A level's rank; -1 for what is no x86-64 level (native, a CPU name).
function(fastk_level_rank level out)
  set(rank -1)
  if(level STREQUAL "" OR level STREQUAL "x86-64")
    set(rank 0)
  elseif(level MATCHES "^x86-64-v([234])$")
    math(EXPR rank "${CMAKE_MATCH_1} - 1")
  endif()
  set(${out} ${rank} PARENT_SCOPE)
endfunction()

set(FASTK_KERNEL_LEVELS "")
fastk_level_rank("${FASTK_MARCH}" _fastk_base_rank)
if(_fastk_base_rank LESS 0)
  message(STATUS "fastk: FASTK_MARCH=${FASTK_MARCH} is no x86-64 level: no kernels per level")
elseif(FASTK_SANITIZE)
  # Sanitizers register each object from a constructor: a kernel object would run code of its
  # level at start-up.
  message(STATUS "fastk: sanitizers on: no kernels per level")
elseif(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  message(STATUS "fastk: not x86-64: no kernels per level")
else()
  foreach(level IN LISTS FASTK_KERNELS)
    fastk_level_rank("${level}" _rank)
    # isa/kernels.h picks among x86-64-v3 and -v4 kernels only (v2 adds nothing Eigen uses).
    if(NOT level MATCHES "^x86-64-v[34]$")
      message(FATAL_ERROR "FASTK_KERNELS: ${level} is not x86-64-v3 or x86-64-v4")
    endif()
    if(_rank GREATER _fastk_base_rank)
      list(APPEND FASTK_KERNEL_LEVELS ${level})
      string(MAKE_C_IDENTIFIER "${level}" _id)
      target_compile_definitions(fastk_common_flags INTERFACE FASTK_KERNELS_${_id})
    endif()
  endforeach()
  message(STATUS "fastk: kernels for ${FASTK_KERNEL_LEVELS} beside -march=${FASTK_MARCH}")
endif()

find_program(FASTK_NM nm REQUIRED)
find_program(FASTK_READELF readelf REQUIRED)
find_program(FASTK_OBJCOPY objcopy REQUIRED)
find_program(FASTK_LD ld REQUIRED)

function(fastk_add_kernels library)
  cmake_parse_arguments(ARG "" "" "SOURCES;ENTRIES" ${ARGN})
  foreach(level IN LISTS FASTK_KERNEL_LEVELS)
    string(MAKE_C_IDENTIFIER "${level}" id)
    set(objects ${library}_kernels_${id})
    add_library(${objects} OBJECT ${ARG_SOURCES})
    target_include_directories(${objects} PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${objects} PRIVATE Eigen3::Eigen fastk_common_flags)
    target_compile_options(${objects} PRIVATE -march=${level})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # Function-local statics of inline functions (Eigen's cache sizes) are otherwise "unique"
      # symbols, which objcopy cannot make local: weak ones, it can.
      target_compile_options(${objects} PRIVATE -fno-gnu-unique)
    endif()
    target_compile_definitions(${objects} PRIVATE FASTK_KERNEL_LEVEL=${id})
    set(linked ${CMAKE_CURRENT_BINARY_DIR}/${objects}.o)
    set(keep "")
    set(entries "")
    foreach(entry IN LISTS ARG_ENTRIES)
      list(APPEND keep --keep-global-symbol=fastk_kernel_${entry}_${id})
      list(APPEND entries fastk_kernel_${entry}_${id})
    endforeach()
    add_custom_command(
      OUTPUT ${linked}
      COMMAND ${FASTK_LD} -r --force-group-allocation -o ${linked}.all $<TARGET_OBJECTS:${objects}>
      COMMAND ${FASTK_OBJCOPY} ${keep} ${linked}.all ${linked}
      COMMAND ${CMAKE_COMMAND} -E remove ${linked}.all
      COMMAND ${PROJECT_SOURCE_DIR}/cmake/check_kernel_object.sh ${FASTK_NM} ${FASTK_READELF}
              ${linked} ${entries}
      DEPENDS $<TARGET_OBJECTS:${objects}> ${PROJECT_SOURCE_DIR}/cmake/check_kernel_object.sh
      COMMENT "Making the ${level} kernels of ${library} private but their entry points"
      COMMAND_EXPAND_LISTS VERBATIM)
    set_source_files_properties(${linked} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    target_sources(${library} PRIVATE ${linked})
  endforeach()
endfunction()
