# Debian package of the programs, the console, fulcrumd's systemd units and their
# configuration: cpack -G DEB in a build tree. Released packages are built by the `package`
# preset (FULCRUM_ARCH empty: the compiler's default x86-64 target, no -march=native), so
# they run on any x86-64 machine. tests/packaging/package_test.sh builds one, checks it with
# lintian and systemd-analyze, installs it and runs every program's --version.
set(CPACK_PACKAGE_NAME "fulcrum")
set(CPACK_PACKAGE_VENDOR "Fulcrum")
set(CPACK_PACKAGE_CONTACT "Fulcrum developers <fulcrum@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "cluster console and trainer for distributed ML on shared clusters")
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Fulcrum trains models with parameter servers and workers on heterogeneous\n"
    "or shared machines, balancing the workers' batch sizes at every barrier\n"
    "(LB-BSP) so that stragglers stop wasting the others' time. fulcrumd runs\n"
    "and records the jobs and serves them to the Qt console, to fulcrumctl and\n"
    "to Prometheus.")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# python3: fulcrum_torch is a Python module of the package (lintian asks for the dependency).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, python3")
# fulcrum_torch (in /usr/lib/python3/dist-packages, and as a wheel in /usr/share/fulcrum/python)
# runs PyTorch jobs under fulcrumd: it needs torch and websockets, which Debian packages.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dataset-fashion-mnist, python3-torch, python3-websockets")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_GENERATOR "DEB")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${CMAKE_CURRENT_LIST_DIR}/debian/postinst" "${CMAKE_CURRENT_LIST_DIR}/debian/prerm"
    "${CMAKE_CURRENT_LIST_DIR}/debian/postrm" "${CMAKE_CURRENT_LIST_DIR}/debian/conffiles")
# Files under /etc and /lib are installed there whatever the prefix.
set(CPACK_WARN_ON_ABSOLUTE_INSTALL_DESTINATION OFF)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/resources/scenarios" DESTINATION share/fulcrum)
install(FILES "${CMAKE_CURRENT_LIST_DIR}/grafana/fulcrum-dashboard.json" DESTINATION share/fulcrum/grafana)
install(PROGRAMS "${CMAKE_CURRENT_LIST_DIR}/slurm/fulcrum-workers.sbatch" DESTINATION share/fulcrum/slurm)
install(FILES "${CMAKE_CURRENT_LIST_DIR}/systemd/fulcrumd.service" "${CMAKE_CURRENT_LIST_DIR}/systemd/fulcrum-worker@.service"
        "${CMAKE_CURRENT_LIST_DIR}/systemd/fulcrum-worker-pool.service" DESTINATION /lib/systemd/system)
install(FILES "${CMAKE_CURRENT_LIST_DIR}/fulcrumd.json" "${CMAKE_CURRENT_LIST_DIR}/fulcrum-worker.env" DESTINATION /etc/fulcrum)
install(FILES "${CMAKE_CURRENT_LIST_DIR}/desktop/fulcrum.desktop" DESTINATION share/applications)
install(FILES "${CMAKE_CURRENT_LIST_DIR}/desktop/fulcrum.svg" DESTINATION share/icons/hicolor/scalable/apps)
install(FILES "${PROJECT_SOURCE_DIR}/README.md" "${CMAKE_CURRENT_LIST_DIR}/debian/copyright" DESTINATION share/doc/fulcrum)
execute_process(COMMAND gzip -9n -c "${CMAKE_CURRENT_LIST_DIR}/debian/changelog"
                OUTPUT_FILE "${PROJECT_BINARY_DIR}/changelog.gz")
install(FILES "${PROJECT_BINARY_DIR}/changelog.gz" DESTINATION share/doc/fulcrum)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/debian/changelog")

# Manual pages from each program's --help and --version (help2man), where help2man is found.
find_program(FULCRUM_HELP2MAN help2man)
if(FULCRUM_HELP2MAN)
  set(programs fulcrumd "the Fulcrum daemon: training jobs, their records and live streams"
               fulcrum-worker "a remote worker of a fulcrumd job"
               fulcrumctl "fulcrumd from a terminal: jobs, commands, live workers, CSV export"
               fulcrum-run "run a training scenario and record it"
               fulcrum-sim "simulate multi-job GPU cluster scheduling"
               fulcrum-experiment "reproduce the papers' experiments")
  if(FULCRUM_BUILD_UI)
    list(APPEND programs fulcrum "the Fulcrum console")
  endif()
  set(pages)
  while(programs)
    list(POP_FRONT programs program description)
    set(page "${PROJECT_BINARY_DIR}/man/${program}.1.gz")
    add_custom_command(OUTPUT "${page}"
      COMMAND ${CMAKE_COMMAND} -E make_directory "${PROJECT_BINARY_DIR}/man"
      COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen
              "${FULCRUM_HELP2MAN}" --no-info --no-discard-stderr --section=1 --name=${description}
              --output=${PROJECT_BINARY_DIR}/man/${program}.1 $<TARGET_FILE:${program}>
      COMMAND gzip -9nf "${PROJECT_BINARY_DIR}/man/${program}.1"
      DEPENDS ${program}
      COMMENT "Manual page of ${program}"
      VERBATIM)
    list(APPEND pages "${page}")
  endwhile()
  add_custom_target(man-pages ALL DEPENDS ${pages})
  install(FILES ${pages} DESTINATION share/man/man1)
endif()
include(CPack)
