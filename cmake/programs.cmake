# The programs. src/cli holds the front ends (cairnd's small main() and the
# cairn client); cairn-shim and cairn-crashtest have a folder each. Each is
# added once its main file exists.
set(CLI ${CMAKE_SOURCE_DIR}/src/cli)
set(SHIM ${CMAKE_SOURCE_DIR}/src/shim)
set(CRASHTEST ${CMAKE_SOURCE_DIR}/src/crashtest)

# cairn-shim links nothing but libc (and the libc-only crash points): it
# supervises every process, and is cairnd's spawner (shim/shim.h).
if(EXISTS ${SHIM}/cairn-shim.c)
  add_executable(cairn-shim ${SHIM}/main.c ${SHIM}/cairn-shim.c ${SHIM}/cmd.c ${SHIM}/serve.c ${SHIM}/keep.c ${SHIM}/drop.c
                 ${SHIM}/serve_out.c ${SHIM}/session.c ${SHIM}/outpipe.c ${CMAKE_SOURCE_DIR}/src/util/hashmap.c
                 ${CMAKE_SOURCE_DIR}/src/journal/crashpoint.c)
  # Static: no dynamic loader work on each of the many shim starts (measured
  # 1.7x the cost of a bare spawn, against 2.2x dynamic). Sanitizer runtimes
  # need dynamic linking.
  if(NOT SANITIZE)
    target_link_options(cairn-shim PRIVATE -static)
  endif()
  install(TARGETS cairn-shim DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cairn)
endif()

if(TARGET cairn_exec AND EXISTS ${CLI}/cairnd.c)
  add_executable(cairnd ${CLI}/cairnd.c)
  target_link_libraries(cairnd PRIVATE cairn_exec)
  install(TARGETS cairnd DESTINATION ${CMAKE_INSTALL_SBINDIR})
endif()

# cairn: the entry (cairn.c), what its subcommands share (cli.c,
# jobwatch.c) and the subcommands, one cmd_*.c each (and their parts).
file(GLOB CAIRN_CMD_SRC CONFIGURE_DEPENDS ${CLI}/cmd_*.c)
if(TARGET cairn_exec AND EXISTS ${CLI}/cairn.c)
  add_executable(cairn ${CLI}/cairn.c ${CLI}/cli.c ${CLI}/jobwatch.c ${CAIRN_CMD_SRC})
  target_link_libraries(cairn PRIVATE cairn_exec)
  install(TARGETS cairn DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

file(GLOB CRASHTEST_SRC CONFIGURE_DEPENDS ${CRASHTEST}/*.c)
if(TARGET cairn_exec AND CRASHTEST_SRC)
  add_executable(cairn-crashtest ${CRASHTEST_SRC})
  target_link_libraries(cairn-crashtest PRIVATE cairn_exec)
  # A test harness, not a user's command: out of PATH (package cairn-tests),
  # with its scenarios.
  install(TARGETS cairn-crashtest
          DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cairn COMPONENT tests)
  file(GLOB CRASH_SCENARIOS ${CMAKE_SOURCE_DIR}/test/crash/*.json)
  install(FILES ${CRASH_SCENARIOS}
          DESTINATION ${CMAKE_INSTALL_DATADIR}/cairn/crash COMPONENT tests)
endif()
