#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apputil.h"

int cli_apply_common_option(const char *command, int option, cli_options *options) {
  switch (option) {
  case 'd':
    options->device = optarg;
    return 1;
  case OPTION_JSON:
    /* JSON errors from here on, also where the scans for --json stopped
     * early: at a "--" that was another option's value ("-d -- --json") */
    options->json = 1;
    cli_set_json_errors(1);
    return 1;
  case OPTION_MEMORY_LIMIT:
    if (clmg_parse_memory_size(optarg, &options->memory_limit) != CLMG_SUCCESS) {
      cli_usage_note(command,
                     "--memory-limit needs a size: bytes (1000000) or a number "
                     "with K, M, G or T, powers of 1024 (512M, 1.5G); not '%s'",
                     optarg);
      return -1;
    }
    return 1;
  case 'h':
    options->help = 1;
    return 1;
  default:
    return 0;
  }
}

/* A flag's value as the options layer's key=value (checked by the library,
 * whose message lists the valid values), kept in command-line order; a
 * --set text when key is NULL. Returns 1, or -1 after a usage note. */
int cli_record_setting(const char *command, const char *flag, const char *key, const char *value,
                       cli_settings *settings) {
  clmg_options *scratch = NULL;
  clmg_error error = {{0}};
  clmg_status status = clmg_options_create(&scratch, &error);
  if (status == CLMG_SUCCESS)
    status = key ? clmg_options_set(scratch, key, value, &error)
                 : clmg_options_parse(scratch, value, &error);
  /* names that a caller may register in the library are the built-in
   * ones here: the command registers none */
  clmg_option_info info;
  for (size_t k = 0; status == CLMG_SUCCESS && clmg_options_key_info(k, &info); k++) {
    const char *given = clmg_options_get(scratch, info.key);
    if (clmg_options_is_set(scratch, info.key) && !clmg_options_builtin(info.key, given)) {
      snprintf(error.message, sizeof error.message, "%s: unknown value '%s' (valid: %s)", info.key,
               given, info.values);
      status = CLMG_ERROR_INVALID_ARGUMENT;
    }
  }
  clmg_options_destroy(scratch);
  if (status != CLMG_SUCCESS) {
    cli_usage_note(command, "%s: %s", flag, error.message);
    return -1;
  }
  if (settings->count >= CLI_MAX_SETTINGS) {
    cli_usage_note(command, "more than %d solver options", CLI_MAX_SETTINGS);
    return -1;
  }
  settings->items[settings->count++] = (cli_setting){key, value};
  return 1;
}

int cli_make_options(const char *command, const cli_settings *settings, clmg_options **db) {
  clmg_error error = {{0}};
  *db = NULL;
  clmg_options *made = NULL;
  clmg_status status = clmg_options_create(&made, &error);
  if (status == CLMG_SUCCESS && settings->options_path)
    status = clmg_options_read_file(made, settings->options_path, &error);
  for (int i = 0; status == CLMG_SUCCESS && i < settings->count; i++) {
    const cli_setting *setting = &settings->items[i];
    status = setting->key ? clmg_options_set(made, setting->key, setting->value, &error)
                          : clmg_options_parse(made, setting->value, &error);
  }
  if (status != CLMG_SUCCESS) {
    cli_failure(command, status, "%s", error.message);
    clmg_options_destroy(made);
    return 0;
  }
  *db = made;
  return 1;
}

int cli_choose_precision(const char *command, clmg_options *db, clmg_context *context, int quiet) {
  if (clmg_options_is_set(db, "precision") &&
      strcmp(clmg_options_get(db, "precision"), "float") == 0)
    return 1;
  const char *asked =
      clmg_options_is_set(db, "precision") ? clmg_options_get(db, "precision") : NULL;
  int fp64 = cli_double_precision(command, context, asked, quiet);
  if (fp64 < 0)
    return 0;
  if (fp64 == 0)
    clmg_options_set(db, "precision", "float", NULL); /* a valid value: cannot fail */
  return 1;
}

/* ---- errors ---- */

static struct {
  int json;      /* print error objects on stdout */
  int json_done; /* an object (error or report) is already on stdout */
  char **argv;
  char note[1024]; /* why the usage is wrong, for the JSON object */
  char last[1024]; /* the note of the last usage error */
  FILE *out, *err; /* NULL: stdout, stderr */
} errors;

static FILE *out_stream(void) {
  return errors.out != NULL ? errors.out : stdout;
}

static FILE *err_stream(void) {
  return errors.err != NULL ? errors.err : stderr;
}

void cli_set_streams(FILE *out, FILE *err) {
  errors.out = out;
  errors.err = err;
}

void cli_reset(void) {
  errors.json = 0;
  errors.json_done = 0;
  errors.argv = NULL;
  errors.note[0] = '\0';
  errors.last[0] = '\0';
}

const char *cli_usage_message(void) {
  return errors.note[0] != '\0' ? errors.note : errors.last;
}

void cli_set_json_errors(int enabled) {
  errors.json = enabled;
}

void cli_set_arguments(char **argv) {
  errors.argv = argv;
}

void cli_json_done(void) {
  errors.json_done = 1;
}

static void print_error_object(const char *command, const char *status, const char *message,
                               int exit_code) {
  if (!errors.json || errors.json_done) {
    return;
  }
  errors.json_done = 1;
  json_writer w;
  json_result_begin(&w, out_stream(), command);
  json_string(&w, "status", status);
  json_string(&w, "message", message);
  json_integer(&w, "exit_code", exit_code);
  json_object_end(&w);
  json_end(&w);
}

static void vnote(const char *command, const char *format, va_list args) {
  vsnprintf(errors.note, sizeof errors.note, format, args);
  fflush(out_stream());
  fprintf(err_stream(), "%s: %s\n", command, errors.note);
}

void cli_usage_note(const char *command, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vnote(command, format, args);
  va_end(args);
}

int cli_usage_error(const char *command) {
  fprintf(err_stream(), "Try '%s --help' for more information.\n", command);
  if (errors.note[0] == '\0') {
    /* getopt_long printed the reason; name the argument it stopped at. A
     * long option is argv[optind - 1] (optopt is its value: 'q' for
     * "--quiet=1"). A short option is optopt, as inside a cluster ("-xq")
     * optind stays on the cluster and argv[optind - 1] is the one before. */
    const char *last = errors.argv != NULL && optind > 0 ? errors.argv[optind - 1] : NULL;
    const char *current = errors.argv != NULL && optind > 0 ? errors.argv[optind] : NULL;
    int after_long = last != NULL && strncmp(last, "--", 2) == 0;
    int in_cluster = current != NULL && current[0] == '-' && current[1] != '-' &&
                     strchr(current + 1, optopt) != NULL;
    if (optopt != 0 && optopt < 256 && (!after_long || in_cluster)) {
      unsigned char c = (unsigned char)optopt; /* glibc's char is signed: -61 for 0xc3 */
      char shown[8];
      snprintf(shown, sizeof shown, isgraph(c) ? "-%c" : "-\\x%02x", c);
      snprintf(errors.note, sizeof errors.note,
               "unknown option, or an option without its argument: '%s'", shown);
    } else if (last != NULL) {
      snprintf(errors.note, sizeof errors.note,
               "unknown option, or an option without its argument: '%s'", last);
    } else {
      snprintf(errors.note, sizeof errors.note, "bad usage");
    }
  }
  print_error_object(command, "usage_error", errors.note, EXIT_USAGE);
  memcpy(errors.last, errors.note, sizeof errors.last);
  errors.note[0] = '\0';
  return EXIT_USAGE;
}

int cli_usage(const char *command, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vnote(command, format, args);
  va_end(args);
  return cli_usage_error(command);
}

int cli_failure(const char *command, clmg_status status, const char *format, ...) {
  char message[2048];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  fflush(out_stream());
  fprintf(err_stream(), "%s: %s\n", command, message);
  print_error_object(command, clmg_status_string(status), message, EXIT_LIBRARY_FAILURE);
  return EXIT_LIBRARY_FAILURE;
}

void cli_json_error(const char *command, clmg_status status, const char *message) {
  print_error_object(command, clmg_status_string(status), message, EXIT_LIBRARY_FAILURE);
}

int cli_report(const char *command, const clmg_context *context, clmg_status status,
               const char *what) {
  apputil_report(context, status, what);
  const char *detail = context != NULL ? clmg_context_message(context) : "";
  char message[2048];
  snprintf(message, sizeof message, "%s%s%s", what != NULL ? what : "error",
           detail[0] != '\0' ? ": " : "", detail);
  print_error_object(command, clmg_status_string(status), message, EXIT_LIBRARY_FAILURE);
  return EXIT_LIBRARY_FAILURE;
}

/* ---- feedback on stderr ---- */

static struct {
  int quiet;
  double start;
} feedback;

clmg_context *cli_open_context(const char *command, const cli_options *common, int quiet) {
  const char *device = common->device;
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.device = device;
  options.memory_limit_bytes = common->memory_limit;
  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(&options, &context);
  if (status == CLMG_SUCCESS && !quiet) {
    status = clmg_context_set_program_callback(context, apputil_announce_compiling, NULL);
  }
  if (status == CLMG_SUCCESS) {
    return context;
  }
  char what[256];
  if (device != NULL) {
    snprintf(what, sizeof what, "cannot open device '%s'", device);
  } else {
    snprintf(what, sizeof what, "cannot open the default device");
  }
  /* On failure the library may hand back a context that only carries the
   * message (see clmg_context_create). */
  cli_report(command, context, status, what);
  clmg_context_destroy(context);
  return NULL;
}

int cli_double_precision(const char *command, clmg_context *context, const char *asked, int quiet) {
  if (clmg_context_check_precision(context, CLMG_DOUBLE) == CLMG_SUCCESS) {
    return 1;
  }
  /* The library's advice ends "use float"; here that is an option. */
  char reason[1024];
  snprintf(reason, sizeof reason, "%s", clmg_context_message(context));
  char *advice = strstr(reason, "; use float");
  if (advice != NULL) {
    *advice = '\0';
  }
  if (asked != NULL) {
    cli_failure(command, CLMG_ERROR_UNSUPPORTED, "--precision %s: %s; use --precision float", asked,
                reason);
    return -1;
  }
  if (!quiet) {
    fflush(stdout);
    fprintf(stderr, "%s: %s; computing in float (--precision float)\n", command, reason);
  }
  return 0;
}

void cli_progress_begin(int quiet) {
  feedback.quiet = quiet;
  feedback.start = apputil_now();
}

enum { PROGRESS_AFTER_S = 1 };

void cli_progress(const char *format, ...) {
  double elapsed = apputil_now() - feedback.start;
  if (feedback.quiet || elapsed < PROGRESS_AFTER_S) {
    return;
  }
  char step[512];
  va_list args;
  va_start(args, format);
  vsnprintf(step, sizeof step, format, args);
  va_end(args);
  fflush(stdout);
  fprintf(stderr, "clmg: %s (%.1f s)\n", step, elapsed);
}

/* ---- numbers ---- */

int cli_parse_double(const char *command, const char *option, const char *text, double min,
                     double max, double *value) {
  char *end = NULL;
  errno = 0;
  double parsed = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !(parsed >= min) || !(parsed <= max)) {
    cli_usage_note(command, "%s needs a number from %g to %g, not '%s'", option, min, max, text);
    return 0;
  }
  *value = parsed;
  return 1;
}

int cli_parse_long(const char *command, const char *option, const char *text, long min, long max,
                   long *value) {
  char *end = NULL;
  errno = 0;
  long parsed = strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || parsed < min || parsed > max) {
    cli_usage_note(command, "%s needs a whole number from %ld to %ld, not '%s'", option, min, max,
                   text);
    return 0;
  }
  *value = parsed;
  return 1;
}

int cli_parse_int(const char *command, const char *option, const char *text, int min, int max,
                  int *value) {
  long parsed;
  if (!cli_parse_long(command, option, text, min, max, &parsed))
    return 0;
  *value = (int)parsed;
  return 1;
}

int cli_parse_count(const char *command, const char *option, const char *text,
                    unsigned long long max, unsigned long long *value) {
  char *end = NULL;
  errno = 0;
  unsigned long long parsed = strtoull(text, &end, 10);
  /* strtoull skips blanks and takes a sign, negating: " -1" would read as
   * ULLONG_MAX, so the text must start with a digit */
  if (!isdigit((unsigned char)text[0]) || *end != '\0' || errno == ERANGE || parsed > max) {
    cli_usage_note(command, "%s needs a whole number from 0 to %llu, not '%s'", option, max, text);
    return 0;
  }
  *value = parsed;
  return 1;
}

int cli_same_file(const char *a, const char *b) {
  struct stat x, y;
  return a && b && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
         x.st_ino == y.st_ino;
}

int cli_check_tags(const char *command, const char *option, const char *mesh_name,
                   const clmg_mesh *mesh, const int32_t *tags, size_t count) {
  for (size_t t = 0; t < count; t++) {
    int found = 0;
    for (size_t f = 0; f < mesh->num_boundary_faces && !found; f++)
      found = mesh->boundary_face_tag[f] == tags[t];
    if (found)
      continue;
    /* the tags there are, smallest first, a few of them */
    char list[160] = "";
    size_t used = 0, shown = 0;
    int32_t last = 0;
    for (;;) {
      int32_t next = INT32_MAX;
      int any = 0;
      for (size_t f = 0; f < mesh->num_boundary_faces; f++)
        if (mesh->boundary_face_tag[f] > last && mesh->boundary_face_tag[f] <= next) {
          next = mesh->boundary_face_tag[f];
          any = 1;
        }
      if (!any || shown == 12)
        break;
      int wrote = snprintf(list + used, sizeof list - used, "%s%d", shown ? ", " : "", (int)next);
      if (wrote < 0 || (size_t)wrote >= sizeof list - used)
        break;
      used += (size_t)wrote;
      shown++;
      last = next;
    }
    cli_usage_note(command, "%s %d: no boundary face of %s has that tag (its tags: %s)", option,
                   (int)tags[t], mesh_name, shown ? list : "none");
    return 0;
  }
  return 1;
}

int cli_parse_tags(const char *command, const char *option, const char *text, int32_t *tags,
                   size_t max, size_t *count) {
  *count = 0;
  const char *p = text;
  while (*p) {
    char *end = NULL;
    errno = 0;
    long tag = strtol(p, &end, 10);
    if (end == p || (*end != ',' && *end != '\0') || errno == ERANGE || tag < 1 ||
        tag > INT32_MAX || *count == max) {
      cli_usage_note(command, "%s needs up to %zu tags >= 1 separated by commas, not '%s'", option,
                     max, text);
      return 0;
    }
    tags[(*count)++] = (int32_t)tag;
    p = *end == ',' ? end + 1 : end;
  }
  if (*count == 0) {
    cli_usage_note(command, "%s needs at least one tag", option);
    return 0;
  }
  return 1;
}
