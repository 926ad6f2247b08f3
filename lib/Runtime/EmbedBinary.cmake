# Writes the bytes of INPUT as a C array SYMBOL to OUTPUT (cmake -P).
file(READ ${INPUT} bytes HEX)
string(LENGTH "${bytes}" length)
math(EXPR size "${length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${bytes}")
file(WRITE ${OUTPUT}
  "/* Generated from ${INPUT}; do not edit. */\n"
  "__attribute__((visibility(\"hidden\"), aligned(16)))\n"
  "const unsigned char ${SYMBOL}[${size}] = {${bytes}};\n")
