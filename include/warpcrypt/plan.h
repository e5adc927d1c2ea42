/* warpcrypt: the plan of a job: where and how the library will run given work with given options. */
#ifndef WARPCRYPT_PLAN_H
#define WARPCRYPT_PLAN_H

#include "warpcrypt/aead.h"
#include "warpcrypt/job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Plans                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * A program that wants to know where its work will run (the CLI's `speed`,
 * the Python package, its Dask integration) asks the library instead of
 * repeating its rules: wc_plan_describe answers with the placement the job
 * itself computes, from the same code, without running anything.
 */

/* Where a job's data is, which decides where auto runs it. */
typedef WC_ENUM(wc_data_place) {
  WC_DATA_PAGEABLE = 0, /* ordinary host memory: wc_*_buffer, wc_encrypt, wc_ctx, wc_aead_* calls */
  WC_DATA_PINNED = 1,   /* page-locked host memory (wc_host_alloc_pinned, cudaMallocHost, cudaHostRegister) */
  WC_DATA_DEVICE = 2,   /* CUDA device memory: the *_device_async calls */
  WC_DATA_STREAM = 3    /* a descriptor or a file: wc_*_fd, wc_*_file, sealed and age files */
} wc_data_place;

/* The work to describe: one cipher or one AEAD, a direction, where the data
 * is and how much of it there is. A plain cipher on WC_DATA_STREAM is a
 * wc_*_fd or wc_*_file job; an AEAD there is a sealed or age file. */
typedef struct wc_work {
  const wc_cipher *cipher; /* a plain cipher, or NULL ... */
  const wc_aead *aead;     /* ... an AEAD: exactly one of the two */
  wc_direction direction;
  wc_data_place data;
  uint64_t total_bytes;    /* the input's size; 0 where it is unknown (a pipe) */
} wc_work;

/* Why a plan runs where it does. */
typedef WC_ENUM(wc_plan_reason) {
  WC_PLAN_AS_ASKED = 0,         /* the backend the options name */
  WC_PLAN_STAGED_INPUT,         /* auto: input staged through host memory stays on the CPU */
  WC_PLAN_SEQUENTIAL_MODE,      /* the mode does not split: one CPU thread runs it */
  WC_PLAN_CPU_ALWAYS_FASTER,    /* auto: the CPU won at every size measured for this cipher and direction */
  WC_PLAN_NO_DEVICE,            /* auto: no CUDA device is usable */
  WC_PLAN_BELOW_BREAK_EVEN,     /* auto: below the GPU's measured break-even size */
  WC_PLAN_AT_BREAK_EVEN,        /* auto: page-locked input of at least the break-even size */
  WC_PLAN_NO_AEAD_BREAK_EVEN,   /* no AEAD break-even size has been measured: auto (and hybrid on host memory) stay on the CPU */
  WC_PLAN_DEVICE_MEMORY         /* device memory runs where it lives */
} wc_plan_reason;

/* wc_plan.devices holds at most this many entries. */
#define WC_PLAN_MAX_DEVICES 64

/* What a job of the work will run on. The lanes are the engine's workers:
 * a CPU lane is a thread, a GPU lane a CUDA stream with buffers of its own;
 * each takes units of unit_bytes from one queue. */
typedef struct wc_plan {
  wc_backend backend;            /* cpu, gpu or hybrid: never auto */
  wc_plan_reason reason;
  const char *reason_text;       /* the reason in a short, static sentence */
  unsigned cpu_lanes;            /* CPU lanes from the job's start */
  /* Where GPU lanes join late and the threads were not set: the CPU lanes
   * that run until the GPU lanes take their cores. */
  unsigned spare_cpu_lanes;
  unsigned gpu_lanes_per_device; /* CUDA streams on each entry of devices */
  size_t device_count;           /* entries of the device list; 0 without GPU lanes */
  int devices[WC_PLAN_MAX_DEVICES]; /* the first WC_PLAN_MAX_DEVICES entries, by CUDA ordinal */
  int gpu_lanes_late;            /* nonzero: the GPU lanes join late, on trial (WC_BACKEND_HYBRID) */
  size_t chunk_bytes;            /* the engine's chunk size */
  size_t unit_bytes;             /* what a CPU lane claims at once */
} wc_plan;

/*
 * Fills `plan` with what a job of `work` does with `options` (NULL: the
 * defaults): the backend auto resolves to and why, the devices and the
 * lanes. The devices are counted now, where a job might count them beside
 * its first work. A job the options make fail fails here with the job's
 * status: WC_ERR_INVALID_ARGUMENT for a refused field, WC_ERR_NO_DEVICE for
 * the gpu or hybrid backend without a device, WC_ERR_BACKEND_UNAVAILABLE for
 * work the backend does not run; `job` (may be NULL) then receives the
 * job's detail and message. On failure `plan` is zeroed.
 */
WC_API wc_status wc_plan_describe(const wc_options *options, const wc_work *work, wc_job *job, wc_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_PLAN_H */
