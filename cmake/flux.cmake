# The Flux broker module cairn-exec.so, built when flux-core is installed
# (scripts/install-flux puts it under /opt/flux-core). Not in sanitizer
# builds: an instrumented module cannot be loaded into a plain broker.
set(CAIRN_FLUX_PREFIX "/opt/flux-core" CACHE PATH
    "Where flux-core is installed (for the Flux module and its tests)")
set(ENV{PKG_CONFIG_PATH}
    "${CAIRN_FLUX_PREFIX}/lib/pkgconfig:$ENV{PKG_CONFIG_PATH}")
pkg_check_modules(FLUX IMPORTED_TARGET flux-core)
pkg_check_modules(FLUX_IDSET IMPORTED_TARGET flux-idset)

if(FLUX_FOUND AND FLUX_IDSET_FOUND AND NOT SANITIZE)
  message(STATUS "flux-core ${FLUX_VERSION} found: building cairn-exec.so")
  set(CAIRN_FLUX ON)
  set(CAIRN_FLUX_BIN "${CAIRN_FLUX_PREFIX}/bin/flux")
  # The module carries its own copy of cairn_core, so that library is
  # position independent.
  set_property(TARGET cairn_core PROPERTY POSITION_INDEPENDENT_CODE ON)
  file(GLOB FLUX_SRC CONFIGURE_DEPENDS src/flux/*.c)
  add_library(cairn-exec MODULE ${FLUX_SRC} src/util/statedir.c
              src/util/hashmap.c)
  set_target_properties(cairn-exec PROPERTIES PREFIX ""
                        C_VISIBILITY_PRESET hidden)
  target_link_libraries(cairn-exec PRIVATE cairn_core PkgConfig::FLUX
                        PkgConfig::JANSSON PkgConfig::UUID)
  # The broker has its own idset_* (libflux-idset): bind our copies of
  # cairn_core's functions to themselves, and export only mod_main.
  target_link_options(cairn-exec PRIVATE -Wl,-Bsymbolic
                      -Wl,--exclude-libs,ALL -Wl,--no-undefined)
  # One directory for cairn's internal programs and its module, the path
  # README and cairn-exec(8) give: /usr/libexec/cairn with prefix /usr.
  install(TARGETS cairn-exec DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cairn)
  # Flux's housekeeping command for cairn's partial release. Only the
  # client's sources, not cairn_core: libflux-idset has its own idset_*.
  add_executable(cairn-flux-housekeeping
    src/flux-housekeeping/cairn-flux-housekeeping.c src/client/client.c
    src/util/statedir.c src/core/error.c)
  target_link_libraries(cairn-flux-housekeeping PRIVATE PkgConfig::FLUX
                        PkgConfig::FLUX_IDSET PkgConfig::JANSSON m)
  # Flux's housekeeping runs it with no LD_LIBRARY_PATH: keep the path of
  # a flux-core outside the loader's directories (/opt/flux-core/lib).
  set_target_properties(cairn-flux-housekeeping PROPERTIES
                        INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS cairn-flux-housekeeping
          DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cairn)
elseif(SANITIZE)
  set(CAIRN_FLUX OFF)
  message(STATUS "sanitizer build: the Flux module is not built")
else()
  set(CAIRN_FLUX OFF)
  message(STATUS "flux-core not found under ${CAIRN_FLUX_PREFIX} (run "
                 "scripts/install-flux): the Flux module and its tests are "
                 "not built")
endif()

# The fluxsuite run's job-exec.so (test/fluxsuite/suite_exec.c): a cairnd
# per instance, then cairn-exec.so. Test code; never installed.
if(CAIRN_FLUX)
  add_library(fluxsuite-job-exec MODULE test/fluxsuite/suite_exec.c)
  set_target_properties(fluxsuite-job-exec PROPERTIES PREFIX ""
    OUTPUT_NAME job-exec
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fluxsuite/modules)
  target_link_libraries(fluxsuite-job-exec PRIVATE PkgConfig::FLUX dl)
endif()
