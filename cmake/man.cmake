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
# The configuration the unit passes (-c), and the example prolog and epilog
# it names: with prefix /usr, /etc/cairn/{cairn.conf,prolog,epilog} (a
# package's conffiles). Under another prefix the config names that
# prefix's etc/cairn, and stays relative so that `--prefix` moves it.
set(CAIRN_CONFDIR ${CMAKE_INSTALL_FULL_SYSCONFDIR}/cairn)
set(CAIRN_CONF_DEST ${CAIRN_CONFDIR})
if(NOT IS_ABSOLUTE "${CMAKE_INSTALL_SYSCONFDIR}"
   AND NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(CAIRN_CONF_DEST ${CMAKE_INSTALL_SYSCONFDIR}/cairn)
endif()
file(READ ${CMAKE_SOURCE_DIR}/etc/cairn.conf.example CAIRN_CONF)
string(REPLACE "/etc/cairn/" "${CAIRN_CONFDIR}/" CAIRN_CONF "${CAIRN_CONF}")
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/cairn.conf CONTENT "${CAIRN_CONF}")
install(FILES ${CMAKE_BINARY_DIR}/cairn.conf DESTINATION ${CAIRN_CONF_DEST})
install(PROGRAMS ${CMAKE_SOURCE_DIR}/etc/prolog.example
        DESTINATION ${CAIRN_CONF_DEST} RENAME prolog)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/etc/epilog.example
        DESTINATION ${CAIRN_CONF_DEST} RENAME epilog)
# Flux (package cairn-flux): the modprobe directory that loads the module
# on the ranks > 0, and the flux.service drop-in that names it.
if(CAIRN_FLUX)
  set(CAIRN_MODULE_PATH
      ${CMAKE_INSTALL_FULL_LIBEXECDIR}/cairn/cairn-exec.so)
  set(CAIRN_FLUX_MODPROBE_DIR ${CAIRN_CONFDIR}/flux)
  configure_file(${CMAKE_SOURCE_DIR}/etc/flux/modprobe.d/cairn.toml
                 ${CMAKE_BINARY_DIR}/flux/modprobe.d/cairn.toml @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/flux/modprobe.d/cairn.toml
          DESTINATION ${CAIRN_CONF_DEST}/flux/modprobe.d)
  install(FILES ${CMAKE_SOURCE_DIR}/etc/flux/rc1.d/cairn.py
          DESTINATION ${CAIRN_CONF_DEST}/flux/rc1.d)
  configure_file(${CMAKE_SOURCE_DIR}/etc/flux.service.d/cairn.conf
                 ${CMAKE_BINARY_DIR}/flux.service.d/cairn.conf @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/flux.service.d/cairn.conf
          DESTINATION ${CAIRN_SYSTEMD_UNITDIR}/flux.service.d)
endif()
install(PROGRAMS ${CMAKE_SOURCE_DIR}/etc/prolog.example
        ${CMAKE_SOURCE_DIR}/etc/epilog.example
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
