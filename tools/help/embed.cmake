# A tool's help text (tools/help/<tool>.txt) as a C string, printed by
# --help; man.cmake makes its man page from the same file, so the two
# cannot drift.
#   cmake -DIN=tools/help/x.txt -DOUT=x_help.h -DNAME=x_help -P embed.cmake
file(READ "${IN}" _text)
string(REPLACE "\\" "\\\\" _text "${_text}")
string(REPLACE "\"" "\\\"" _text "${_text}")
string(REPLACE "\n" "\\n\"\n\"" _text "${_text}")
file(WRITE "${OUT}.tmp"
  "/* Generated from ${IN} by tools/help/embed.cmake; do not edit. */\n"
  "static const char ${NAME}[] =\n\"${_text}\";\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
