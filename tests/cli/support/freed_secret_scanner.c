/* An LD_PRELOAD shim for tests/cli/test_trust.py: before each free(), looks
 * for the bytes of $WARPCRYPT_SCAN_SECRET in the block and reports a hit on
 * stderr. A secret found in a freed block is a copy nobody wiped: the heap
 * hands that memory to the next allocation as it is. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void free(void *block) {
  static void (*next_free)(void *);
  if (next_free == NULL) next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
  const char *secret = getenv("WARPCRYPT_SCAN_SECRET");
  if (block != NULL && secret != NULL && secret[0] != '\0') {
    const size_t secret_len = strlen(secret);
    const size_t block_len = malloc_usable_size(block);
    if (block_len >= secret_len && memmem(block, block_len, secret, secret_len) != NULL) {
      static const char kReport[] = "freed-secret-scanner: a freed block held the secret\n";
      (void)!write(STDERR_FILENO, kReport, sizeof kReport - 1);
    }
  }
  next_free(block);
}
