/* A minimal program using an installed clmg: computes the dot product of two
 * random vectors on the device and checks it against the same sum on the host.
 *
 *   clmg_external_dot [device]     (device: nvidia, pocl, gpu, cpu, P:D, ...;
 *                                   default: $CLMG_DEVICE, else the first GPU)
 *
 * Exits 0 when the device result matches the host result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <clmg.h>

enum { VECTOR_LENGTH = 100000 };

static int fail(clmg_context *context, clmg_status status, const char *what) {
  fprintf(stderr, "clmg_external_dot: %s: %s: %s\n", what, clmg_status_string(status),
          context != NULL ? clmg_context_message(context) : "");
  return 1;
}

int main(int argc, char **argv) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.device = argc > 1 ? argv[1] : NULL;

  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(&options, &context);
  if (status != CLMG_SUCCESS) {
    int code = fail(context, status, "creating a context");
    clmg_context_destroy(context);
    return code;
  }
  const clmg_device_info *device = clmg_context_device(context);
  clmg_dtype type = device->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;

  double *x_host = malloc(VECTOR_LENGTH * sizeof *x_host);
  double *y_host = malloc(VECTOR_LENGTH * sizeof *y_host);
  float *x_single = malloc(VECTOR_LENGTH * sizeof *x_single);
  float *y_single = malloc(VECTOR_LENGTH * sizeof *y_single);
  clmg_vector *x = NULL, *y = NULL;
  int exit_code = 1;
  if (x_host == NULL || y_host == NULL || x_single == NULL || y_single == NULL) {
    fprintf(stderr, "clmg_external_dot: out of host memory\n");
    goto done;
  }

  /* Random values in [-1, 1]. For a float device the values are rounded to
   * float first, so host and device sum the very same numbers. */
  srand(12345);
  double host_dot = 0, host_abs_dot = 0;
  for (int i = 0; i < VECTOR_LENGTH; ++i) {
    x_host[i] = 2.0 * rand() / RAND_MAX - 1.0;
    y_host[i] = 2.0 * rand() / RAND_MAX - 1.0;
    x_single[i] = (float)x_host[i];
    y_single[i] = (float)y_host[i];
    if (type == CLMG_FLOAT) {
      x_host[i] = x_single[i];
      y_host[i] = y_single[i];
    }
    host_dot += x_host[i] * y_host[i];
    host_abs_dot += fabs(x_host[i] * y_host[i]);
  }

  if ((status = clmg_vector_create(context, type, VECTOR_LENGTH, &x)) != CLMG_SUCCESS ||
      (status = clmg_vector_create(context, type, VECTOR_LENGTH, &y)) != CLMG_SUCCESS) {
    exit_code = fail(context, status, "creating vectors");
    goto done;
  }
  const void *x_data = type == CLMG_DOUBLE ? (const void *)x_host : (const void *)x_single;
  const void *y_data = type == CLMG_DOUBLE ? (const void *)y_host : (const void *)y_single;
  if ((status = clmg_vector_upload(x, x_data)) != CLMG_SUCCESS ||
      (status = clmg_vector_upload(y, y_data)) != CLMG_SUCCESS) {
    exit_code = fail(context, status, "uploading");
    goto done;
  }
  double device_dot = 0;
  if ((status = clmg_dot(x, y, &device_dot)) != CLMG_SUCCESS) {
    exit_code = fail(context, status, "clmg_dot");
    goto done;
  }

  /* Summation order differs between host and device: allow rounding error
   * relative to the sum of |x_i y_i|. */
  double tolerance = (type == CLMG_DOUBLE ? 1e-12 : 1e-5) * host_abs_dot;
  double error = fabs(device_dot - host_dot);
  printf("device: %s (%s)\n", device->name, device->platform_name);
  printf("clmg %s, %s dot of %d elements: device %.15g, host %.15g, |difference| %.3g\n",
         clmg_version_string(), clmg_dtype_name(type), VECTOR_LENGTH, device_dot, host_dot, error);
  if (error <= tolerance) {
    printf("OK\n");
    exit_code = 0;
  } else {
    printf("WRONG: difference above the tolerance %.3g\n", tolerance);
    exit_code = 1;
  }

done:
  clmg_vector_destroy(x);
  clmg_vector_destroy(y);
  clmg_context_destroy(context);
  free(x_host);
  free(y_host);
  free(x_single);
  free(y_single);
  return exit_code;
}
