/* clmg: the command-line front end of the library, one program with
 * subcommands. Every capability lives in the library; this file only parses
 * options, calls the library and prints.
 *
 * Adding a subcommand: write `int run_NAME(int argc, char **argv, const
 * cli_options *defaults)` (argv[0] is "clmg NAME"; it must accept the common
 * options, see COMMON_LONG_OPTIONS) and add one line to `subcommands`. Its
 * option parser goes into subcommands.h, apart from running, and into the
 * fuzz target tests/fuzz/fuzz_options.c.
 *
 * Exit codes: 0 success, 1 the library reported a failure, 2 bad usage.
 * main() is in main.c: the option parsers' fuzz target links this file. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "cli.h"
#include "subcommands.h"

enum { OPTION_BANDWIDTH_MIB = OPTION_FIRST_OWN };

/* getopt_long keeps its position in globals; a new argument vector needs a
 * fresh start (glibc re-reads the optstring flags only when optind is 0). */
static void reset_option_parser(void) {
#ifdef __GLIBC__
  optind = 0;
#else
  optind = 1;
#endif
}

static int reject_extra_arguments(int argc, char **argv) {
  if (optind < argc) {
    return cli_usage(argv[0], "unexpected argument '%s'", argv[optind]);
  }
  return 0;
}

/* "1.5 GiB", "64 KiB": byte counts a person can compare at a glance. */
static const char *format_bytes(uint64_t bytes, char *text, size_t size) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = (double)bytes;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof units / sizeof units[0]) {
    value /= 1024.0;
    unit++;
  }
  if (unit == 0 || value == (double)(uint64_t)value) {
    snprintf(text, size, "%.0f %s", value, units[unit]);
  } else {
    snprintf(text, size, "%.1f %s", value, units[unit]);
  }
  return text;
}

static const char *device_type_name(const clmg_device_info *device) {
  return device->is_gpu ? "GPU" : device->is_cpu ? "CPU" : "other";
}

/* ---- clmg info ---- */

static void print_info_usage(FILE *out) {
  fputs("Usage: clmg info [OPTIONS]\n"
        "\n"
        "Lists every OpenCL platform and device, marks the one clmg selects, opens it\n"
        "and measures its copy bandwidth (read + written bytes per second).\n"
        "\n"
        "Options:\n" COMMON_OPTIONS_HELP
        "      --bandwidth-mib N   buffer size of the bandwidth test in MiB\n"
        "                          (0, the default: a size chosen from the device memory)\n"
        "\n"
        "Output: the devices, the kernel cache directory and the copy bandwidth. With\n"
        "--json: one object with \"devices\" (sizes in bytes as numbers:\n"
        "global_mem_bytes, max_alloc_bytes, local_mem_bytes), \"selected\",\n"
        "\"kernel_cache_dir\" (null when the cache is off), \"bandwidth_buffer_bytes\"\n"
        "(the buffer measured with), \"copy_bandwidth_gb_s\", and \"status\" and\n"
        "\"message\" as every clmg command has them; on failure an object with those\n"
        "two.\n",
        out);
}

static int is_selected(const clmg_device_info *device, const clmg_device_info *selected) {
  return selected != NULL && device->platform_index == selected->platform_index &&
         device->device_index == selected->device_index;
}

static void print_devices_text(const clmg_device_info *devices, size_t count,
                               const clmg_device_info *selected) {
  size_t platforms = 0;
  for (size_t i = 0; i < count; i++) {
    if (i == 0 || devices[i].platform_index != devices[i - 1].platform_index) {
      platforms++;
    }
  }
  printf("clmg %s: %zu OpenCL platform%s, %zu device%s\n", clmg_version_string(), platforms,
         platforms == 1 ? "" : "s", count, count == 1 ? "" : "s");

  char global[32], max_alloc[32], local[32];
  for (size_t i = 0; i < count; i++) {
    const clmg_device_info *device = &devices[i];
    if (i == 0 || device->platform_index != devices[i - 1].platform_index) {
      printf("\nPlatform %u: %s\n", device->platform_index, device->platform_name);
      printf("  version  %s\n", device->platform_version);
    }
    int mark = is_selected(device, selected);
    printf("\n%s %u:%u  %s%s\n", mark ? "  *" : "   ", device->platform_index, device->device_index,
           device->name, mark ? "  (selected)" : "");
    printf("      %-16s %s\n", "type", device_type_name(device));
    printf("      %-16s %s\n", "vendor", device->vendor);
    printf("      %-16s %s\n", "driver", device->driver_version);
    printf("      %-16s %s\n", "OpenCL", device->opencl_version);
    printf("      %-16s %u\n", "compute units", device->compute_units);
    printf("      %-16s %s\n", "global memory",
           format_bytes(device->global_mem_bytes, global, sizeof global));
    printf("      %-16s %s\n", "max allocation",
           format_bytes(device->max_alloc_bytes, max_alloc, sizeof max_alloc));
    printf("      %-16s %s\n", "local memory",
           format_bytes(device->local_mem_bytes, local, sizeof local));
    printf("      %-16s %zu\n", "max work-group", device->max_work_group_size);
    printf("      %-16s %s\n", "fp64", device->has_fp64 ? "yes" : "no");
  }
  printf("\n");
}

static void write_device_json(json_writer *w, const clmg_device_info *device, int selected) {
  char id[32];
  snprintf(id, sizeof id, "%u:%u", device->platform_index, device->device_index);
  json_object_begin(w, NULL);
  json_string(w, "id", id);
  json_integer(w, "platform_index", device->platform_index);
  json_integer(w, "device_index", device->device_index);
  json_string(w, "platform_name", device->platform_name);
  json_string(w, "platform_version", device->platform_version);
  json_string(w, "name", device->name);
  json_string(w, "vendor", device->vendor);
  json_string(w, "driver_version", device->driver_version);
  json_string(w, "opencl_version", device->opencl_version);
  json_string(w, "type", device_type_name(device));
  json_bool(w, "is_gpu", device->is_gpu);
  json_bool(w, "is_cpu", device->is_cpu);
  json_integer(w, "compute_units", device->compute_units);
  json_integer(w, "global_mem_bytes", (long long)device->global_mem_bytes);
  json_integer(w, "max_alloc_bytes", (long long)device->max_alloc_bytes);
  json_integer(w, "local_mem_bytes", (long long)device->local_mem_bytes);
  json_integer(w, "max_work_group_size", (long long)device->max_work_group_size);
  json_bool(w, "fp64", device->has_fp64);
  json_bool(w, "selected", selected);
  json_object_end(w);
}

static void print_info_json(const clmg_device_info *devices, size_t count,
                            const clmg_device_info *selected, const char *cache_dir,
                            size_t bandwidth_bytes, double gb_per_s) {
  json_writer w;
  json_result_begin(&w, stdout, "info");
  json_string(&w, "version", CLMG_VERSION_STRING);
  json_string(&w, "library_version", clmg_version_string());
  json_array_begin(&w, "devices");
  for (size_t i = 0; i < count; i++) {
    write_device_json(&w, &devices[i], is_selected(&devices[i], selected));
  }
  json_array_end(&w);
  json_object_begin(&w, "selected");
  json_integer(&w, "platform_index", selected->platform_index);
  json_integer(&w, "device_index", selected->device_index);
  json_string(&w, "name", selected->name);
  json_object_end(&w);
  json_string(&w, "kernel_cache_dir", cache_dir); /* null: the cache is off */
  json_string(&w, "status", clmg_status_string(CLMG_SUCCESS));
  json_string(&w, "message", "");
  json_integer(&w, "bandwidth_buffer_bytes", (long long)bandwidth_bytes);
  json_number(&w, "copy_bandwidth_gb_s", gb_per_s);
  json_object_end(&w);
  json_end(&w);
}

int info_parse_options(int argc, char **argv, const cli_options *defaults, info_options *o) {
  static const struct option long_options[] = {
      COMMON_LONG_OPTIONS,
      {"bandwidth-mib", required_argument, NULL, OPTION_BANDWIDTH_MIB},
      {NULL, 0, NULL, 0},
  };
  memset(o, 0, sizeof *o);
  o->common = *defaults;
  int option;
  while ((option = getopt_long(argc, argv, COMMON_SHORT_OPTIONS, long_options, NULL)) != -1) {
    int common = cli_apply_common_option(argv[0], option, &o->common);
    if (common < 0) {
      return cli_usage_error(argv[0]);
    }
    if (common) {
      continue;
    }
    switch (option) {
    case OPTION_BANDWIDTH_MIB:
      if (!cli_parse_count(argv[0], "--bandwidth-mib", optarg, SIZE_MAX >> 20, &o->bandwidth_mib)) {
        return cli_usage_error(argv[0]);
      }
      break;
    default:
      return cli_usage_error(argv[0]);
    }
  }
  if (o->common.help) {
    return 0;
  }
  return reject_extra_arguments(argc, argv) ? EXIT_USAGE : 0;
}

static int run_info(int argc, char **argv, const cli_options *defaults) {
  info_options parsed;
  int exit_code = info_parse_options(argc, argv, defaults, &parsed);
  if (exit_code != 0) {
    return exit_code;
  }
  const cli_options options = parsed.common;
  const unsigned long long bandwidth_mib = parsed.bandwidth_mib;
  if (options.help) {
    print_info_usage(stdout);
    return EXIT_SUCCESS;
  }

  clmg_device_info *devices = NULL;
  size_t count = 0;
  char message[1024];
  clmg_status status = clmg_list_devices(&devices, &count, message, sizeof message);
  if (status != CLMG_SUCCESS) {
    return cli_failure(argv[0], status, "cannot list OpenCL devices: %s: %s",
                       clmg_status_string(status), message);
  }

  /* Open the selected device before printing, so the listing can mark it. */
  clmg_context *context = cli_open_context(argv[0], &options, 0);
  const clmg_device_info *selected = context != NULL ? clmg_context_device(context) : NULL;
  if (!options.json) {
    /* Shown even when the selected device does not open: that is when the
     * list is most useful. */
    print_devices_text(devices, count, selected);
  }
  if (context == NULL) {
    free(devices);
    return EXIT_LIBRARY_FAILURE;
  }

  /* the size measured with, also when the library chooses it */
  size_t bandwidth_bytes =
      bandwidth_mib > 0 ? (size_t)bandwidth_mib << 20 : clmg_copy_bandwidth_default_bytes(context);
  if (!options.json) {
    printf("Selected device  %u:%u  %s\n", selected->platform_index, selected->device_index,
           selected->name);
    fflush(stdout); /* the measurement takes a moment: show what is known */
  }
  double gb_per_s = 0.0;
  status = clmg_measure_copy_bandwidth(context, bandwidth_bytes, &gb_per_s);
  if (status != CLMG_SUCCESS) {
    cli_report(argv[0], context, status, "copy bandwidth measurement failed");
    clmg_context_destroy(context);
    free(devices);
    return EXIT_LIBRARY_FAILURE;
  }

  if (options.json) {
    print_info_json(devices, count, selected, clmg_context_cache_dir(context), bandwidth_bytes,
                    gb_per_s);
  } else {
    char size[32];
    const char *cache_dir = clmg_context_cache_dir(context);
    printf("Kernel cache     %s\n", cache_dir != NULL ? cache_dir : "off");
    printf("Copy bandwidth   %.1f GB/s (%s buffer)\n", gb_per_s,
           format_bytes(bandwidth_bytes, size, sizeof size));
  }
  clmg_context_destroy(context);
  free(devices);
  return EXIT_SUCCESS;
}

/* ---- the subcommand table and the top level ---- */

typedef struct subcommand {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv, const cli_options *defaults);
} subcommand;

static const subcommand subcommands[] = {
    {"info", "list OpenCL platforms and devices; measure copy bandwidth", run_info},
    {"solve", "solve A x = b (Matrix Market files) with CG, GMRES or BiCGStab", run_solve},
    {"poisson", "FE Poisson (Q1/Q2, CIRCLE, BLOOD, Gmsh) with geometric multigrid", run_poisson},
    {"helmholtz", "P1 Helmholtz on triangles/tetrahedra, device assembly (Fu et al. 2014)",
     run_helmholtz},
    {"homg", "high-occupancy multigrid (Becerra-Sagredo et al. 2011), V-cycle, FMG", run_homg},
    {"flow", "Navier-Stokes (Crouzeix-Raviart, Vanka multigrid; Bauer et al. 2016)", run_flow},
    {"bench", "benchmark every kernel family against the device's copy bandwidth", run_bench},
};
enum { SUBCOMMAND_COUNT = sizeof subcommands / sizeof subcommands[0] };

static const subcommand *find_subcommand(const char *name) {
  for (size_t i = 0; i < SUBCOMMAND_COUNT; i++) {
    if (strcmp(subcommands[i].name, name) == 0) {
      return &subcommands[i];
    }
  }
  return NULL;
}

/* clmg help options: every key of the options layer (clmg/solver.h), the
 * same for --set, --options files and the library. */
static void print_options_help(FILE *out) {
  fputs("The solver options (clmg solve and clmg helmholtz: --set \"KEY=VALUE ...\" or a\n"
        "JSON file with --options; in C, clmg_options_parse and clmg_solver_create).\n"
        "A JSON file nests the groups: {\"krylov\": \"cg\", \"mg\": {\"smoother\": \"jacobi\"}}.\n"
        "\n",
        out);
  clmg_option_info info;
  for (size_t k = 0; clmg_options_key_info(k, &info); k++) {
    fprintf(out, "  %-26s %s, default %s\n", info.key, info.kind,
            info.default_value[0] ? info.default_value : "none");
    if (info.values[0])
      fprintf(out, "  %-26s values: %s\n", "", info.values);
    /* the sentence, wrapped at 50 columns */
    const char *text = info.description;
    while (*text) {
      size_t n = strlen(text);
      if (n > 50) {
        n = 50;
        while (n > 0 && text[n] != ' ')
          n--;
        if (n == 0)
          n = 50;
      }
      fprintf(out, "  %-26s %.*s\n", "", (int)n, text);
      text += n;
      while (*text == ' ')
        text++;
    }
  }
}

static void print_usage(FILE *out) {
  fprintf(out,
          "Usage: clmg [GLOBAL OPTIONS] COMMAND [OPTIONS]\n"
          "\n"
          "clmg %s: multigrid and sparse solvers on any OpenCL device.\n"
          "\n"
          "Commands:\n",
          CLMG_VERSION_STRING);
  for (size_t i = 0; i < SUBCOMMAND_COUNT; i++) {
    fprintf(out, "  %-12s %s\n", subcommands[i].name, subcommands[i].summary);
  }
  fputs("  help CMD     show the options of command CMD\n"
        "  help options list the solver options (keys of --set and --options files)\n"
        "\n"
        "Global options (every command accepts them too):\n" COMMON_OPTIONS_HELP
        "  -V, --version           print the versions of clmg and of the library\n"
        "\n"
        "Environment:\n"
        "  CLMG_DEVICE        device string used when --device is not given\n"
        "                     (default: the first GPU, else the first CPU)\n"
        "  CLMG_KERNEL_DIR    directory of .cl kernel sources to use instead of the\n"
        "                     ones built into the library\n"
        "  CLMG_CACHE_DIR     directory of the compiled-kernel cache\n"
        "                     (default: $XDG_CACHE_HOME/clmg, else ~/.cache/clmg)\n"
        "  CLMG_MEMORY_LIMIT  the memory limit when --memory-limit is not given\n"
        "  CLMG_DISABLE_FP64  1: treat the device as one without double precision,\n"
        "                     to check a run there (the default precision becomes\n"
        "                     float, and --precision double fails)\n"
        "\n"
        "Examples:\n"
        "  clmg info                     list devices, measure the selected one\n"
        "  clmg info --device pocl       the same on the pocl CPU device\n"
        "  clmg --device 0:1 info --json device 1 of platform 0, as JSON\n"
        "  CLMG_DEVICE=nvidia clmg info  select the device through the environment\n"
        "\n"
        "Exit status: 0 success, 1 the library reported a failure, 2 bad usage.\n",
        out);
}

static int print_version(const cli_options *options) {
  if (options->json) {
    json_writer w;
    json_result_begin(&w, stdout, "version");
    json_string(&w, "status", clmg_status_string(CLMG_SUCCESS));
    json_string(&w, "message", "");
    json_string(&w, "version", CLMG_VERSION_STRING);
    json_string(&w, "library_version", clmg_version_string());
    json_object_end(&w);
    json_end(&w);
  } else {
    printf("clmg %s\n", CLMG_VERSION_STRING);
    printf("library %s\n", clmg_version_string());
  }
  return EXIT_SUCCESS;
}

/* "--json" or an abbreviation that getopt_long takes for it: "--j",
 * "--js", "--jso" (no other option of clmg starts with a j). */
static int is_json_option(const char *argument) {
  size_t length = strlen(argument);
  return length >= 3 && strncmp(argument, "--json", length) == 0;
}

int cli_parse_main(int argc, char **argv, cli_invocation *invocation) {
  static const struct option long_options[] = {
      COMMON_LONG_OPTIONS,
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0},
  };
  static char program_name[] = "clmg";
  static char help_option[] = "--help";
  memset(invocation, 0, sizeof *invocation);
  if (argc < 1) {
    return cli_usage_error(program_name);
  }
  argv[0] = program_name; /* getopt_long's messages then say "clmg:", not a path */
  /* --json anywhere (before a "--"): errors found before it is parsed, or in
   * another subcommand's options, are JSON objects too */
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (is_json_option(argv[i])) {
      cli_set_json_errors(1);
    }
  }
  cli_set_arguments(argv);

  reset_option_parser();
  cli_options *options = &invocation->options;
  int option;
  /* "+": stop at the subcommand name; what follows is the subcommand's. */
  while ((option = getopt_long(argc, argv, "+" COMMON_SHORT_OPTIONS "V", long_options, NULL)) !=
         -1) {
    int common = cli_apply_common_option(argv[0], option, options);
    if (common < 0) {
      return cli_usage_error(argv[0]);
    }
    if (common) {
      continue;
    }
    if (option == 'V') {
      invocation->version = 1;
      continue;
    }
    return cli_usage_error(argv[0]);
  }
  if (options->help || invocation->version) {
    return 0;
  }
  if (optind >= argc) {
    return cli_usage(argv[0], "no command given");
  }

  invocation->argc = argc - optind;
  invocation->argv = argv + optind;
  /* The scan above stops at a "--" that may only end the global options
   * ("clmg -- solve --json ..."): the subcommand's own options, up to their
   * "--", ask for JSON errors too. */
  for (int i = optind + 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (is_json_option(argv[i])) {
      cli_set_json_errors(1);
    }
  }
  if (strcmp(invocation->argv[0], "help") == 0) {
    if (invocation->argc < 2) {
      options->help = 1;
      return 0;
    }
    if (strcmp(invocation->argv[1], "options") == 0) {
      invocation->help_options = 1;
      return 0;
    }
    /* "clmg help CMD" is "clmg CMD --help". */
    invocation->help_argv[0] = invocation->argv[1];
    invocation->help_argv[1] = help_option;
    invocation->help_argv[2] = NULL;
    invocation->argc = 2;
    invocation->argv = invocation->help_argv;
  }

  const subcommand *command = find_subcommand(invocation->argv[0]);
  if (command == NULL) {
    return cli_usage(argv[0], "unknown command '%s'", invocation->argv[0]);
  }
  invocation->command = command->name;
  snprintf(invocation->name, sizeof invocation->name, "clmg %s", command->name);
  invocation->argv[0] = invocation->name; /* for getopt_long's messages and our own */
  reset_option_parser();
  cli_set_arguments(invocation->argv);
  return 0;
}

static cli_distributed distributed; /* ranks 0: one process, as without mpirun */

void cli_set_distributed(const cli_distributed *runners) {
  distributed = *runners;
}

int cli_main(int argc, char **argv) {
  cli_invocation invocation;
  int exit_code = cli_parse_main(argc, argv, &invocation);
  if (exit_code != 0) {
    return exit_code;
  }
  if (invocation.command == NULL) {
    if (invocation.help_options) {
      print_options_help(stdout);
      return EXIT_SUCCESS;
    }
    /* --help comes before -V, as it always did */
    if (invocation.options.help) {
      print_usage(stdout);
      return EXIT_SUCCESS;
    }
    return print_version(&invocation.options);
  }
  /* --version (or -V) after any command prints the versions, as before it */
  for (int i = 1; i < invocation.argc && strcmp(invocation.argv[i], "--") != 0; i++) {
    if (strcmp(invocation.argv[i], "--version") == 0 || strcmp(invocation.argv[i], "-V") == 0) {
      cli_options options = invocation.options;
      for (int k = 1; k < invocation.argc; k++)
        options.json |= strcmp(invocation.argv[k], "--") != 0 && is_json_option(invocation.argv[k]);
      return print_version(&options);
    }
  }
  if (distributed.ranks > 1) {
    if (strcmp(invocation.command, "solve") == 0)
      return distributed.solve(invocation.argc, invocation.argv, &invocation.options);
    if (strcmp(invocation.command, "poisson") == 0)
      return distributed.poisson(invocation.argc, invocation.argv, &invocation.options);
    return cli_usage(invocation.argv[0],
                     "runs on one process, but was started on %d (mpirun); the commands that "
                     "run distributed are solve and poisson",
                     distributed.ranks);
  }
  return find_subcommand(invocation.command)
      ->run(invocation.argc, invocation.argv, &invocation.options);
}
