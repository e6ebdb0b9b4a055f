/*
 * Prints riverlet_version(), the version of the library the program loaded (or linked in);
 * c-api/tests/sdk.sh compares it with packaging/version.sh.
 */
#include <stdio.h>

#include <riverlet.h>

int main(void) {
  const char *v = riverlet_version();
  if (v == NULL) {
    fprintf(stderr, "riverlet_version() returned NULL\n");
    return 1;
  }
  printf("%s\n", v);
  return 0;
}
