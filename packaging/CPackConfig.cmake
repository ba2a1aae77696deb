# Debian package of the command-line tools and the console: cpack -G DEB in a build tree.
# Packages are built by the `package` preset (FULCRUM_ARCH empty: the compiler's default x86-64
# target, no -march=native), so they run on any x86-64 machine.
set(CPACK_PACKAGE_NAME "fulcrum")
set(CPACK_PACKAGE_VENDOR "Fulcrum")
set(CPACK_PACKAGE_CONTACT "Fulcrum developers <fulcrum@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dataset-fashion-mnist")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_GENERATOR "DEB")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/resources/scenarios" DESTINATION share/fulcrum)
include(CPack)
