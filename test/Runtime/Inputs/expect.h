/*===- expect.h - EXPECT for the runtime's C test programs --------*- C -*-===*\
|*                                                                            *|
|* EXPECT(condition) exits the program with status 1, naming the condition,  *|
|* when it is false: the check of a result the test's output does not show.  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MTE_TEST_RUNTIME_EXPECT_H
#define MTE_TEST_RUNTIME_EXPECT_H

#include <stdio.h>
#include <stdlib.h>

#define EXPECT(condition)                                                      \
  do {                                                                         \
    if (!(condition)) {                                                        \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #condition); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#endif /* MTE_TEST_RUNTIME_EXPECT_H */
