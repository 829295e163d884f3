# The section 3 pages to install, from Doxygen's (DOXY_MAN, its man3):
#   a page per public header, named so that it cannot clash with another
#   package's (mlsba.h.3, mlsba_mpi.h.3 for <mlsba/mpi.h>, ...);
#   a page per public struct (mlsba_balance_opts.3), as Doxygen wrote it;
#   a page per function (mlsba_balance.3): ".so" of its header's page, so
#   that man 3 mlsba_balance opens the header's reference there.
#   cmake -DDOXY_MAN=dir -DOUT=dir -DHEADERS="a.h;b.h" -P manpages.cmake
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
file(GLOB _structs "${DOXY_MAN}/mlsba_*.3")
foreach(_s IN LISTS _structs)
  file(COPY "${_s}" DESTINATION "${OUT}")
endforeach()
foreach(_h IN LISTS HEADERS)
  get_filename_component(_name "${_h}" NAME)
  get_filename_component(_dir "${_h}" DIRECTORY)
  set(_page "${_name}")
  if(_dir MATCHES "/mlsba$")
    set(_page "mlsba_${_name}")
  endif()
  if(NOT EXISTS "${DOXY_MAN}/${_name}.3")
    message(FATAL_ERROR "Doxygen wrote no page for ${_name}")
  endif()
  file(READ "${DOXY_MAN}/${_name}.3" _text)
  string(REPLACE ".TH \"${_name}\"" ".TH \"${_page}\"" _text "${_text}")
  file(WRITE "${OUT}/${_page}.3" "${_text}")
  # Every exported function of the header: MLSBA_EXTERN, its type, then
  # its name before the parenthesis.
  file(READ "${_h}" _src)
  string(REGEX MATCHALL "MLSBA_EXTERN[^;(]*\\(" _decls "${_src}")
  foreach(_d IN LISTS _decls)
    if(_d MATCHES "(mlsba_[a-z0-9_]+)[ \t\n]*\\($")
      file(WRITE "${OUT}/${CMAKE_MATCH_1}.3" ".so man3/${_page}.3\n")
    endif()
  endforeach()
endforeach()
