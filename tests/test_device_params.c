/* The device parameter table (lib/core/device_params.c): the choices for
 * synthetic device descriptions (GPUs by vendor, pocl, Intel's CPU
 * runtime, Oclgrind, small work-groups, reported warp widths), the
 * CLMG_DEVICE_PARAMS overrides, and a context on the test device: its
 * parameters are the table's, and kernels run at an overridden small
 * work-group with the GPU class's lanes. Linked against the static library
 * for the internal interface. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "clmg.h"
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* lib/core/device_params.c's FUSED_CPU */
#define CPU_FUSED_RESTRICT_ROWS 1024
#define CPU_FUSED_SMOOTH_ROWS 128

static clmg_device_description gpu(const char *vendor, size_t max_group) {
  clmg_device_description d = {0};
  d.is_gpu = 1;
  d.vendor = vendor;
  d.platform = "NVIDIA CUDA";
  d.max_work_group_size = max_group;
  return d;
}

static clmg_device_description cpu(const char *platform, const char *vendor, size_t max_group) {
  clmg_device_description d = {0};
  d.is_cpu = 1;
  d.vendor = vendor;
  d.platform = platform;
  d.max_work_group_size = max_group;
  d.unified_memory = 1;
  return d;
}

static clmg_device_params fill(const clmg_device_description *d, const char *overrides) {
  clmg_device_params p;
  char message[1024];
  clmg_status status = clmg_device_params_fill(d, overrides, &p, message, sizeof message);
  if (status != CLMG_SUCCESS)
    fail_msg("clmg_device_params_fill(\"%s\"): %s", overrides ? overrides : "", message);
  return p;
}

/* The choices every GPU class made before the table (CL_DEVICE_TYPE_GPU). */
static void check_gpu_choices(const clmg_device_params *p) {
  assert_int_equal(p->work_group_size, 256);
  assert_int_equal(p->dense_group_size, 128);
  assert_int_equal(p->patch_group_size, 128);
  assert_int_equal(p->assembly_group_size, 128);
  assert_int_equal(p->row_group_size, 64);
  assert_int_equal(p->stream_groups_per_unit, 64);
  assert_int_equal(p->reduction_groups_per_unit, 8);
  assert_false(p->cpu_kernels);
  assert_true(p->homg_tile_kernels);
  assert_int_equal(p->sell_sigma_slices, 8);
  assert_int_equal(p->csr_max_lanes, 32);
  assert_true(p->csr_long_row_factor == 64.0);
  assert_int_equal(p->csr_long_row_min, 512);
  assert_int_equal(p->ellr_max_threads, 8);
  assert_true(p->ellr_entries_per_thread == 12.0);
  assert_true(p->auto_ellr_max_length == SIZE_MAX);
  assert_true(p->auto_sell);
  assert_int_equal(p->auto_csr_adaptive_ratio, 0); /* until measured on a GPU */
  assert_true(p->auto_hybrid);
  assert_int_equal(p->csr_block_factor, 4);
  assert_false(p->clblast_axpy);
  assert_true(p->amg_setup_on_device);
  assert_true(p->p1_rows);
  assert_true(p->stokes_setup_on_device);
  assert_false(p->host_buffers);
  assert_false(p->oclgrind);
  assert_int_equal(p->bandwidth_bytes, (size_t)1 << 30);
  /* the coarse tail: one row per work-item of its group (1024 rows at a
   * group of 1024, the H200's measured optimum); the fused kernels above it */
  assert_int_equal(p->tail_rows_per_item, 1);
  assert_int_equal(p->tail_rows, p->tail_group_size);
  assert_int_equal(p->tail_entries_per_row, 16);
  assert_int_equal(p->fused_restrict_rows, 0);
  assert_int_equal(p->fused_smooth_rows, 0);
  /* uploads staged in chunks of 16 MiB where the memory is the device's */
  assert_int_equal(p->staging_chunk_bytes, (size_t)16 << 20);
  assert_int_equal(p->staging_min_bytes, p->shares_host_memory ? 0 : (size_t)1 << 20);
}

/* The choices every CPU class made before the table (CL_DEVICE_TYPE_CPU). */
static void check_cpu_choices(const clmg_device_params *p) {
  assert_int_equal(p->work_group_size, 256);
  assert_int_equal(p->dense_group_size, 128);
  assert_int_equal(p->patch_group_size, 128);
  assert_int_equal(p->assembly_group_size, 128);
  assert_int_equal(p->row_group_size, 64);
  assert_int_equal(p->stream_groups_per_unit, 4);
  assert_int_equal(p->reduction_groups_per_unit, 4);
  assert_true(p->cpu_kernels);
  assert_false(p->homg_tile_kernels);
  assert_int_equal(p->sell_slice, 8);
  assert_int_equal(p->sell_sigma_slices, 8);
  assert_int_equal(p->csr_max_lanes, 1);
  assert_true(p->csr_long_row_factor == 0.0);
  assert_int_equal(p->ellr_max_threads, 1);
  assert_int_equal(p->auto_ellr_max_length, 8);
  assert_false(p->auto_sell);
  assert_int_equal(p->auto_csr_adaptive_ratio, 0); /* CSR-Adaptive only when asked for */
  assert_false(p->auto_hybrid);                    /* CSR has no padding to avoid */
  assert_int_equal(p->csr_block_factor, 4);
  assert_true(p->clblast_axpy);
  assert_false(p->amg_setup_on_device);
  assert_false(p->p1_rows);
  assert_false(p->stokes_setup_on_device);
  assert_true(p->host_buffers);
  assert_true(p->shares_host_memory);
  assert_false(p->oclgrind);
  assert_int_equal(p->bandwidth_bytes, (size_t)256 << 20);
  /* no tail on a CPU; the fused kernels as measured on pocl */
  assert_int_equal(p->tail_rows_per_item, 0);
  assert_int_equal(p->tail_rows, 0);
  assert_int_equal(p->fused_restrict_rows, CPU_FUSED_RESTRICT_ROWS);
  assert_int_equal(p->fused_smooth_rows, CPU_FUSED_SMOOTH_ROWS);
  assert_int_equal(p->staging_min_bytes, 0); /* the staging copy is pure cost there */
}

static void test_gpu_nvidia(void **state) {
  (void)state;
  clmg_device_description d = gpu("NVIDIA Corporation", 1024);
  d.warp_width = 32;
  clmg_device_params p = fill(&d, NULL);
  assert_int_equal(p.tail_group_size, 1024);
  assert_int_equal(p.tail_rows, 1024);
  assert_int_equal(p.device_class, CLMG_DEVICE_CLASS_GPU_NVIDIA);
  assert_string_equal(p.class_name, "gpu-nvidia");
  assert_string_equal(clmg_device_class_name(p.device_class), "gpu-nvidia");
  check_gpu_choices(&p);
  assert_int_equal(p.sell_slice, 32);
  assert_false(p.shares_host_memory);
  assert_int_equal(p.staging_min_bytes, (size_t)1 << 20);
  /* overridden: off, or another threshold and chunk */
  assert_int_equal(fill(&d, "staging_min_bytes=0").staging_min_bytes, 0);
  p = fill(&d, "staging_min_bytes=4096,staging_chunk_bytes=100000");
  assert_int_equal(p.staging_min_bytes, 4096);
  assert_int_equal(p.staging_chunk_bytes, 100000);
}

static void test_gpu_amd_intel_other(void **state) {
  (void)state;
  /* the vendor strings that chose a slice of 64 before the table */
  const char *amd[] = {"Advanced Micro Devices, Inc.", "AMD"};
  for (int i = 0; i < 2; ++i) {
    clmg_device_description d = gpu(amd[i], 256);
    clmg_device_params p = fill(&d, NULL);
    assert_int_equal(p.device_class, CLMG_DEVICE_CLASS_GPU_AMD);
    check_gpu_choices(&p);
    assert_int_equal(p.sell_slice, 64);
    assert_int_equal(p.tail_rows, 256); /* its groups stop at 256 */
  }
  clmg_device_description d = gpu("Intel(R) Corporation", 512);
  d.unified_memory = 1; /* an integrated GPU */
  clmg_device_params p = fill(&d, NULL);
  assert_int_equal(p.device_class, CLMG_DEVICE_CLASS_GPU_INTEL);
  check_gpu_choices(&p);
  assert_int_equal(p.sell_slice, 32);
  assert_true(p.shares_host_memory);
  assert_int_equal(p.staging_min_bytes, 0); /* its memory is the host's */
  /* an unknown vendor: the reported warp width, else 32 */
  d = gpu("Imagination Technologies", 512);
  p = fill(&d, NULL);
  assert_int_equal(p.device_class, CLMG_DEVICE_CLASS_GPU_OTHER);
  check_gpu_choices(&p);
  assert_int_equal(p.sell_slice, 32);
  d.warp_width = 16;
  assert_int_equal(fill(&d, NULL).sell_slice, 16);
  d.warp_width = 48; /* not a power of two: ignored */
  assert_int_equal(fill(&d, NULL).sell_slice, 32);
  /* a class with its own slice keeps it whatever the device reports */
  d = gpu("NVIDIA Corporation", 1024);
  d.warp_width = 64;
  assert_int_equal(fill(&d, NULL).sell_slice, 32);
}

static void test_cpu_pocl_intel(void **state) {
  (void)state;
  clmg_device_description d = cpu("Portable Computing Language", "AuthenticAMD", 4096);
  clmg_device_params pocl = fill(&d, NULL);
  assert_int_equal(pocl.device_class, CLMG_DEVICE_CLASS_CPU_POCL);
  assert_string_equal(pocl.class_name, "cpu-pocl");
  check_cpu_choices(&pocl);
  d = cpu("Intel(R) OpenCL", "Intel(R) Corporation", 8192);
  clmg_device_params intel = fill(&d, NULL);
  assert_int_equal(intel.device_class, CLMG_DEVICE_CLASS_CPU_INTEL);
  assert_string_equal(intel.class_name, "cpu-intel");
  check_cpu_choices(&intel);
  d = cpu("Apple", "Apple", 1024);
  d.unified_memory = 0; /* a CPU's buffers are host memory all the same */
  clmg_device_params other = fill(&d, NULL);
  assert_int_equal(other.device_class, CLMG_DEVICE_CLASS_CPU_OTHER);
  check_cpu_choices(&other);
}

/* Oclgrind reports every device type; the table keeps what its CPU and GPU
 * bits chose before. */
static void test_oclgrind(void **state) {
  (void)state;
  clmg_device_description d = {1, 1, "Oclgrind", "Oclgrind", 1024, 0, 0};
  clmg_device_params p = fill(&d, NULL);
  assert_int_equal(p.device_class, CLMG_DEVICE_CLASS_OCLGRIND);
  assert_true(p.oclgrind);
  assert_true(p.cpu_kernels);
  assert_true(p.homg_tile_kernels);
  assert_int_equal(p.stream_groups_per_unit, 64);
  assert_int_equal(p.reduction_groups_per_unit, 8);
  assert_int_equal(p.sell_slice, 32);
  assert_int_equal(p.csr_max_lanes, 32);
  assert_true(p.auto_sell);
  assert_false(p.clblast_axpy);
  assert_true(p.amg_setup_on_device);
  assert_true(p.p1_rows);
  assert_true(p.host_buffers);
  assert_true(p.shares_host_memory);
  assert_int_equal(p.bandwidth_bytes, (size_t)1 << 30);
}

/* Neither a GPU nor a CPU (an accelerator). */
static void test_other(void **state) {
  (void)state;
  clmg_device_description d = {0, 0, "Xilinx", "Xilinx", 1024, 0, 0};
  clmg_device_params p = fill(&d, NULL);
  assert_int_equal(p.device_class, CLMG_DEVICE_CLASS_OTHER);
  assert_false(p.cpu_kernels);
  assert_false(p.homg_tile_kernels);
  assert_int_equal(p.stream_groups_per_unit, 4);
  assert_int_equal(p.sell_slice, 8);
  assert_int_equal(p.csr_max_lanes, 1);
  assert_false(p.auto_sell);
  assert_true(p.clblast_axpy);
  assert_false(p.amg_setup_on_device);
  assert_false(p.p1_rows);
  assert_false(p.host_buffers);
  assert_false(p.shares_host_memory);
  assert_false(p.oclgrind);
  assert_int_equal(p.bandwidth_bytes, (size_t)256 << 20);
  assert_int_equal(p.staging_min_bytes, 0); /* not measured */
}

/* Devices whose largest work-group is below the table's sizes: every size
 * bounded by it, rounded down to a power of two; lanes within a group;
 * HOMG's 64 x 4 tiles only where groups of 256 fit. */
static void test_small_work_groups(void **state) {
  (void)state;
  clmg_device_description d = gpu("NVIDIA Corporation", 128);
  clmg_device_params p = fill(&d, NULL);
  assert_int_equal(p.work_group_size, 128);
  assert_int_equal(p.dense_group_size, 128);
  assert_int_equal(p.patch_group_size, 128);
  assert_int_equal(p.assembly_group_size, 128);
  assert_int_equal(p.row_group_size, 64);
  assert_int_equal(p.csr_max_lanes, 32);
  assert_int_equal(p.ellr_max_threads, 8);
  assert_false(p.homg_tile_kernels);
  assert_false(p.cpu_kernels);
  assert_int_equal(p.tail_group_size, 128);
  assert_int_equal(p.tail_rows, 128); /* the tail's size follows its group */

  d.max_work_group_size = 200; /* not a power of two */
  p = fill(&d, NULL);
  assert_int_equal(p.work_group_size, 128);
  assert_int_equal(p.dense_group_size, 128);

  d.max_work_group_size = 16;
  p = fill(&d, NULL);
  assert_int_equal(p.work_group_size, 16);
  assert_int_equal(p.dense_group_size, 16);
  assert_int_equal(p.patch_group_size, 16);
  assert_int_equal(p.assembly_group_size, 16);
  assert_int_equal(p.row_group_size, 16);
  assert_int_equal(p.csr_max_lanes, 16);
  assert_int_equal(p.ellr_max_threads, 8);

  d.max_work_group_size = 1;
  p = fill(&d, NULL);
  assert_int_equal(p.work_group_size, 1);
  assert_int_equal(p.row_group_size, 1);
  assert_int_equal(p.csr_max_lanes, 1);
  assert_int_equal(p.ellr_max_threads, 1);

  d.max_work_group_size = 0; /* not reported: taken as 1 */
  assert_int_equal(fill(&d, NULL).work_group_size, 1);

  /* the CPU's sizes are bounded alike */
  d = cpu("Portable Computing Language", "GenuineIntel", 64);
  p = fill(&d, NULL);
  assert_int_equal(p.work_group_size, 64);
  assert_int_equal(p.dense_group_size, 64);
  assert_int_equal(p.row_group_size, 64);
}

static void expect_refused(const char *overrides, const char *part) {
  clmg_device_description d = cpu("Portable Computing Language", "AuthenticAMD", 4096);
  clmg_device_params p;
  char message[1024];
  assert_int_equal(clmg_device_params_fill(&d, overrides, &p, message, sizeof message),
                   CLMG_ERROR_INVALID_ARGUMENT);
  if (!strstr(message, part))
    fail_msg("\"%s\": the message \"%s\" lacks \"%s\"", overrides, message, part);
}

static void test_overrides(void **state) {
  (void)state;
  clmg_device_description d = cpu("Portable Computing Language", "AuthenticAMD", 4096);
  clmg_device_params p = fill(&d, "work_group_size=64, sell_slice=16,csr_max_lanes=4");
  assert_int_equal(p.device_class, CLMG_DEVICE_CLASS_CPU_POCL);
  assert_int_equal(p.work_group_size, 64);
  assert_int_equal(p.sell_slice, 16);
  assert_int_equal(p.csr_max_lanes, 4);
  assert_int_equal(p.dense_group_size, 128); /* untouched */
  /* the empty string is no override */
  p = fill(&d, "");
  check_cpu_choices(&p);
  /* class first, then the keys; the memory fields follow the device */
  p = fill(&d, "class=gpu-amd,work_group_size=32,p1_rows=0");
  assert_int_equal(p.device_class, CLMG_DEVICE_CLASS_GPU_AMD);
  assert_false(p.cpu_kernels);
  assert_int_equal(p.sell_slice, 64);
  assert_int_equal(p.work_group_size, 32);
  assert_false(p.p1_rows);
  assert_true(p.homg_tile_kernels);
  assert_true(p.host_buffers);
  assert_int_equal(p.bandwidth_bytes, (size_t)256 << 20);
  assert_false(p.oclgrind);
  /* a GPU class on this device: its tail from the class's rule */
  p = fill(&d, "class=gpu-nvidia");
  assert_int_equal(p.tail_rows, 1024);
  /* ... and no staging: the memory rule follows the device (a CPU's) */
  assert_int_equal(p.staging_min_bytes, 0);
  assert_int_equal(fill(&d, "class=gpu-nvidia,staging_min_bytes=1").staging_min_bytes, 1);
  /* the tail's size set, or its rule's factor; the fused kernels off */
  p = fill(&d, "class=gpu-nvidia,tail_rows=4096");
  assert_int_equal(p.tail_rows, 4096);
  p = fill(&d, "class=gpu-nvidia,tail_rows_per_item=2,fused_restrict_rows=0,fused_smooth_rows=0");
  assert_int_equal(p.tail_rows, 2048);
  assert_int_equal(p.fused_restrict_rows, 0);
  assert_int_equal(p.fused_smooth_rows, 0);
  p = fill(&d, "tail_rows=512,fused_smooth_rows=100");
  assert_int_equal(p.tail_rows, 512);
  assert_int_equal(p.fused_smooth_rows, 100);
  /* bounded by the device like the table's own values */
  d.max_work_group_size = 256;
  p = fill(&d, "work_group_size=1024,row_group_size=4096");
  assert_int_equal(p.work_group_size, 256);
  assert_int_equal(p.row_group_size, 256);
  /* a gpu-other class from an override asks the device for its slice */
  d.warp_width = 64;
  assert_int_equal(fill(&d, "class=gpu-other").sell_slice, 64);

  expect_refused("warp=32", "work_group_size");
  expect_refused("warp=32", "p1_rows");
  expect_refused("work_group_size", "KEY=VALUE");
  expect_refused("work_group_size=", "KEY=VALUE");
  expect_refused("=4", "KEY=VALUE");
  expect_refused("work_group_size=100", "power of two");
  expect_refused("work_group_size=0", "from 1");
  expect_refused("work_group_size=-1", "work_group_size=-1");
  expect_refused("sell_slice=512", "sell_slice=512");
  expect_refused("csr_max_lanes=64", "csr_max_lanes=64");
  expect_refused("csr_block_factor=3", "power of two");
  expect_refused("csr_block_factor=1", "from 2");
  assert_int_equal(fill(&d, "auto_csr_adaptive_ratio=0").auto_csr_adaptive_ratio, 0);
  assert_int_equal(fill(&d, "auto_hybrid=0").auto_hybrid, 0);
  assert_int_equal(fill(&d, "csr_block_factor=16").csr_block_factor, 16);
  expect_refused("staging_chunk_bytes=63", "from 64");
  expect_refused("staging_chunk_bytes=0", "staging_chunk_bytes=0");
  expect_refused("staging_min_bytes=-1", "staging_min_bytes=-1");
  expect_refused("cpu_kernels=2", "0 or 1");
  expect_refused("cpu_kernels=yes", "cpu_kernels=yes");
  expect_refused("host_buffers=0", "unknown key");
  expect_refused("class=tpu", "gpu-nvidia");
  expect_refused("class=tpu", "oclgrind");
}

/* ---- a context on the test device ---- */

static void same_params(const clmg_device_params *a, const clmg_device_params *b) {
  assert_int_equal(a->device_class, b->device_class);
  assert_string_equal(a->class_name, b->class_name);
  assert_int_equal(a->work_group_size, b->work_group_size);
  assert_int_equal(a->dense_group_size, b->dense_group_size);
  assert_int_equal(a->patch_group_size, b->patch_group_size);
  assert_int_equal(a->assembly_group_size, b->assembly_group_size);
  assert_int_equal(a->row_group_size, b->row_group_size);
  assert_int_equal(a->stream_groups_per_unit, b->stream_groups_per_unit);
  assert_int_equal(a->reduction_groups_per_unit, b->reduction_groups_per_unit);
  assert_int_equal(a->cpu_kernels, b->cpu_kernels);
  assert_int_equal(a->homg_tile_kernels, b->homg_tile_kernels);
  assert_int_equal(a->sell_slice, b->sell_slice);
  assert_int_equal(a->sell_sigma_slices, b->sell_sigma_slices);
  assert_int_equal(a->csr_max_lanes, b->csr_max_lanes);
  assert_true(a->csr_long_row_factor == b->csr_long_row_factor);
  assert_int_equal(a->csr_long_row_min, b->csr_long_row_min);
  assert_int_equal(a->ellr_max_threads, b->ellr_max_threads);
  assert_true(a->ellr_entries_per_thread == b->ellr_entries_per_thread);
  assert_true(a->auto_ellr_max_length == b->auto_ellr_max_length);
  assert_int_equal(a->auto_sell, b->auto_sell);
  assert_int_equal(a->auto_csr_adaptive_ratio, b->auto_csr_adaptive_ratio);
  assert_int_equal(a->auto_hybrid, b->auto_hybrid);
  assert_int_equal(a->csr_block_factor, b->csr_block_factor);
  assert_int_equal(a->clblast_axpy, b->clblast_axpy);
  assert_int_equal(a->amg_setup_on_device, b->amg_setup_on_device);
  assert_int_equal(a->p1_rows, b->p1_rows);
  assert_int_equal(a->stokes_setup_on_device, b->stokes_setup_on_device);
  assert_int_equal(a->host_buffers, b->host_buffers);
  assert_int_equal(a->shares_host_memory, b->shares_host_memory);
  assert_int_equal(a->oclgrind, b->oclgrind);
  assert_int_equal(a->bandwidth_bytes, b->bandwidth_bytes);
  assert_int_equal(a->staging_min_bytes, b->staging_min_bytes);
  assert_int_equal(a->staging_chunk_bytes, b->staging_chunk_bytes);
}

static clmg_context *create(clmg_status expected) {
  clmg_context *ctx = NULL;
  clmg_status status = clmg_context_create(NULL, &ctx);
  if (status != expected)
    fail_msg("clmg_context_create: %s: %s", clmg_status_string(status),
             ctx ? clmg_context_message(ctx) : "");
  return ctx;
}

/* The context's parameters are the table's for its device, and its kernel
 * options follow them. */
static void test_context_params(void **state) {
  (void)state;
  unsetenv("CLMG_DEVICE_PARAMS");
  clmg_context *ctx = create(CLMG_SUCCESS);
  clmg_device_description d;
  clmg_device_describe(&ctx->info, ctx->device, &d);
  clmg_device_params expected = fill(&d, NULL);
  const clmg_device_params *p = &ctx->params;
  assert_int_equal(p->device_class, expected.device_class);
  assert_int_equal(p->device_class, clmg_device_classify(&d));
  same_params(p, &expected);
  assert_true(p->work_group_size <= ctx->info.max_work_group_size);
  int with_cpu_switch = strstr(clmg_real_options(ctx, CLMG_FLOAT), "-DCLMG_CPU=1") != NULL;
  assert_int_equal(with_cpu_switch, p->cpu_kernels);
  /* the classes the project's test devices fall in */
  if (strstr(ctx->info.platform_name, "Portable Computing Language"))
    assert_int_equal(p->device_class, CLMG_DEVICE_CLASS_CPU_POCL);
  if (strstr(ctx->info.platform_name, "Intel(R) OpenCL"))
    assert_int_equal(p->device_class, CLMG_DEVICE_CLASS_CPU_INTEL);
  if (strstr(ctx->info.vendor, "NVIDIA") && ctx->info.is_gpu)
    assert_int_equal(p->device_class, CLMG_DEVICE_CLASS_GPU_NVIDIA);
  clmg_context_destroy(ctx);

  setenv("CLMG_DEVICE_PARAMS", "work_group_size=3", 1);
  ctx = create(CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "CLMG_DEVICE_PARAMS"));
  clmg_context_destroy(ctx);
  unsetenv("CLMG_DEVICE_PARAMS");
}

/* Kernels at an overridden small work-group, with the GPU class's kernels
 * and lanes on whatever the device is: SpMV in each format and a dot
 * product against the host. */
static void test_small_group_kernels(void **state) {
  (void)state;
  setenv("CLMG_DEVICE_PARAMS",
         "class=gpu-nvidia,work_group_size=16,dense_group_size=8,row_group_size=8", 1);
  clmg_context *ctx = create(CLMG_SUCCESS);
  unsetenv("CLMG_DEVICE_PARAMS");
  assert_int_equal(ctx->params.work_group_size, 16);
  assert_int_equal(ctx->params.csr_max_lanes, 16);
  assert_false(ctx->params.cpu_kernels);
  clmg_dtype type = ctx->info.has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  double tolerance = type == CLMG_DOUBLE ? 1e-12 : 1e-4;

  /* rows of 1 to 60 entries: lanes up to 16, ELLR-T, SELL with sorting */
  enum { ROWS = 1000, MOST = 60 };
  size_t count = 0;
  int32_t *ri = malloc(ROWS * MOST * sizeof *ri), *ci = malloc(ROWS * MOST * sizeof *ci);
  double *v = malloc(ROWS * MOST * sizeof *v);
  assert_non_null(ri);
  assert_non_null(ci);
  assert_non_null(v);
  for (int r = 0; r < ROWS; ++r) {
    int length = 1 + (r * 37) % MOST;
    for (int k = 0; k < length; ++k, ++count) {
      ri[count] = r;
      ci[count] = (r + k * 13) % ROWS;
      v[count] = 1.0 / (1 + ((r + 3 * k) % 17));
    }
  }
  clmg_csr a = {0};
  clmg_error error;
  assert_int_equal(clmg_csr_from_triplets(ROWS, ROWS, count, ri, ci, v, &a, &error), CLMG_SUCCESS);
  double *x = malloc(ROWS * sizeof *x), *y = malloc(ROWS * sizeof *y),
         *z = malloc(ROWS * sizeof *z);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(z);
  for (int i = 0; i < ROWS; ++i)
    x[i] = 1.0 + (i % 7) * 0.125;
  clmg_csr_spmv_host(1.0, &a, x, 0.0, y);
  clmg_vector *dx = NULL, *dy = NULL;
  assert_int_equal(clmg_vector_create(ctx, type, ROWS, &dx), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_create(ctx, type, ROWS, &dy), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_upload_doubles(dx, x), CLMG_SUCCESS);
  const clmg_matrix_format formats[] = {CLMG_FORMAT_CSR,          CLMG_FORMAT_ELLR,
                                        CLMG_FORMAT_SELL,         CLMG_FORMAT_AUTO,
                                        CLMG_FORMAT_CSR_ADAPTIVE, CLMG_FORMAT_HYBRID};
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; ++f) {
    clmg_matrix_options options;
    clmg_matrix_options_defaults(&options);
    options.format = formats[f];
    options.precision = type;
    /* long-row segments too */
    options.csr_vector_min = formats[f] == CLMG_FORMAT_CSR ||
                                     formats[f] == CLMG_FORMAT_CSR_ADAPTIVE ||
                                     formats[f] == CLMG_FORMAT_HYBRID
                                 ? 40
                                 : 0;
    clmg_matrix *m = NULL;
    clmg_status status = clmg_matrix_create(ctx, &a, &options, &m);
    if (status != CLMG_SUCCESS)
      fail_msg("%s: %s", clmg_matrix_format_name(formats[f]), clmg_context_message(ctx));
    assert_int_equal(clmg_spmv(1.0, m, dx, 0.0, dy), CLMG_SUCCESS);
    assert_int_equal(clmg_vector_download_doubles(dy, z), CLMG_SUCCESS);
    for (int i = 0; i < ROWS; ++i)
      if (fabs(z[i] - y[i]) > tolerance * fabs(y[i]))
        fail_msg("%s: row %d: %.17g, the host %.17g", clmg_matrix_describe(m), i, z[i], y[i]);
    clmg_matrix_destroy(m);
  }
  double dot = 0, host = 0;
  for (int i = 0; i < ROWS; ++i)
    host += x[i] * x[i];
  assert_int_equal(clmg_dot(dx, dx, &dot), CLMG_SUCCESS);
  assert_true(fabs(dot - host) <= tolerance * host);
  clmg_vector_destroy(dx);
  clmg_vector_destroy(dy);
  clmg_csr_free(&a);
  free(ri);
  free(ci);
  free(v);
  free(x);
  free(y);
  free(z);
  clmg_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gpu_nvidia),
      cmocka_unit_test(test_gpu_amd_intel_other),
      cmocka_unit_test(test_cpu_pocl_intel),
      cmocka_unit_test(test_oclgrind),
      cmocka_unit_test(test_other),
      cmocka_unit_test(test_small_work_groups),
      cmocka_unit_test(test_overrides),
      cmocka_unit_test(test_context_params),
      cmocka_unit_test(test_small_group_kernels),
  };
  return cmocka_run_group_tests_name("device_params", tests, NULL, NULL);
}
