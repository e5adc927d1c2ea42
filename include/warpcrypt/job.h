/* warpcrypt: jobs on buffers, descriptors and files through the streaming engine, and atomic output files. */
#ifndef WARPCRYPT_JOB_H
#define WARPCRYPT_JOB_H

#include "warpcrypt/cipher.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Jobs: buffers, file descriptors and files through the streaming engine   */
/* ------------------------------------------------------------------------ */

/*
 * Called as a job advances, from the engine's threads but never from two at
 * once, about every 50 ms and once at the end. `total_bytes` is 0 where the
 * input's size is unknown (a pipe). Returning nonzero cancels the job: it
 * stops at the next chunk and returns WC_ERR_CANCELLED.
 */
typedef int (*wc_progress_fn)(void *user, uint64_t done_bytes, uint64_t total_bytes);

/* Which side of a job a failed read or write was on (wc_job.io_side). */
typedef WC_ENUM(wc_io_side) {
  WC_IO_NONE = 0,   /* no I/O failure */
  WC_IO_INPUT = 1,  /* opening or reading the input */
  WC_IO_OUTPUT = 2  /* creating, writing or committing the output */
} wc_io_side;

typedef struct wc_job {
  /* In: optional progress callback and its first argument. */
  wc_progress_fn progress;
  void *progress_user;
  /* Out, filled whether the job succeeds or fails. */
  uint64_t bytes_in;
  uint64_t bytes_out;
  double seconds;
  uint64_t cpu_bytes; /* bytes the CPU transformed (a padding block included) */
  uint64_t gpu_bytes; /* bytes the GPUs transformed */
  int os_error;       /* errno of a failed read or write (WC_ERR_IO), else 0 */
  wc_io_side io_side; /* WC_ERR_IO: whether the input or the output failed, so a
                         binding can name the file (Python's OSError.filename) */
  /* A static, secret-free sentence on what failed where the status alone
   * does not say (WC_ERR_FORMAT: the header field; WC_ERR_AUTH: which
   * chunk), else NULL. Sealed-file calls fill it. */
  const char *detail;
  uint64_t failed_chunk; /* WC_ERR_AUTH in a sealed file: the first chunk that failed */
  /* On failure, the whole sentence to show a person, composed by one rule
   * from the fields above (the failed chunk, the detail, errno's reason,
   * else wc_status_string); empty on success. Never holds a secret. The CLI
   * and the Python package print it, prefixed with what they were doing. */
  char message[256];
} wc_job;

WC_API void wc_job_init(wc_job *job);

/* wc_encrypt and wc_decrypt with progress, cancellation and statistics;
 * `job` may be NULL. */
WC_API wc_status wc_encrypt_buffer(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                                   uint8_t *out, size_t out_cap, size_t *out_len,
                                   const uint8_t *key, size_t key_len,
                                   const uint8_t *iv, size_t iv_len,
                                   const uint8_t *in, size_t in_len);
WC_API wc_status wc_decrypt_buffer(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                                   uint8_t *out, size_t out_cap, size_t *out_len,
                                   const uint8_t *key, size_t key_len,
                                   const uint8_t *iv, size_t iv_len,
                                   const uint8_t *in, size_t in_len);

/*
 * Transforms everything from `in_fd`'s current offset to its end and writes
 * the result at `out_fd`'s current offset, leaving both offsets past the
 * bytes read and written. Regular files are read and written at many offsets
 * at once; pipes, sockets and terminals in order. Neither descriptor is
 * closed. On failure the output may hold part of the result: the caller
 * owns that file (wc_encrypt_file removes it).
 */
WC_API wc_status wc_encrypt_fd(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                               int out_fd, int in_fd, const uint8_t *key, size_t key_len,
                               const uint8_t *iv, size_t iv_len);
WC_API wc_status wc_decrypt_fd(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                               int out_fd, int in_fd, const uint8_t *key, size_t key_len,
                               const uint8_t *iv, size_t iv_len);

/*
 * File to file. The output is written as wc_output_open describes: to a new
 * temporary file in the target's directory, renamed over `out_path` only on
 * success; on any failure, cancellation included, the temporary file is
 * removed and `out_path` is left as it was. An output naming the input is
 * refused (WC_ERR_INVALID_ARGUMENT). The temporary file is not removed if the
 * process dies by a signal: a program that needs that installs its own
 * handlers (wc_output_temp_path).
 */
WC_API wc_status wc_encrypt_file(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                                 const char *out_path, const char *in_path,
                                 const uint8_t *key, size_t key_len,
                                 const uint8_t *iv, size_t iv_len);
WC_API wc_status wc_decrypt_file(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                                 const char *out_path, const char *in_path,
                                 const uint8_t *key, size_t key_len,
                                 const uint8_t *iv, size_t iv_len);

/* ------------------------------------------------------------------------ */
/* Output files, written atomically                                         */
/* ------------------------------------------------------------------------ */

/*
 * How every call that takes an output path writes it, for programs that
 * stream into a named file themselves (the CLI does):
 * - The data goes to a temporary file beside the target, mode 0600 until
 *   wc_output_commit gives it the final mode (an existing target's, else
 *   0666 less the umask; 0600 with WC_OUTPUT_SECRET in `flags`) and renames
 *   it over the target. wc_output_free
 *   before that removes it and leaves the target as it was.
 * - An existing target the caller may not write is refused (WC_ERR_IO,
 *   EACCES), as open(2) would refuse it. A replaced file keeps its mode; its
 *   owner becomes the caller unless the caller may give it back (root).
 *   Other hard links to it keep the old contents: the name gets a new file.
 * - Symbolic links are followed only where the kernel's protected_symlinks
 *   rule allows, whatever that setting is on this machine: a link in a
 *   sticky, world-writable directory (such as /tmp) that belongs to neither
 *   the caller nor the directory's owner is refused (EACCES). A dangling
 *   link is refused (ENOENT). Either way *detail says so.
 * - A device, FIFO or socket is written in place (no temporary file).
 * - A target that is the same file as any of the `input_count` files in
 *   `inputs` (NULL for none) is refused (WC_ERR_INVALID_ARGUMENT, and
 *   *detail says so): the rename would destroy it. Give every file the
 *   program reads for the job (its input, identity, key and passphrase
 *   files), each by wc_file_id_of_fd; files compare as the kernel sees them,
 *   whatever path or link named them.
 * Failures are WC_ERR_IO with *os_error (errno) and, where errno alone would
 * mislead, a static sentence in *detail; both may be NULL.
 */
typedef struct wc_output wc_output;

/* A file as the kernel tells it apart from every other: its device and
 * inode. */
typedef struct wc_file_id {
  uint64_t device;
  uint64_t inode;
} wc_file_id;

/* The file open on `fd`; WC_ERR_IO with *os_error where fstat fails. */
WC_API wc_status wc_file_id_of_fd(int fd, wc_file_id *id, int *os_error);

/* wc_output_open's flags. */
enum {
  /* The output is a secret (a key): mode 0600 once complete too, whatever
   * mode the file it replaces had. */
  WC_OUTPUT_SECRET = 1
};

WC_API wc_status wc_output_open(wc_output **output, const char *path, const wc_file_id *inputs,
                                size_t input_count, unsigned flags, int *os_error, const char **detail);
/* The descriptor to write the data to. */
WC_API int wc_output_fd(const wc_output *output);
/* The temporary file's path, for a signal handler that must remove it;
 * NULL when the target is written in place. */
WC_API const char *wc_output_temp_path(const wc_output *output);
/* Final mode, a checked close (delayed write errors, such as a full disk on
 * NFS) and the rename. On failure the temporary file is removed. The output
 * must still be freed. */
WC_API wc_status wc_output_commit(wc_output *output, int *os_error);
/* Removes the temporary file unless committed, and frees. NULL is a no-op. */
WC_API void wc_output_free(wc_output *output);

/*
 * Moves the complete file `file` to `path` beneath the folder `root`, as a
 * job that writes a tree of outputs commits each one (the Python package's
 * Dask jobs do): one rename, so `file` must lie on root's file system
 * (EXDEV otherwise). `path` is relative, with no empty, "." or ".." step
 * (WC_ERR_INVALID_ARGUMENT, *detail says so). Its folders are created where
 * missing (0777 less the umask) and opened one by one; a folder that is a
 * link, or not a folder, is refused (WC_ERR_IO, ENOTDIR, *detail says so),
 * so a link planted in a tree that others may write in cannot send the
 * output outside it. A file at `path` is replaced as wc_output_commit
 * replaces one: it keeps its mode (and owner, where the caller may give it),
 * and a target the caller may not write is refused; a link at `path` is
 * replaced itself, never followed. Other failures are WC_ERR_IO with
 * *os_error; `file` stays where it was on any failure.
 */
WC_API wc_status wc_output_move_beneath(const char *root, const char *path, const char *file, int *os_error,
                                        const char **detail);

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_JOB_H */
