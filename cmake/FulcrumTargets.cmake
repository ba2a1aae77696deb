# Helpers shared by every target: warnings, architecture flags, libraries and tests.

function(fulcrum_apply_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                                           $<$<BOOL:${FULCRUM_WERROR}>:-Werror>
                                           # GCC 12 reports a bogus -Wrestrict on `"literal" + std::string` at -O3 (GCC bug 105329).
                                           $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
endfunction()

# fulcrum_add_library(NAME SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# Creates fulcrum_NAME with the alias fulcrum::NAME; headers are included as "NAME/header.h"
# relative to the parent directory of the module folder.
function(fulcrum_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(fulcrum_${name} STATIC ${ARG_SOURCES})
  add_library(fulcrum::${name} ALIAS fulcrum_${name})
  target_compile_features(fulcrum_${name} PUBLIC cxx_std_20)
  get_filename_component(include_root "${CMAKE_CURRENT_SOURCE_DIR}/.." ABSOLUTE)
  target_include_directories(fulcrum_${name} PUBLIC "${include_root}")
  target_link_libraries(fulcrum_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  fulcrum_apply_warnings(fulcrum_${name})
endfunction()

# add_fulcrum_test(NAME SOURCES ... LIBS ... [LABELS ...] [TIMEOUT s])
function(add_fulcrum_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  fulcrum_apply_warnings(${name})
  target_compile_definitions(${name} PRIVATE FULCRUM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  include(GoogleTest)
  set(properties)
  if(ARG_LABELS)
    list(APPEND properties LABELS "${ARG_LABELS}")
  endif()
  if(ARG_TIMEOUT)
    list(APPEND properties TIMEOUT "${ARG_TIMEOUT}")
  endif()
  if(properties)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ${properties})
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
