/* warpcrypt: age v1 files (age-encryption.org/v1, C2SP's age.md). */
#ifndef WARPCRYPT_AGE_H
#define WARPCRYPT_AGE_H

#include "warpcrypt/job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* age files (docs/age.md)                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Files that `age` and `rage` read and write, byte for byte: a textual
 * header with one stanza per recipient and a MAC, then the payload in 64 KiB
 * ChaCha20-Poly1305 chunks, which run on the streaming engine (every lane of
 * `options->backend`, regular files read and written at many offsets at
 * once). Recipient types: X25519 keys ("age1...", "AGE-SECRET-KEY-1..."),
 * age 1.3's post-quantum hybrid keys ("age1pq1...", "AGE-SECRET-KEY-PQ-1..."),
 * scrypt passphrases, SSH keys as age has them ("ssh-ed25519 ..." and
 * "ssh-rsa ..." public keys in authorized_keys lines, OpenSSH and PEM
 * private key files, passphrase-protected or not) and plugins (below). SSH keys of the
 * types age does not use are refused with WC_ERR_UNSUPPORTED and a sentence
 * in *detail, never skipped.
 *
 * Everything age's specification asks of a reader is checked; a file that
 * breaks a rule is WC_ERR_FORMAT with job->detail naming it, a header whose
 * MAC does not match WC_ERR_AUTH, a chunk that does not authenticate
 * WC_ERR_AUTH with job->failed_chunk, and a file no identity opens
 * WC_ERR_NO_IDENTITY. No plaintext of a chunk that did not authenticate is
 * written.
 *
 * `detail` arguments may be NULL; where given they receive a static,
 * secret-free sentence on failure.
 */

/* A set of recipients a file is encrypted to. Passphrases are wiped when
 * freed. */
typedef struct wc_age_recipients wc_age_recipients;
/* A set of identities that may open a file: X25519 and hybrid secret
 * keys, SSH private keys, plugin identities and passphrases, wiped when
 * freed. */
typedef struct wc_age_identities wc_age_identities;

/* age's scrypt work factors (log2 of N): what encrypting uses by default,
 * the most decrypting accepts unless told otherwise (a header's factor is
 * not authenticated until scrypt has run, so a forged one must not buy
 * minutes of CPU and gigabytes of memory), and the most either may name. */
#define WC_AGE_DEFAULT_WORK_FACTOR 18u
#define WC_AGE_DEFAULT_MAX_WORK_FACTOR 22u
#define WC_AGE_MAX_WORK_FACTOR 30u
/* The longest key string the format calls write, with its NUL (an ssh-rsa
 * public key of 16384 bits, the longest, takes 2773). */
#define WC_AGE_KEY_MAX_LEN 4096u

/* age plugins (docs/age.md, "Plugins"): a recipient "age1NAME1..." or an
 * identity "AGE-PLUGIN-NAME-1..." runs the program age-plugin-NAME found on
 * PATH, which wraps or unwraps the file key over age's plugin protocol. A
 * plugin may want to talk to the user; these functions, given to a set of
 * recipients or identities, let it. Each returns 0 when done; a NULL member,
 * or one that returns nonzero, answers the plugin's request "fail", which
 * most plugins take as the end of the operation. `plugin` is the plugin's
 * name; the strings come from the plugin, NUL-terminated, and are untrusted
 * text a caller displays as such. */
typedef struct wc_age_plugin_ui {
  void *context;
  /* Shows `message`. */
  int (*display_message)(void *context, const char *plugin, const char *message);
  /* Asks for a value after `prompt`, typed without echo where `secret` is
   * nonzero, into `value` (`value_cap` bytes, not NUL-terminated; the
   * library wipes it) and its length into *value_len. */
  int (*request_value)(void *context, const char *plugin, const char *prompt, int secret, char *value,
                       size_t value_cap, size_t *value_len);
  /* Asks `prompt`, to be answered `yes` or, where `no` is not NULL, `no`;
   * *chose_yes receives 1 for yes. */
  int (*confirm)(void *context, const char *plugin, const char *prompt, const char *yes, const char *no,
                 int *chose_yes);
} wc_age_plugin_ui;

WC_API wc_status wc_age_recipients_new(wc_age_recipients **recipients);
/* Adds recipients from `text`: one "age1..." key, or a recipients file (one
 * key a line, '#' comments and empty lines skipped). Nothing is added on
 * failure. */
WC_API wc_status wc_age_recipients_add(wc_age_recipients *recipients, const char *text, const char **detail);
/* Adds a passphrase, wrapped with scrypt at 2^work_factor (1 to
 * WC_AGE_MAX_WORK_FACTOR). A passphrase must be a file's only recipient;
 * an empty one is refused. */
WC_API wc_status wc_age_recipients_add_passphrase(wc_age_recipients *recipients, const uint8_t *passphrase,
                                                  size_t passphrase_len, unsigned work_factor);
WC_API size_t wc_age_recipients_count(const wc_age_recipients *recipients);
/* NULL is a no-op. */
WC_API void wc_age_recipients_free(wc_age_recipients *recipients);

WC_API wc_status wc_age_identities_new(wc_age_identities **identities);
/* Adds a fresh X25519 identity from the CSPRNG. */
WC_API wc_status wc_age_identities_generate(wc_age_identities *identities);
/* Adds a fresh post-quantum hybrid identity (ML-KEM-768 + X25519, age 1.3's
 * "AGE-SECRET-KEY-PQ-1...", recipient "age1pq1...") from the CSPRNG. */
WC_API wc_status wc_age_identities_generate_pq(wc_age_identities *identities);
/* Adds identities from `text`: one "AGE-SECRET-KEY-1..." or
 * "AGE-SECRET-KEY-PQ-1..." key, an identity file as age-keygen writes it,
 * or an SSH private key file, ed25519 or RSA: OpenSSH's ("-----BEGIN
 * OPENSSH PRIVATE KEY-----"), PKCS#1 RSA ("-----BEGIN RSA PRIVATE
 * KEY-----", plain or under OpenSSL's legacy encryption, then, encrypted,
 * its public key line, as age reads KEY.pub beside it) or unencrypted
 * PKCS#8 ("-----BEGIN PRIVATE KEY-----"). Nothing is added on failure. A
 * passphrase-protected SSH key added here has no way to get its
 * passphrase: a stanza that names it fails with WC_ERR_NO_IDENTITY. */
WC_API wc_status wc_age_identities_add(wc_age_identities *identities, const char *text, const char **detail);
/* Asked for the passphrase of a passphrase-protected SSH key: writes it to
 * `out` (up to `out_cap` bytes, WC_AGE_PASSPHRASE_MAX) and its length to
 * *out_len, and returns WC_OK; any other status gives up, and decryption
 * fails with it. Called during decryption, on the decrypting thread, only
 * when a stanza names the key (its public key is in clear in the key file),
 * once per such stanza; the library wipes `out` after use. */
typedef wc_status (*wc_age_passphrase_fn)(void *context, uint8_t *out, size_t out_cap, size_t *out_len);
#define WC_AGE_PASSPHRASE_MAX 1024u
/* As wc_age_identities_add, with `ask` (and its `context`) as the way to a
 * passphrase-protected SSH key's passphrase. A wrong passphrase fails
 * decryption with WC_ERR_AUTH. */
WC_API wc_status wc_age_identities_add_with_prompt(wc_age_identities *identities, const char *text,
                                                   wc_age_passphrase_fn ask, void *context, const char **detail);
/* Adds a passphrase; scrypt stanzas above 2^max_work_factor (1 to
 * WC_AGE_MAX_WORK_FACTOR) are refused unopened. */
WC_API wc_status wc_age_identities_add_passphrase(wc_age_identities *identities, const uint8_t *passphrase,
                                                  size_t passphrase_len, unsigned max_work_factor);
WC_API size_t wc_age_identities_count(const wc_age_identities *identities);
/* Adds a copy of identity `index` of `from` (which may be `identities`
 * itself): the same key, and for a passphrase-protected SSH key the same way
 * to its passphrase; a plugin identity talks to the user through this set's
 * plugin ui. WC_ERR_INVALID_ARGUMENT for an index out of range. */
WC_API wc_status wc_age_identities_add_copy(wc_age_identities *identities, const wc_age_identities *from,
                                            size_t index);
/* Identity `index`'s type into *type, a static string: "x25519",
 * "hybrid" (AGE-SECRET-KEY-PQ-1), "ssh-ed25519", "ssh-rsa", "plugin" or
 * "passphrase". WC_ERR_INVALID_ARGUMENT (and NULL) for an index out of
 * range. */
WC_API wc_status wc_age_identity_type(const wc_age_identities *identities, size_t index, const char **type);
/* Identity `index`'s secret key, NUL-terminated, into `out` of `out_cap`
 * bytes (WC_AGE_KEY_MAX_LEN is enough): "AGE-SECRET-KEY-1..." or
 * "AGE-SECRET-KEY-PQ-1...". Every other type refuses with
 * WC_ERR_UNSUPPORTED and a *detail that names it: an SSH identity's secret
 * is its key file, a plugin's is its plugin's, and a passphrase is no key.
 * WC_ERR_INVALID_ARGUMENT for an index out of range, WC_ERR_OUTPUT_TOO_SMALL
 * for a short buffer. On failure `out` is zeroed. */
WC_API wc_status wc_age_identity_format(const wc_age_identities *identities, size_t index, char *out,
                                        size_t out_cap, const char **detail);
/* The recipient identity `index` opens files for, as wc_age_recipients_add
 * reads it, into `out` as wc_age_identity_format writes: "age1...",
 * "age1pq1...", or an SSH identity's public key line ("ssh-ed25519 AAAA...",
 * "ssh-rsa AAAA...", without a comment), which a key file holds in clear
 * even when its private part is passphrase-protected. A plugin identity's
 * recipient is its plugin's to derive, and a passphrase has none: both are
 * WC_ERR_UNSUPPORTED, with a *detail that names the type. */
WC_API wc_status wc_age_identity_recipient(const wc_age_identities *identities, size_t index, char *out,
                                           size_t out_cap, const char **detail);
/* Wipes every secret, and frees. NULL is a no-op. */
WC_API void wc_age_identities_free(wc_age_identities *identities);

/* The plugins of these recipients or identities, present and added later,
 * talk to the user through a copy of *ui; a NULL ui takes that away again,
 * a NULL set is a no-op. */
WC_API void wc_age_recipients_set_plugin_ui(wc_age_recipients *recipients, const wc_age_plugin_ui *ui);
WC_API void wc_age_identities_set_plugin_ui(wc_age_identities *identities, const wc_age_plugin_ui *ui);

/* Encrypts everything from in_fd's offset to its end, to every recipient,
 * into out_fd at its offset; ASCII-armored when `armor` is nonzero. The
 * output is byte-identical whatever the backend, apart from the random file
 * key and nonce. */
WC_API wc_status wc_age_encrypt_fd(const wc_options *options, const wc_age_recipients *recipients, int armor,
                                   wc_job *job, int out_fd, int in_fd);
/* Decrypts the age file (binary or armored) from in_fd's offset into
 * out_fd at its offset: plaintext bytes [offset, offset + length), cut at
 * the end; 0 and UINT64_MAX are the whole file, the only range a pipe
 * allows (WC_ERR_INVALID_ARGUMENT). A range reads and authenticates only
 * the chunks that hold it, the final one whenever it reaches the end; an
 * empty range still authenticates the last chunk. A streamed (non-file)
 * output may hold the chunks authenticated before a failure. */
WC_API wc_status wc_age_decrypt_fd(const wc_options *options, const wc_age_identities *identities, uint64_t offset,
                                   uint64_t length, wc_job *job, int out_fd, int in_fd);
/* Path to path, atomically (wc_output_open): nothing is left at out_path
 * on failure. */
WC_API wc_status wc_age_encrypt_file(const wc_options *options, const wc_age_recipients *recipients, int armor,
                                     wc_job *job, const char *out_path, const char *in_path);
WC_API wc_status wc_age_decrypt_file(const wc_options *options, const wc_age_identities *identities,
                                     uint64_t offset, uint64_t length, wc_job *job, const char *out_path,
                                     const char *in_path);
/* Buffer to buffer. *out_len receives the result's length; an `out_cap`
 * below it is WC_ERR_OUTPUT_TOO_SMALL (with *out_len set, so a caller may
 * retry), and on any failure `out` is zeroed. */
WC_API wc_status wc_age_encrypt_buffer(const wc_options *options, const wc_age_recipients *recipients, int armor,
                                       wc_job *job, uint8_t *out, size_t out_cap, size_t *out_len,
                                       const uint8_t *in, size_t in_len);
WC_API wc_status wc_age_decrypt_buffer(const wc_options *options, const wc_age_identities *identities,
                                       uint64_t offset, uint64_t length, wc_job *job, uint8_t *out, size_t out_cap,
                                       size_t *out_len, const uint8_t *in, size_t in_len);
/* Room for wc_age_encrypt_buffer's result of `in_len` bytes to `recipients`,
 * known before the call, so that it runs once (a plugin, or an SSH key's
 * passphrase, is asked once): the payload exactly, armored where `armor`
 * is set, and a header of WC_AGE_STANZA_ROOM bytes a recipient, which every
 * native type's stanza fits. A plugin's stanza may be larger: the call then
 * says WC_ERR_OUTPUT_TOO_SMALL with the length it needs. A decryption's
 * result is never longer than its input. SIZE_MAX where the sum overflows. */
#define WC_AGE_STANZA_ROOM 4096
WC_API size_t wc_age_encrypted_capacity(const wc_age_recipients *recipients, size_t in_len, int armor);

/* ------------------------------------------------------------------------ */
/* Inspecting an age file (age-inspect)                                     */
/* ------------------------------------------------------------------------ */

/* Whether a file's recipients keep its file key from a quantum computer, as
 * age-inspect says it: NO where any stanza is a classical key's (X25519,
 * ssh-rsa, ssh-ed25519, P-256 tags), YES where the others are post-quantum
 * keys' or a passphrase's (mlkem768x25519, scrypt), else UNKNOWN (plugins
 * and types unknown here). */
typedef WC_ENUM(wc_age_postquantum) {
  WC_AGE_PQ_UNKNOWN = 0,
  WC_AGE_PQ_NO = 1,
  WC_AGE_PQ_YES = 2
} wc_age_postquantum;

/* What an age file says of itself without being decrypted. The sizes add up
 * to the input's length: header_bytes + armor_bytes + overhead_bytes +
 * payload_bytes == file_bytes. */
typedef struct wc_age_info {
  int armored;                    /* 1 for ASCII armor, else 0 */
  wc_age_postquantum postquantum;
  size_t stanza_count;            /* recipient stanzas in the header */
  /* stanza_count NUL-terminated type names ("X25519", "scrypt", ...), in the
   * header's order; owned by the library until wc_age_info_release. */
  const char *const *stanza_types;
  uint64_t file_bytes;     /* everything read from the input */
  uint64_t header_bytes;   /* the binary header, version line through the MAC line */
  uint64_t armor_bytes;    /* what the armor adds (0 for a binary file) */
  uint64_t overhead_bytes; /* the payload nonce (16) and a 16-byte tag per chunk */
  uint64_t payload_bytes;  /* the plaintext the payload holds, if it decrypts */
  uint64_t chunk_count;    /* the payload's 64 KiB chunks, the last shorter */
} wc_age_info;

/* Reads the age file (binary or armored) from in_fd's offset to its end
 * and fills *info; needs no identity, as nothing is decrypted or
 * authenticated (the header MAC needs the file key). The header is parsed by
 * every rule decryption applies, and the armor decoded whole; a header,
 * armor or payload length that breaks the format is WC_ERR_FORMAT with
 * job->detail naming the rule, a failed read WC_ERR_IO. A pipe is read to
 * its end; a regular file, binary, only as far as its header, and its offset
 * is left where it was (as wc_sealed_inspect leaves it). `job` may be NULL.
 * On failure *info is zeroed; on success it holds memory that
 * wc_age_info_release frees. */
WC_API wc_status wc_age_inspect_fd(int in_fd, wc_age_info *info, wc_job *job);
/* Frees what wc_age_inspect_fd put in *info and zeroes it. NULL and a
 * zeroed info are no-ops. */
WC_API void wc_age_info_release(wc_age_info *info);

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_AGE_H */
