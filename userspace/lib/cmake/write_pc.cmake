# write_pc.cmake - fills vaccel.pc.in in while installing (included by the
# install rule in userspace/lib/CMakeLists.txt, which sets VACCEL_PC_*).
#
# CMAKE_INSTALL_PREFIX is here the prefix of this installation, which
# `cmake --install --prefix` may set apart from the configured one. A
# relative library or include directory is written under ${prefix}, an
# absolute one as it is.
set(VACCEL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${VACCEL_PC_${kind}}")
    set(VACCEL_PC_FULL_${kind} "${VACCEL_PC_${kind}}")
  else()
    set(VACCEL_PC_FULL_${kind} "\${prefix}/${VACCEL_PC_${kind}}")
  endif()
endforeach()
configure_file("${VACCEL_PC_TEMPLATE}" "${VACCEL_PC_OUTPUT}" @ONLY)
