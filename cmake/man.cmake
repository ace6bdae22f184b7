# man.cmake - install the man pages, the systemd unit and the example
# configuration. Include it from the top CMakeLists.txt.
include(GNUInstallDirs)

file(GLOB CAIRN_MAN_PAGES CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/man/*.[1-8])
foreach(page ${CAIRN_MAN_PAGES})
  string(REGEX MATCH "[1-8]$" section ${page})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()

# Relative paths are under the install prefix: with the default prefix
# /usr/local the unit lands in /usr/local/lib/systemd/system, which systemd
# reads; distributions set this to their own unit directory.
set(CAIRN_SYSTEMD_UNITDIR "lib/systemd/system" CACHE STRING
    "Where cmake --install puts cairnd.service")
configure_file(${CMAKE_SOURCE_DIR}/etc/cairnd.service
               ${CMAKE_BINARY_DIR}/cairnd.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cairnd.service
        DESTINATION ${CAIRN_SYSTEMD_UNITDIR})
install(FILES ${CMAKE_SOURCE_DIR}/etc/cairn.conf.example
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(PROGRAMS ${CMAKE_SOURCE_DIR}/etc/prolog.example
        ${CMAKE_SOURCE_DIR}/etc/epilog.example
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
