/* A downstream C program: proves the installed header and libraries work
 * through find_package(warpcrypt) and pkg-config. Encrypts with the library
 * and prints the ciphertext in hex, for comparison with `openssl enc`. */
#include <stdio.h>
#include <string.h>
#include <warpcrypt/warpcrypt.h>

int main(void) {
  const wc_cipher *cipher = wc_cipher_by_name("aes-128-ctr");
  const uint8_t key[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                           0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
  const uint8_t iv[16] = {0};
  const char *message = "installed and linked";
  uint8_t out[64];
  size_t written = 0;
  wc_status status = wc_encrypt(NULL, cipher, out, sizeof out, &written, key, sizeof key, iv,
                                sizeof iv, (const uint8_t *)message, strlen(message));
  if (status != WC_OK) {
    fprintf(stderr, "consumer: %s\n", wc_status_string(status));
    return 1;
  }
  for (size_t i = 0; i < written; ++i) printf("%02x", out[i]);
  printf("\n");
  return 0;
}
