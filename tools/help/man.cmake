# A tool's man page (roff, section 1) from its help text, the file that
# --help prints (embedded by cl/embed.cmake):
#   line 1           "tool - what it does"            -> NAME
#   "usage: ..."     and its indented continuation   -> SYNOPSIS
#   paragraphs       up to the first heading          -> DESCRIPTION
#   "Heading:"       a line of its own                -> a section
#   "  -x, --opt V   text" and indented continuations -> a tagged paragraph
#   "  value         text" (a lower-case word, two spaces) -> the same
#   other lines      text; a blank line ends a paragraph
#   "PREFIX/share/doc/mlsba", "PREFIX/share/..." -> DOCDIR, DATADIR/...
#   cmake -DIN=x.txt -DOUT=x.1 -DTOOL=x -DVERSION=1.2.3
#         -DDOCDIR=/usr/local/share/doc/mlsba -DDATADIR=/usr/local/share
#         -P man.cmake
file(READ "${IN}" _text)
# --help cannot know where it was installed from; the man page, written
# for one install, names the real folders (DOCDIR first: it may not be
# under DATADIR).
if(DEFINED DOCDIR AND DEFINED DATADIR)
  string(REPLACE "PREFIX/share/doc/mlsba" "${DOCDIR}" _text "${_text}")
  string(REPLACE "PREFIX/share/" "${DATADIR}/" _text "${_text}")
endif()
# List-safe: ';' and brackets would split or join CMake list items.
string(REPLACE ";" "<SEMI>" _text "${_text}")
string(REPLACE "[" "<LB>" _text "${_text}")
string(REPLACE "]" "<RB>" _text "${_text}")
string(REPLACE "\\" "\\e" _text "${_text}")
string(REPLACE "-" "\\-" _text "${_text}")
string(REPLACE "\n" ";" _lines "${_text}")

string(TOUPPER "${TOOL}" _upper)
get_filename_component(_in_name "${IN}" NAME)
set(_out ".\\\" Generated from tools/help/${_in_name} by tools/help/man.cmake; do not edit.\n")
string(APPEND _out ".TH ${_upper} 1 \"\" \"libmlsba ${VERSION}\" \"User Commands\"\n")
set(_state start)   # start, synopsis, text, option
set(_first TRUE)
foreach(_line IN LISTS _lines)
  if(_first)
    string(REGEX REPLACE "^([^ ]+) \\\\- " "\\1 \\\\- " _name "${_line}")
    string(APPEND _out ".SH NAME\n${_name}\n")
    set(_first FALSE)
    continue()
  endif()
  if(_line MATCHES "^usage: (.*)$")
    string(APPEND _out ".SH SYNOPSIS\n.nf\n${CMAKE_MATCH_1}\n")
    set(_state synopsis)
  elseif(_state STREQUAL "synopsis" AND _line MATCHES "^ +(.*)$")
    string(APPEND _out "    ${CMAKE_MATCH_1}\n")
  elseif(_line STREQUAL "")
    if(_state STREQUAL "synopsis")
      string(APPEND _out ".fi\n")
      set(_state after_synopsis)
    elseif(_state STREQUAL "text" OR _state STREQUAL "option")
      set(_state para)
    endif()
  elseif(_line MATCHES "^([A-Z][A-Za-z ]*):$")
    string(TOUPPER "${CMAKE_MATCH_1}" _h)
    string(APPEND _out ".SH ${_h}\n")
    set(_state heading)
  elseif(_line MATCHES "^  (\\\\-[^ ]*( [^ ]+)*)  +(.*)$")
    string(APPEND _out ".TP\n.B ${CMAKE_MATCH_1}\n${CMAKE_MATCH_3}\n")
    set(_state option)
  elseif(_line MATCHES "^  (MLSBA_[A-Z_]+( [^ ]+)?)  +(.*)$")
    # An environment variable and its value, as an option.
    string(APPEND _out ".TP\n.B ${CMAKE_MATCH_1}\n${CMAKE_MATCH_3}\n")
    set(_state option)
  elseif(_line MATCHES "^  (MLSBA_[A-Z_]+( [^ ]+)?)$")
    string(APPEND _out ".TP\n.B ${CMAKE_MATCH_1}\n")
    set(_state option)
  elseif(_line MATCHES "^  ([a-z][a-z0-9+\\\\-]*)  +(.*)$")
    # A value and what it means (the Algorithms of mlsba-bench: "-" is
    # "\\-" by now), as an option.
    string(APPEND _out ".TP\n.B ${CMAKE_MATCH_1}\n${CMAKE_MATCH_2}\n")
    set(_state option)
  elseif(_line MATCHES "^  (\\\\-.*)$")
    string(APPEND _out ".TP\n.B ${CMAKE_MATCH_1}\n")
    set(_state option)
  else()
    string(REGEX REPLACE "^ +" "" _body "${_line}")
    if(_body MATCHES "^[.']")
      set(_body "\\&${_body}")
    endif()
    if(_state STREQUAL "after_synopsis")
      string(APPEND _out ".SH DESCRIPTION\n")
    elseif(_state STREQUAL "para" OR _state STREQUAL "heading")
      string(APPEND _out ".PP\n")
    endif()
    if(NOT _state STREQUAL "option")
      set(_state text)
    endif()
    string(APPEND _out "${_body}\n")
  endif()
endforeach()
string(REPLACE "<SEMI>" ";" _out "${_out}")
string(REPLACE "<LB>" "[" _out "${_out}")
string(REPLACE "<RB>" "]" _out "${_out}")
file(WRITE "${OUT}.tmp" "${_out}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
