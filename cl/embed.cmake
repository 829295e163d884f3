# Turns a text file into a C header holding its text as one string: the
# OpenCL C files the library carries (no file to find at run time), and
# the tools' help texts (tools/help, printed by --help).
#   cmake -DIN=cl/x.cl -DOUT=x_source.h -DNAME=mlsba__x_cl_source -P embed.cmake
file(READ "${IN}" _text)
string(REPLACE "\\" "\\\\" _text "${_text}")
string(REPLACE "\"" "\\\"" _text "${_text}")
string(REPLACE "\n" "\\n\"\n\"" _text "${_text}")
file(WRITE "${OUT}.tmp"
  "/* Generated from ${IN} by cl/embed.cmake; do not edit. */\n"
  "static const char ${NAME}[] =\n\"${_text}\";\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
