/* clmg._clmg: the CPython binding of clmg's public C API (clmg.h), kept
 * thin: opaque handles (a context, a solver made by the options layer) as
 * Python objects with destructors, host arrays passed through the buffer
 * protocol (no NumPy C API), every failure raised as clmg.ClmgError with the
 * library's message (clmg_context_message, clmg_error). Conversions of
 * SciPy/NumPy input and the user-facing API live in Python (__init__.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clmg.h>

static PyObject *clmg_error_type; /* clmg.ClmgError */

/* Raises ClmgError(message, status) with the library's status name. */
static PyObject *raise_status(clmg_status status, const char *message) {
  const char *name = clmg_status_string(status);
  PyObject *error =
      PyObject_CallFunction(clmg_error_type, "ss", message && message[0] ? message : name, name);
  if (error) {
    PyErr_SetObject(clmg_error_type, error);
    Py_DECREF(error);
  }
  return NULL;
}

/* ---- host arrays through the buffer protocol ---- */

/* A C-contiguous buffer of n elements of `itemsize` bytes whose format's type
 * letter is one of `letters` (NumPy's "d", "i", "l"/"q"). */
static int get_array(PyObject *object, Py_buffer *view, int writable, Py_ssize_t itemsize,
                     const char *letters, Py_ssize_t n, const char *what) {
  int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object, view, flags) < 0)
    return -1;
  const char *format = view->format ? view->format : "B";
  size_t length = strlen(format);
  char letter = length ? format[length - 1] : 'B';
  if (view->itemsize != itemsize || !strchr(letters, letter) ||
      (length > 1 && !strchr("@=<", format[0])) || view->len / itemsize != n) {
    PyErr_Format(PyExc_ValueError,
                 "%s: expected %zd native elements of %zd bytes ('%s'), got format '%s' with "
                 "%zd bytes",
                 what, n, itemsize, letters, format, view->len);
    PyBuffer_Release(view);
    return -1;
  }
  return 0;
}

/* ---- Context ---- */

typedef struct {
  PyObject_HEAD clmg_context *context;
  int busy; /* a call with the GIL released is running on it */
} ContextObject;

static void Context_dealloc(ContextObject *self) {
  clmg_context_destroy(self->context);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Context_init(ContextObject *self, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"device", "cache_dir", "memory_limit", "disable_fp64", NULL};
  const char *device = NULL, *cache_dir = NULL;
  unsigned long long memory_limit = 0;
  int disable_fp64 = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zzKp", keywords, &device, &cache_dir,
                                   &memory_limit, &disable_fp64))
    return -1;
  if (self->context) {
    PyErr_SetString(PyExc_RuntimeError, "Context is already initialised");
    return -1;
  }
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.device = device;
  options.cache_dir = cache_dir;
  options.memory_limit_bytes = memory_limit;
  options.disable_fp64 = disable_fp64;
  clmg_context *context = NULL;
  clmg_status status;
  PyThreadState *released = PyEval_SaveThread();
  status = clmg_context_create(&options, &context);
  PyEval_RestoreThread(released);
  if (status != CLMG_SUCCESS) {
    /* a failed create may hand back a context that carries only the message */
    raise_status(status, clmg_context_message(context));
    clmg_context_destroy(context);
    return -1;
  }
  self->context = context;
  return 0;
}

static int context_ready(ContextObject *self) {
  if (!self->context) {
    PyErr_SetString(PyExc_RuntimeError, "the Context is not initialised");
    return 0;
  }
  if (self->busy) {
    PyErr_SetString(PyExc_RuntimeError,
                    "the clmg context is in use by another thread (one call at a time)");
    return 0;
  }
  return 1;
}

static PyObject *device_dict(const clmg_device_info *d) {
  return Py_BuildValue(
      "{s:I,s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:O,s:O,s:O,s:I,s:K,s:K,s:K,s:n}", "platform_index",
      d->platform_index, "device_index", d->device_index, "platform_name", d->platform_name,
      "platform_version", d->platform_version, "name", d->name, "vendor", d->vendor,
      "driver_version", d->driver_version, "opencl_version", d->opencl_version, "is_gpu",
      d->is_gpu ? Py_True : Py_False, "is_cpu", d->is_cpu ? Py_True : Py_False, "has_fp64",
      d->has_fp64 ? Py_True : Py_False, "compute_units", d->compute_units, "global_mem_bytes",
      (unsigned long long)d->global_mem_bytes, "max_alloc_bytes",
      (unsigned long long)d->max_alloc_bytes, "local_mem_bytes",
      (unsigned long long)d->local_mem_bytes, "max_work_group_size",
      (Py_ssize_t)d->max_work_group_size);
}

static PyObject *Context_device(ContextObject *self, PyObject *Py_UNUSED(ignored)) {
  if (!context_ready(self))
    return NULL;
  return device_dict(clmg_context_device(self->context));
}

static PyObject *Context_message(ContextObject *self, PyObject *Py_UNUSED(ignored)) {
  return PyUnicode_FromString(self->context ? clmg_context_message(self->context) : "");
}

static PyObject *Context_program_seconds(ContextObject *self, PyObject *Py_UNUSED(ignored)) {
  return PyFloat_FromDouble(self->context ? clmg_context_program_seconds(self->context) : 0.0);
}

static PyObject *Context_copy_bandwidth(ContextObject *self, PyObject *Py_UNUSED(ignored)) {
  if (!context_ready(self))
    return NULL;
  double gb_per_s = 0;
  clmg_status status = clmg_measure_copy_bandwidth(self->context, 0, &gb_per_s);
  if (status != CLMG_SUCCESS)
    return raise_status(status, clmg_context_message(self->context));
  return PyFloat_FromDouble(gb_per_s);
}

static PyMethodDef Context_methods[] = {
    {"copy_bandwidth", (PyCFunction)Context_copy_bandwidth, METH_NOARGS,
     "clmg_measure_copy_bandwidth: the device's copy bandwidth in GB/s (read + written)."},
    {"device", (PyCFunction)Context_device, METH_NOARGS, "The device's facts, as a dict."},
    {"message", (PyCFunction)Context_message, METH_NOARGS, "The last failure's message."},
    {"program_seconds", (PyCFunction)Context_program_seconds, METH_NOARGS,
     "Seconds spent compiling kernels or loading them from the cache."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clmg._clmg.Context",
    .tp_basicsize = sizeof(ContextObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Context(device=None, cache_dir=None, memory_limit=0, disable_fp64=False): an "
              "OpenCL device opened by clmg_context_create.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Context_init,
    .tp_dealloc = (destructor)Context_dealloc,
    .tp_methods = Context_methods,
};

/* ---- Solver: clmg_solver_create from an options database ---- */

typedef struct {
  PyObject_HEAD ContextObject *owner; /* keeps the context alive */
  clmg_solver *solver;
  size_t rows;
  /* the multigrid cycle as a preconditioner (one cycle from zero), made
   * on first use, with its two device vectors in the hierarchy's precision */
  clmg_preconditioner preconditioner;
  clmg_vector *r, *z;
  /* the solve's b, x and residual in the solver's precision, made on the
   * first solve and kept for the next ones */
  clmg_vector *solve_b, *solve_x, *solve_r;
  /* a finite-element problem's solver (poisson_multigrid): the problem owns
   * solver; NULL for clmg_solver_create's */
  clmg_fe_poisson *problem;
} SolverObject;

static void Solver_dealloc(SolverObject *self) {
  clmg_vector_destroy(self->solve_r);
  clmg_vector_destroy(self->solve_x);
  clmg_vector_destroy(self->solve_b);
  clmg_vector_destroy(self->z);
  clmg_vector_destroy(self->r);
  clmg_preconditioner_destroy(&self->preconditioner);
  if (self->problem)
    clmg_fe_poisson_destroy(self->problem);
  else
    clmg_solver_destroy(self->solver);
  Py_XDECREF(self->owner);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Fills an options database from text ("key=value ...", may be NULL) and
 * then (key, value) string pairs, in order; raises on the first refusal. */
static clmg_options *make_options(const char *text, PyObject *pairs) {
  clmg_error error = {{0}};
  clmg_options *options = NULL;
  clmg_status status = clmg_options_create(&options, &error);
  if (status == CLMG_SUCCESS && text && text[0])
    status = clmg_options_parse(options, text, &error);
  PyObject *sequence = NULL;
  if (status == CLMG_SUCCESS && pairs != Py_None) {
    sequence = PySequence_Fast(pairs, "options must be a sequence of (key, value) pairs");
    if (!sequence) {
      clmg_options_destroy(options);
      return NULL;
    }
    for (Py_ssize_t i = 0; status == CLMG_SUCCESS && i < PySequence_Fast_GET_SIZE(sequence); i++) {
      const char *key = NULL, *value = NULL;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(sequence, i), "ss;an option is (key, value)",
                            &key, &value)) {
        Py_DECREF(sequence);
        clmg_options_destroy(options);
        return NULL;
      }
      status = clmg_options_set(options, key, value, &error);
    }
  }
  Py_XDECREF(sequence);
  if (status != CLMG_SUCCESS) {
    clmg_options_destroy(options);
    raise_status(status, error.message);
    return NULL;
  }
  return options;
}

static int Solver_init(SolverObject *self, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"context", "rows", "indptr",  "indices",
                             "data",    "text", "options", NULL};
  ContextObject *owner = NULL;
  Py_ssize_t rows = 0;
  PyObject *indptr = NULL, *indices = NULL, *data = NULL, *pairs = Py_None;
  const char *text = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!nOOO|zO", keywords, &ContextType, &owner, &rows,
                                   &indptr, &indices, &data, &text, &pairs))
    return -1;
  if (self->solver) {
    PyErr_SetString(PyExc_RuntimeError, "Solver is already initialised");
    return -1;
  }
  if (!context_ready(owner))
    return -1;
  if (rows <= 0 || (uint64_t)rows > INT32_MAX) {
    PyErr_Format(PyExc_ValueError, "the matrix needs 1 to %d rows, not %zd", INT32_MAX, rows);
    return -1;
  }
  Py_buffer ptr_view, col_view, val_view;
  if (get_array(indptr, &ptr_view, 0, 8, "lq", rows + 1, "indptr (int64)") < 0)
    return -1;
  const int64_t *row_ptr = ptr_view.buf;
  Py_ssize_t nnz = (Py_ssize_t)row_ptr[rows];
  if (row_ptr[0] != 0 || row_ptr[rows] < 0) {
    PyErr_SetString(PyExc_ValueError, "indptr must start at 0 and end at the number of entries");
    PyBuffer_Release(&ptr_view);
    return -1;
  }
  if (get_array(indices, &col_view, 0, 4, "i", nnz, "indices (int32)") < 0) {
    PyBuffer_Release(&ptr_view);
    return -1;
  }
  if (get_array(data, &val_view, 0, 8, "d", nnz, "data (float64)") < 0) {
    PyBuffer_Release(&col_view);
    PyBuffer_Release(&ptr_view);
    return -1;
  }
  /* clmg_csr's contract, which C callers keep and Python's bytes need not:
   * row offsets that never decrease, columns in range, sorted and unique
   * within each row */
  const int32_t *col = col_view.buf;
  for (Py_ssize_t i = 0; i < rows && !PyErr_Occurred(); i++)
    if (row_ptr[i + 1] < row_ptr[i])
      PyErr_Format(PyExc_ValueError, "indptr decreases at row %zd", i);
  for (Py_ssize_t i = 0; i < rows && !PyErr_Occurred(); i++) {
    for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
      if (col[k] < 0 || col[k] >= rows || (k > row_ptr[i] && col[k] <= col[k - 1])) {
        PyErr_Format(PyExc_ValueError,
                     "row %zd: column %d is out of range or not sorted and unique (the matrix "
                     "has %zd columns)",
                     i, (int)col[k], rows);
        break;
      }
    }
  }
  clmg_options *options = PyErr_Occurred() ? NULL : make_options(text, pairs);
  clmg_solver *solver = NULL;
  clmg_status status = CLMG_SUCCESS;
  if (options) {
    /* borrowed: clmg_solver_create only reads the host matrix */
    clmg_csr a = {(size_t)rows, (size_t)rows, (int64_t *)ptr_view.buf, (int32_t *)col_view.buf,
                  (double *)val_view.buf};
    owner->busy = 1;
    PyThreadState *released = PyEval_SaveThread();
    status = clmg_solver_create(owner->context, &a, options, &solver);
    PyEval_RestoreThread(released);
    owner->busy = 0;
    clmg_options_destroy(options);
    if (status != CLMG_SUCCESS) {
      raise_status(status, clmg_context_message(owner->context));
      clmg_solver_destroy(solver);
      solver = NULL;
    }
  }
  PyBuffer_Release(&val_view);
  PyBuffer_Release(&col_view);
  PyBuffer_Release(&ptr_view);
  if (!solver)
    return -1;
  Py_INCREF(owner);
  self->owner = owner;
  self->solver = solver;
  self->rows = (size_t)rows;
  return 0;
}

static int solver_ready(SolverObject *self) {
  if (!self->solver) {
    PyErr_SetString(PyExc_RuntimeError, "the Solver is not initialised");
    return 0;
  }
  return context_ready(self->owner);
}

/* The monitor: the caller's callable (may be NULL) per iteration, and
 * Ctrl-C; an exception stops the solve and is raised after it. */
typedef struct {
  PyObject *callable;
  PyObject *type, *value, *traceback;
  int failed;
} monitor_state;

static int monitor_call(void *data, int iteration, double relative_residual) {
  monitor_state *m = data;
  PyGILState_STATE gil = PyGILState_Ensure();
  int stop = 0;
  if (m->callable) {
    PyObject *answer = PyObject_CallFunction(m->callable, "id", iteration, relative_residual);
    if (!answer)
      stop = -1;
    else {
      stop = PyObject_IsTrue(answer);
      Py_DECREF(answer);
    }
  }
  if (stop == 0 && PyErr_CheckSignals() < 0)
    stop = -1;
  if (stop < 0) {
    m->failed = 1;
#if PY_VERSION_HEX >= 0x030C0000
    m->value = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&m->type, &m->value, &m->traceback);
#endif
  }
  PyGILState_Release(gil);
  return stop != 0;
}

/* clmg_solver_solve_host's work on the solver's kept device vectors, and
 * then, for a double-precision solver, the true residual ||b - A x|| and
 * ||b|| on the device (one product and two norms there, in place of a
 * product on the host); NaN for a float one, whose device residual would
 * carry float's rounding. message gets the solve's failure. */
static clmg_status solve_kept(SolverObject *self, const double *b, double *x,
                              clmg_krylov_result *result, double *true_residual, double *b_norm,
                              char *message, size_t message_size) {
  clmg_context *context = self->owner->context;
  clmg_dtype precision = clmg_solver_precision(self->solver);
  *true_residual = *b_norm = NAN;
  clmg_status status = CLMG_SUCCESS;
  if (!self->solve_b)
    status = clmg_vector_create(context, precision, self->rows, &self->solve_b);
  if (status == CLMG_SUCCESS && !self->solve_x)
    status = clmg_vector_create(context, precision, self->rows, &self->solve_x);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(self->solve_b, b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(self->solve_x, x);
  if (status != CLMG_SUCCESS) {
    snprintf(message, message_size, "%s", clmg_context_message(context));
    return status;
  }
  clmg_status solved = clmg_solver_solve(self->solver, self->solve_b, self->solve_x, result);
  snprintf(message, message_size, "%s", clmg_context_message(context));
  if (solved != CLMG_SUCCESS && solved != CLMG_ERROR_NOT_CONVERGED)
    return solved;
  /* the last iterate of an unfinished solve is still the best there is */
  status = clmg_vector_download_doubles(self->solve_x, x);
  if (status == CLMG_SUCCESS && precision == CLMG_DOUBLE) {
    if (!self->solve_r)
      status = clmg_vector_create(context, precision, self->rows, &self->solve_r);
    double r = NAN, bb = NAN;
    if (status == CLMG_SUCCESS)
      status = clmg_operator_defect(clmg_solver_operator(self->solver), self->solve_b,
                                    self->solve_x, self->solve_r);
    if (status == CLMG_SUCCESS)
      status = clmg_nrm2(self->solve_r, &r);
    if (status == CLMG_SUCCESS)
      status = clmg_nrm2(self->solve_b, &bb);
    if (status == CLMG_SUCCESS) {
      *true_residual = r;
      *b_norm = bb;
    }
  }
  if (status != CLMG_SUCCESS) {
    snprintf(message, message_size, "%s", clmg_context_message(context));
    return status;
  }
  return solved;
}

static PyObject *Solver_solve(SolverObject *self, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"b", "x", "monitor", NULL};
  PyObject *b = NULL, *x = NULL, *callable = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O", keywords, &b, &x, &callable))
    return NULL;
  if (!solver_ready(self))
    return NULL;
  if (callable != Py_None && !PyCallable_Check(callable)) {
    PyErr_SetString(PyExc_TypeError, "monitor must be callable(iteration, relative_residual)");
    return NULL;
  }
  Py_buffer b_view, x_view;
  if (get_array(b, &b_view, 0, 8, "d", (Py_ssize_t)self->rows, "b (float64)") < 0)
    return NULL;
  if (get_array(x, &x_view, 1, 8, "d", (Py_ssize_t)self->rows, "x (float64)") < 0) {
    PyBuffer_Release(&b_view);
    return NULL;
  }
  monitor_state monitor = {callable == Py_None ? NULL : callable, NULL, NULL, NULL, 0};
  clmg_solver_set_monitor(self->solver, monitor_call, &monitor);
  clmg_krylov_result result = {0};
  clmg_status status;
  self->owner->busy = 1;
  PyThreadState *released = PyEval_SaveThread();
  double true_residual = NAN, b_norm = NAN;
  char message[1024] = "";
  status = solve_kept(self, b_view.buf, x_view.buf, &result, &true_residual, &b_norm, message,
                      sizeof message);
  PyEval_RestoreThread(released);
  self->owner->busy = 0;
  clmg_solver_set_monitor(self->solver, NULL, NULL);
  PyBuffer_Release(&x_view);
  PyBuffer_Release(&b_view);
  if (monitor.failed) {
    clmg_krylov_result_free(&result);
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(monitor.value);
#else
    PyErr_Restore(monitor.type, monitor.value, monitor.traceback);
#endif
    return NULL;
  }
  if (status != CLMG_SUCCESS && status != CLMG_ERROR_NOT_CONVERGED) {
    clmg_krylov_result_free(&result);
    return raise_status(status, message);
  }
  PyObject *history = PyList_New((Py_ssize_t)result.history_length);
  for (size_t i = 0; history && i < result.history_length; i++) {
    PyObject *value = PyFloat_FromDouble(result.history[i]);
    if (!value) {
      Py_CLEAR(history);
      break;
    }
    PyList_SET_ITEM(history, (Py_ssize_t)i, value);
  }
  clmg_krylov_result_free(&result);
  if (!history)
    return NULL;
  return Py_BuildValue("{s:i,s:O,s:d,s:d,s:d,s:N,s:s,s:s,s:d,s:d}", "iterations", result.iterations,
                       "converged", status == CLMG_SUCCESS ? Py_True : Py_False, "initial_residual",
                       result.initial_residual, "final_residual", result.final_residual,
                       "relative_residual", result.relative_residual, "history", history, "status",
                       clmg_status_string(status), "message", status == CLMG_SUCCESS ? "" : message,
                       "true_residual", true_residual, "b_norm", b_norm);
}

/* z = M^-1 r: one cycle of the solver's multigrid hierarchy from zero, on
 * the hierarchy's device vectors (the hierarchy stays on the device; r is
 * uploaded and z downloaded, as a host caller such as SciPy needs). */
static PyObject *Solver_precondition(SolverObject *self, PyObject *args) {
  PyObject *r = NULL, *z = NULL;
  if (!PyArg_ParseTuple(args, "OO", &r, &z) || !solver_ready(self))
    return NULL;
  clmg_multigrid *multigrid = clmg_solver_multigrid(self->solver);
  if (!multigrid) {
    PyErr_SetString(PyExc_TypeError, "this solver has no multigrid hierarchy to apply "
                                     "(precond is not amg or multigrid)");
    return NULL;
  }
  clmg_context *context = self->owner->context;
  clmg_status status = CLMG_SUCCESS;
  if (!self->preconditioner.apply) {
    const clmg_matrix *finest =
        clmg_multigrid_matrix(multigrid, clmg_multigrid_levels(multigrid) - 1);
    clmg_dtype type = finest ? clmg_matrix_precision(finest) : clmg_solver_precision(self->solver);
    status = clmg_vector_create(context, type, self->rows, &self->r);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, type, self->rows, &self->z);
    if (status == CLMG_SUCCESS)
      status = clmg_multigrid_preconditioner(multigrid, &self->preconditioner);
    if (status != CLMG_SUCCESS) {
      raise_status(status, clmg_context_message(context));
      clmg_vector_destroy(self->z);
      clmg_vector_destroy(self->r);
      self->z = self->r = NULL;
      clmg_preconditioner_destroy(&self->preconditioner);
      return NULL;
    }
  }
  Py_buffer r_view, z_view;
  if (get_array(r, &r_view, 0, 8, "d", (Py_ssize_t)self->rows, "r (float64)") < 0)
    return NULL;
  if (get_array(z, &z_view, 1, 8, "d", (Py_ssize_t)self->rows, "z (float64)") < 0) {
    PyBuffer_Release(&r_view);
    return NULL;
  }
  self->owner->busy = 1;
  PyThreadState *released = PyEval_SaveThread();
  status = clmg_vector_upload_doubles(self->r, r_view.buf);
  if (status == CLMG_SUCCESS)
    status = self->preconditioner.apply(self->preconditioner.data, self->r, self->z);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download_doubles(self->z, z_view.buf);
  PyEval_RestoreThread(released);
  self->owner->busy = 0;
  PyBuffer_Release(&z_view);
  PyBuffer_Release(&r_view);
  if (status != CLMG_SUCCESS)
    return raise_status(status, clmg_context_message(context));
  Py_RETURN_NONE;
}

/* A malloc'ed string from the library as a Python str (NULL: out of memory). */
static PyObject *take_string(char *text) {
  if (!text)
    return PyErr_NoMemory();
  PyObject *result = PyUnicode_FromString(text);
  free(text);
  return result;
}

/* set_limits(tol, maxit): clmg_solver_set_limits for the next solves. */
static PyObject *Solver_set_limits(SolverObject *self, PyObject *args) {
  double tolerance = 0;
  int max_iterations = 0;
  if (!PyArg_ParseTuple(args, "di", &tolerance, &max_iterations) || !solver_ready(self))
    return NULL;
  clmg_status status = clmg_solver_set_limits(self->solver, tolerance, max_iterations);
  if (status == CLMG_ERROR_INVALID_ARGUMENT) {
    PyErr_SetString(PyExc_ValueError, clmg_context_message(self->owner->context));
    return NULL;
  }
  if (status != CLMG_SUCCESS)
    return raise_status(status, clmg_context_message(self->owner->context));
  Py_RETURN_NONE;
}

static PyObject *Solver_view(SolverObject *self, PyObject *Py_UNUSED(ignored)) {
  return solver_ready(self) ? take_string(clmg_solver_view(self->solver)) : NULL;
}

static PyObject *Solver_view_json(SolverObject *self, PyObject *Py_UNUSED(ignored)) {
  return solver_ready(self) ? take_string(clmg_solver_view_json(self->solver)) : NULL;
}

static PyObject *Solver_times(SolverObject *self, PyObject *Py_UNUSED(ignored)) {
  if (!solver_ready(self))
    return NULL;
  return Py_BuildValue("{s:d,s:d}", "setup", clmg_solver_setup_seconds(self->solver), "compile",
                       clmg_solver_compile_seconds(self->solver));
}

static PyObject *Solver_describe(SolverObject *self, PyObject *Py_UNUSED(ignored)) {
  if (!solver_ready(self))
    return NULL;
  clmg_multigrid *multigrid = clmg_solver_multigrid(self->solver);
  return Py_BuildValue("{s:n,s:s,s:s,s:s,s:i,s:s}", "rows", (Py_ssize_t)self->rows, "method",
                       clmg_krylov_method_name(clmg_solver_method(self->solver)), "precision",
                       clmg_dtype_name(clmg_solver_precision(self->solver)), "precond",
                       clmg_options_get(clmg_solver_options(self->solver), "precond"), "levels",
                       multigrid ? clmg_multigrid_levels(multigrid) : 0, "unused_options",
                       clmg_solver_unused_options(self->solver));
}

static PyMethodDef Solver_methods[] = {
    {"solve", (PyCFunction)(void (*)(void))Solver_solve, METH_VARARGS | METH_KEYWORDS,
     "solve(b, x, monitor=None) -> dict: x (float64, writable) holds the initial guess and gets "
     "the solution."},
    {"precondition", (PyCFunction)Solver_precondition, METH_VARARGS,
     "precondition(r, z): z = one multigrid cycle from zero applied to r."},
    {"set_limits", (PyCFunction)Solver_set_limits, METH_VARARGS,
     "set_limits(tol, maxit): clmg_solver_set_limits for the next solves."},
    {"view", (PyCFunction)Solver_view, METH_NOARGS, "clmg_solver_view as text."},
    {"view_json", (PyCFunction)Solver_view_json, METH_NOARGS, "clmg_solver_view_json."},
    {"times", (PyCFunction)Solver_times, METH_NOARGS, "Setup and compile seconds."},
    {"describe", (PyCFunction)Solver_describe, METH_NOARGS,
     "Rows, method, precision, precond, levels, unused options."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject SolverType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clmg._clmg.Solver",
    .tp_basicsize = sizeof(SolverObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Solver(context, rows, indptr, indices, data, text=None, options=None): "
              "clmg_solver_create on a CSR matrix (int64 indptr, int32 indices, float64 data).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Solver_init,
    .tp_dealloc = (destructor)Solver_dealloc,
    .tp_methods = Solver_methods,
};

/* ---- Mesh: a clmg_mesh owned by Python ---- */

typedef struct {
  PyObject_HEAD clmg_mesh mesh;
} MeshObject;

static void Mesh_dealloc(MeshObject *self) {
  clmg_mesh_free(&self->mesh);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject MeshType;

/* A new Mesh that takes *mesh over (zeroing it); frees it on failure. */
static PyObject *mesh_take(clmg_mesh *mesh) {
  MeshObject *object = PyObject_New(MeshObject, &MeshType);
  if (!object) {
    clmg_mesh_free(mesh);
    return NULL;
  }
  object->mesh = *mesh;
  memset(mesh, 0, sizeof *mesh);
  return (PyObject *)object;
}

/* A new Mesh holding a copy of *mesh. */
static PyObject *mesh_copy(const clmg_mesh *mesh) {
  clmg_mesh copy = {0};
  clmg_error error = {{0}};
  clmg_status status = clmg_mesh_copy(mesh, &copy, &error);
  if (status != CLMG_SUCCESS)
    return raise_status(status, error.message);
  return mesh_take(&copy);
}

static PyObject *bytes_of(const void *data, size_t bytes) {
  return PyBytes_FromStringAndSize(data ? (const char *)data : "", (Py_ssize_t)(data ? bytes : 0));
}

/* arrays() -> dict: dim, simplex, coords (float64 vertices x dim), cells
 * (int32 cells x per_cell, clmg's local order), material (int32 or None),
 * boundary_faces (int32 faces x per_face) and boundary_tags (int32). */
static PyObject *Mesh_arrays(MeshObject *self, PyObject *Py_UNUSED(ignored)) {
  const clmg_mesh *m = &self->mesh;
  size_t per_cell = clmg_mesh_vertices_per_cell(m), per_face = clmg_mesh_vertices_per_face(m);
  PyObject *material = m->cell_material ? bytes_of(m->cell_material, m->num_cells * sizeof(int32_t))
                                        : (Py_INCREF(Py_None), Py_None);
  if (!material)
    return NULL;
  return Py_BuildValue(
      "{s:i,s:O,s:n,s:n,s:n,s:n,s:N,s:N,s:N,s:N,s:N}", "dim", m->dim, "simplex",
      m->cell_type == CLMG_CELL_SIMPLEX ? Py_True : Py_False, "vertices",
      (Py_ssize_t)m->num_vertices, "cells_count", (Py_ssize_t)m->num_cells, "per_cell",
      (Py_ssize_t)per_cell, "per_face", (Py_ssize_t)per_face, "coords",
      bytes_of(m->coords, m->num_vertices * (size_t)m->dim * sizeof(double)), "cells",
      bytes_of(m->cells, m->num_cells * per_cell * sizeof(int32_t)), "material", material,
      "boundary_faces",
      bytes_of(m->boundary_faces, m->num_boundary_faces * per_face * sizeof(int32_t)),
      "boundary_tags", bytes_of(m->boundary_face_tag, m->num_boundary_faces * sizeof(int32_t)));
}

/* nodes(degree) -> dict: the Lagrange nodes of clmg_mesh_lagrange_nodes:
 * count, per_cell, cell_nodes (int32, clmg's tensor or simplex order),
 * coords (float64 nodes x dim). */
static PyObject *Mesh_nodes(MeshObject *self, PyObject *args) {
  int degree = 1;
  if (!PyArg_ParseTuple(args, "i", &degree))
    return NULL;
  int32_t *cell_nodes = NULL;
  double *coords = NULL;
  size_t count = 0;
  clmg_error error = {{0}};
  clmg_status status =
      clmg_mesh_lagrange_nodes(&self->mesh, degree, &cell_nodes, &count, &coords, NULL, &error);
  if (status != CLMG_SUCCESS)
    return raise_status(status, error.message);
  const clmg_mesh *m = &self->mesh;
  size_t per_cell =
      m->cell_type == CLMG_CELL_SIMPLEX
          ? (degree == 1 ? (size_t)m->dim + 1 : (m->dim == 2 ? 6u : 10u))
          : (m->dim == 2 ? (size_t)(degree + 1) * (size_t)(degree + 1)
                         : (size_t)(degree + 1) * (size_t)(degree + 1) * (size_t)(degree + 1));
  PyObject *result = Py_BuildValue(
      "{s:n,s:n,s:N,s:N}", "count", (Py_ssize_t)count, "per_cell", (Py_ssize_t)per_cell,
      "cell_nodes", bytes_of(cell_nodes, m->num_cells * per_cell * sizeof(int32_t)), "coords",
      bytes_of(coords, count * (size_t)m->dim * sizeof(double)));
  free(cell_nodes);
  free(coords);
  return result;
}

/* write_vtu(path, degree, fields, ascii): clmg_mesh_write_vtu_fields with
 * fields a sequence of (name, float64 buffer, components, on_cells). */
static PyObject *Mesh_write_vtu(MeshObject *self, PyObject *args) {
  const char *path = NULL;
  int degree = 1, ascii = 0;
  PyObject *fields = NULL;
  if (!PyArg_ParseTuple(args, "siOp", &path, &degree, &fields, &ascii))
    return NULL;
  PyObject *sequence = PySequence_Fast(fields, "fields must be a sequence");
  if (!sequence)
    return NULL;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  clmg_vtu_field *list = calloc((size_t)count + 1, sizeof *list);
  Py_buffer *views = calloc((size_t)count + 1, sizeof *views);
  Py_ssize_t held = 0;
  PyObject *result = NULL;
  if (!list || !views) {
    PyErr_NoMemory();
    goto done;
  }
  for (; held < count; held++) {
    const char *name = NULL;
    PyObject *values = NULL;
    int components = 0, on_cells = 0;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(sequence, held),
                          "sOip;a field is (name, values, components, on_cells)", &name, &values,
                          &components, &on_cells))
      goto done;
    if (PyObject_GetBuffer(values, &views[held], PyBUF_C_CONTIGUOUS) < 0)
      goto done;
    list[held] = (clmg_vtu_field){name, views[held].buf, components, on_cells};
    /* the library reads one value (or `components`) per node or cell */
    if (views[held].len % (Py_ssize_t)sizeof(double) != 0) {
      held++;
      PyErr_Format(PyExc_ValueError, "field '%s' is not an array of doubles", name);
      goto done;
    }
  }
  clmg_error error = {{0}};
  clmg_status status = clmg_mesh_write_vtu_fields(path, &self->mesh, degree, list, (size_t)count,
                                                  ascii ? CLMG_VTU_ASCII : CLMG_VTU_BINARY, &error);
  if (status != CLMG_SUCCESS)
    raise_status(status, error.message);
  else
    result = (Py_INCREF(Py_None), Py_None);
done:
  for (Py_ssize_t i = 0; views && i < held; i++)
    PyBuffer_Release(&views[i]);
  free(views);
  free(list);
  Py_DECREF(sequence);
  return result;
}

static PyMethodDef Mesh_methods[] = {
    {"arrays", (PyCFunction)Mesh_arrays, METH_NOARGS, "The mesh's arrays as bytes."},
    {"nodes", (PyCFunction)Mesh_nodes, METH_VARARGS,
     "nodes(degree): the Lagrange nodes (clmg_mesh_lagrange_nodes)."},
    {"write_vtu", (PyCFunction)Mesh_write_vtu, METH_VARARGS,
     "write_vtu(path, degree, fields, ascii): clmg_mesh_write_vtu_fields."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject MeshType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clmg._clmg.Mesh",
    .tp_basicsize = sizeof(MeshObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A clmg mesh (made by make_mesh, poisson or helmholtz_system).",
    .tp_dealloc = (destructor)Mesh_dealloc,
    .tp_methods = Mesh_methods,
};

/* make_mesh(kind, level, path): a generated or read coarse mesh. kind:
 * circle, blood, pipe, box2d, box3d, regular, blobs, blobs2d, cavity, dfg,
 * canopy, gmsh (path). level: regular/blobs/blobs2d's level, cavity's and
 * box's cells per side. */
static PyObject *module_make_mesh(PyObject *Py_UNUSED(module), PyObject *args) {
  const char *kind = NULL, *path = NULL;
  int level = 0;
  if (!PyArg_ParseTuple(args, "si|z", &kind, &level, &path))
    return NULL;
  clmg_mesh mesh = {0};
  clmg_error error = {{0}};
  clmg_status status;
  if (strcmp(kind, "circle") == 0)
    status = clmg_mesh_circle(&mesh, &error);
  else if (strcmp(kind, "blood") == 0)
    status = clmg_mesh_blood(&mesh, &error);
  else if (strcmp(kind, "pipe") == 0)
    status = clmg_mesh_pipe(&mesh, &error);
  else if (strcmp(kind, "box2d") == 0 || strcmp(kind, "box3d") == 0)
    status = clmg_mesh_box(kind[3] - '0', level, 0.0, 1, &mesh, &error);
  else if (strcmp(kind, "regular") == 0)
    status = clmg_mesh_regular_tetrahedra(level, &mesh, &error);
  else if (strcmp(kind, "blobs") == 0 || strcmp(kind, "blobs2d") == 0)
    status = clmg_mesh_blobs(kind[5] ? 2 : 3, level, &mesh, &error);
  else if (strcmp(kind, "cavity") == 0)
    status = clmg_mesh_cavity(level, &mesh, &error);
  else if (strcmp(kind, "dfg") == 0)
    status = clmg_mesh_dfg_channel(&mesh, &error);
  else if (strcmp(kind, "canopy") == 0)
    status = clmg_mesh_canopy(&mesh, &error);
  else if (strcmp(kind, "gmsh") == 0 && path) {
    PyThreadState *released = PyEval_SaveThread();
    status = clmg_mesh_read_gmsh(path, &mesh, &error);
    PyEval_RestoreThread(released);
  } else {
    PyErr_Format(PyExc_ValueError, "unknown mesh kind '%s'", kind);
    return NULL;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_mesh_check(&mesh, &error);
  if (status != CLMG_SUCCESS) {
    clmg_mesh_free(&mesh);
    return raise_status(status, error.message);
  }
  return mesh_take(&mesh);
}

/* ---- finite-element problems ---- */

static double seconds_now(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* a dict of the solve's result (the keys of Solver.solve's) */
static PyObject *result_dict(const clmg_krylov_result *result, clmg_status status,
                             const char *message) {
  PyObject *history = PyList_New((Py_ssize_t)result->history_length);
  for (size_t i = 0; history && i < result->history_length; i++) {
    PyObject *value = PyFloat_FromDouble(result->history[i]);
    if (!value) {
      Py_CLEAR(history);
      break;
    }
    PyList_SET_ITEM(history, (Py_ssize_t)i, value);
  }
  if (!history)
    return NULL;
  return Py_BuildValue("{s:i,s:O,s:d,s:d,s:d,s:N,s:s,s:s}", "iterations", result->iterations,
                       "converged", status == CLMG_SUCCESS ? Py_True : Py_False, "initial_residual",
                       result->initial_residual, "final_residual", result->final_residual,
                       "relative_residual", result->relative_residual, "history", history, "status",
                       clmg_status_string(status), "message",
                       status == CLMG_SUCCESS ? "" : message);
}

/* The CSR arrays of a host matrix as a dict of bytes. */
static PyObject *csr_dict(const clmg_csr *a) {
  size_t nnz = clmg_csr_nnz(a);
  return Py_BuildValue("{s:n,s:N,s:N,s:N}", "rows", (Py_ssize_t)a->rows, "indptr",
                       bytes_of(a->row_ptr, (a->rows + 1) * sizeof(int64_t)), "indices",
                       bytes_of(a->col, nnz * sizeof(int32_t)), "data",
                       bytes_of(a->val, nnz * sizeof(double)));
}

/* A failure of clmg_fe_poisson_*: the options' krylov and mixed-precision
 * conflicts and device assembly of another numbering are bad arguments
 * (ValueError), the rest ClmgError with the library's status. */
static PyObject *raise_poisson(clmg_status status, const char *step, const char *message) {
  if (status == CLMG_ERROR_INVALID_ARGUMENT &&
      (strncmp(message, "krylov=", 7) == 0 || strncmp(message, "precision=mixed", 15) == 0 ||
       strstr(message, "2lv numbering only"))) {
    PyErr_SetString(PyExc_ValueError, message);
    return NULL;
  }
  char text[2048];
  snprintf(text, sizeof text, "%s: %s", step, message);
  return raise_status(status, text);
}

/* A Poisson spec from poisson()'s and poisson_multigrid()'s arguments;
 * -1 with an exception set on a bad one. */
static int poisson_spec(clmg_fe_poisson_spec *spec, MeshObject *coarse, int level, int degree,
                        const char *problem_name, const char *numbering_name,
                        unsigned long long seed, int on_device, Py_ssize_t coarse_rows,
                        int want_matrix) {
  clmg_fe_poisson_spec_defaults(spec);
  spec->coarse = &coarse->mesh;
  spec->level = level;
  spec->degree = degree;
  spec->seed = seed;
  spec->assembly = on_device ? CLMG_FE_ASSEMBLY_DEVICE : CLMG_FE_ASSEMBLY_HOST;
  spec->keep_matrix = want_matrix;
  if (!clmg_numbering_parse(numbering_name, &spec->numbering)) {
    PyErr_Format(PyExc_ValueError, "unknown numbering '%s' (there are: 2lv, cm, xyz, sto, hie)",
                 numbering_name);
    return -1;
  }
  if (coarse_rows < 0) {
    PyErr_SetString(PyExc_ValueError, "coarse_rows must be >= 0");
    return -1;
  }
  spec->coarse_max_rows = (size_t)coarse_rows;
  if (strcmp(problem_name, "circle") == 0)
    clmg_poisson_problem_circle(&spec->problem);
  else if (strcmp(problem_name, "blood") == 0) {
    clmg_poisson_problem_blood(&spec->problem);
    spec->paper_smoothing = 1;
  } else if (strcmp(problem_name, "unit") == 0)
    clmg_poisson_problem_unit_source(&spec->problem);
  else {
    PyErr_Format(PyExc_ValueError, "unknown problem '%s' (circle, blood, unit)", problem_name);
    return -1;
  }
  return 0;
}

/* poisson(context, coarse, level, degree, problem, numbering, seed,
 * on_device, coarse_rows, text, pairs, want_matrix, monitor) -> dict: the
 * run of clmg/fe_solve.h's stages. The problem: "circle", "blood" or
 * "unit" (f = 1, u = 0 on the boundary). */
static PyObject *module_poisson(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"context",   "coarse",      "level",     "degree",      "problem",
                             "numbering", "seed",        "on_device", "coarse_rows", "text",
                             "options",   "want_matrix", "monitor",   NULL};
  ContextObject *owner = NULL;
  MeshObject *coarse = NULL;
  int level = 1, degree = 1, on_device = 1, want_matrix = 0;
  const char *problem_name = NULL, *numbering_name = NULL, *text = NULL;
  unsigned long long seed = 1;
  Py_ssize_t coarse_rows = 0;
  PyObject *pairs = Py_None, *callable = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!iissKpnzOpO", keywords, &ContextType, &owner,
                                   &MeshType, &coarse, &level, &degree, &problem_name,
                                   &numbering_name, &seed, &on_device, &coarse_rows, &text, &pairs,
                                   &want_matrix, &callable))
    return NULL;
  if (!context_ready(owner))
    return NULL;
  clmg_fe_poisson_spec spec;
  if (poisson_spec(&spec, coarse, level, degree, problem_name, numbering_name, seed, on_device,
                   coarse_rows, want_matrix) < 0)
    return NULL;
  if (callable != Py_None && !PyCallable_Check(callable)) {
    PyErr_SetString(PyExc_TypeError, "monitor must be callable(iteration, relative_residual)");
    return NULL;
  }
  clmg_context *context = owner->context;
  clmg_options *options = make_options(text, pairs);
  if (!options)
    return NULL;
  clmg_fe_poisson *problem = NULL;
  clmg_fe_poisson_result r;
  memset(&r, 0, sizeof r);
  double fetch_s = 0;
  const char *step = "building the hierarchy";
  monitor_state monitor = {callable == Py_None ? NULL : callable, NULL, NULL, NULL, 0};
  owner->busy = 1;
  PyThreadState *released = PyEval_SaveThread();
  clmg_status status = clmg_fe_poisson_create(context, &spec, options, &problem);
  if (status == CLMG_SUCCESS) {
    step = "setting up the multigrid and the solver";
    status = clmg_fe_poisson_setup(problem);
  }
  if (status == CLMG_SUCCESS) {
    step = "solving";
    status = clmg_fe_poisson_solve(problem, monitor_call, &monitor, &r);
    if (status == CLMG_ERROR_NOT_CONVERGED)
      status = CLMG_SUCCESS; /* the result says so */
  }
  if (status == CLMG_SUCCESS) {
    step = "reading back the solution";
    double start = seconds_now();
    status = clmg_fe_poisson_fetch(problem, &r);
    fetch_s = seconds_now() - start;
  }
  PyEval_RestoreThread(released);
  owner->busy = 0;
  clmg_options_destroy(options);
  PyObject *out = NULL;
  if (monitor.failed) {
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(monitor.value);
#else
    PyErr_Restore(monitor.type, monitor.value, monitor.traceback);
#endif
    goto done;
  }
  if (status != CLMG_SUCCESS) {
    raise_poisson(status, step, clmg_context_message(context));
    goto done;
  }
  size_t n = r.n;
  PyObject *mesh = mesh_copy(&r.mesh);
  PyObject *result = mesh ? result_dict(&r.solve, r.status, r.message) : NULL;
  PyObject *matrix = NULL;
  if (result && want_matrix) {
    matrix = csr_dict(&r.matrix);
    if (matrix && r.perm) { /* the host numbering: perm[new] = old */
      PyObject *perm = bytes_of(r.perm, n * sizeof(int32_t));
      if (!perm || PyDict_SetItemString(matrix, "perm", perm) < 0)
        Py_CLEAR(matrix);
      Py_XDECREF(perm);
    }
  } else if (result) {
    matrix = (Py_INCREF(Py_None), Py_None);
  }
  clmg_solver *solver = clmg_fe_poisson_solver(problem);
  char *view = matrix ? clmg_solver_view_json(solver) : NULL;
  char *resolved = view ? clmg_options_to_json(clmg_solver_options(solver), 1) : NULL;
  if (resolved)
    out =
        Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:n,s:n,s:i,s:n,s:s,s:s,s:d,s:d,s:d,s:d}", "mesh", mesh,
                      "result", result, "matrix", matrix, "u", bytes_of(r.u, n * sizeof(double)),
                      "b", bytes_of(r.b, n * sizeof(double)), "unknowns", (Py_ssize_t)n, "nonzeros",
                      (Py_ssize_t)r.info.nonzeros, "levels", r.info.levels, "coarse_unknowns",
                      (Py_ssize_t)r.info.coarse_unknowns, "view", view, "options", resolved,
                      "assembly_s", r.info.assembly_s + r.info.upload_s, "kernels_s",
                      r.info.kernels_s, "solve_s", r.solve_s, "fetch_s", fetch_s);
  else {
    Py_XDECREF(mesh);
    Py_XDECREF(result);
    Py_XDECREF(matrix);
    if (!PyErr_Occurred())
      PyErr_NoMemory();
  }
  free(view);
  free(resolved);
done:
  clmg_fe_poisson_result_free(&r);
  clmg_fe_poisson_destroy(problem);
  return out;
}

/* poisson_multigrid(context, coarse, level, degree, problem, numbering, seed,
 * on_device, coarse_rows, text, options) -> (Solver, dict): clmg/fe_solve.h's
 * create and setup stages (no solve), the problem's multigrid and solver as
 * a Solver (its precondition() is one cycle of the geometric hierarchy, its
 * solve() the problem's solver on any b), and the fetched problem: mesh, the
 * finest matrix (with perm for the host numberings), b and x0 in the mesh's
 * numbering, sizes, the resolved options and view. */
static PyObject *module_poisson_multigrid(PyObject *Py_UNUSED(module), PyObject *args,
                                          PyObject *kwargs) {
  static char *keywords[] = {"context",     "coarse",    "level",   "degree",
                             "problem",     "numbering", "seed",    "on_device",
                             "coarse_rows", "text",      "options", NULL};
  ContextObject *owner = NULL;
  MeshObject *coarse = NULL;
  int level = 1, degree = 1, on_device = 1;
  const char *problem_name = NULL, *numbering_name = NULL, *text = NULL;
  unsigned long long seed = 1;
  Py_ssize_t coarse_rows = 0;
  PyObject *pairs = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!iissKpnzO", keywords, &ContextType, &owner,
                                   &MeshType, &coarse, &level, &degree, &problem_name,
                                   &numbering_name, &seed, &on_device, &coarse_rows, &text, &pairs))
    return NULL;
  if (!context_ready(owner))
    return NULL;
  clmg_fe_poisson_spec spec;
  if (poisson_spec(&spec, coarse, level, degree, problem_name, numbering_name, seed, on_device,
                   coarse_rows, 1) < 0)
    return NULL;
  clmg_context *context = owner->context;
  clmg_options *options = make_options(text, pairs);
  if (!options)
    return NULL;
  clmg_fe_poisson *problem = NULL;
  clmg_fe_poisson_result r;
  memset(&r, 0, sizeof r);
  const char *step = "building the hierarchy";
  owner->busy = 1;
  PyThreadState *released = PyEval_SaveThread();
  clmg_status status = clmg_fe_poisson_create(context, &spec, options, &problem);
  if (status == CLMG_SUCCESS) {
    step = "setting up the multigrid and the solver";
    status = clmg_fe_poisson_setup(problem);
  }
  if (status == CLMG_SUCCESS) { /* x is the initial guess until a solve */
    step = "reading back the problem";
    status = clmg_fe_poisson_fetch(problem, &r);
  }
  PyEval_RestoreThread(released);
  owner->busy = 0;
  clmg_options_destroy(options);
  PyObject *out = NULL;
  if (status != CLMG_SUCCESS) {
    raise_poisson(status, step, clmg_context_message(context));
    goto done;
  }
  clmg_solver *solver = clmg_fe_poisson_solver(problem);
  const clmg_fe_poisson_info *info = clmg_fe_poisson_get_info(problem);
  size_t n = r.n;
  PyObject *mesh = mesh_copy(&r.mesh);
  PyObject *matrix = mesh ? csr_dict(&r.matrix) : NULL;
  if (matrix && r.perm) { /* the host numbering: perm[new] = old */
    PyObject *perm = bytes_of(r.perm, n * sizeof(int32_t));
    if (!perm || PyDict_SetItemString(matrix, "perm", perm) < 0)
      Py_CLEAR(matrix);
    Py_XDECREF(perm);
  }
  char *view = matrix ? clmg_solver_view_json(solver) : NULL;
  char *resolved = view ? clmg_options_to_json(clmg_solver_options(solver), 1) : NULL;
  PyObject *facts = NULL;
  if (resolved)
    facts = Py_BuildValue("{s:N,s:N,s:N,s:N,s:n,s:n,s:i,s:n,s:s,s:s,s:d,s:d,s:O}", "mesh", mesh,
                          "matrix", matrix, "b", bytes_of(r.b, n * sizeof(double)), "x0",
                          bytes_of(r.u, n * sizeof(double)), "unknowns", (Py_ssize_t)n, "nonzeros",
                          (Py_ssize_t)info->nonzeros, "levels", info->levels, "coarse_unknowns",
                          (Py_ssize_t)info->coarse_unknowns, "view", view, "options", resolved,
                          "assembly_s", info->assembly_s + info->upload_s, "kernels_s",
                          info->kernels_s, "mixed", info->mixed ? Py_True : Py_False);
  else {
    Py_XDECREF(mesh);
    Py_XDECREF(matrix);
    if (!PyErr_Occurred())
      PyErr_NoMemory();
  }
  free(view);
  free(resolved);
  if (!facts)
    goto done;
  SolverObject *object = (SolverObject *)SolverType.tp_alloc(&SolverType, 0);
  if (!object) {
    Py_DECREF(facts);
    goto done;
  }
  Py_INCREF(owner);
  object->owner = owner;
  object->solver = solver;
  object->rows = n;
  object->problem = problem; /* the object's now */
  problem = NULL;
  out = Py_BuildValue("(NN)", (PyObject *)object, facts);
done:
  clmg_fe_poisson_result_free(&r);
  clmg_fe_poisson_destroy(problem);
  return out;
}

/* helmholtz_system(mesh, material_ids, sigma, lambda, rhs, dirichlet_tags,
 * context or None) -> dict: the P1 Helmholtz system of clmg/assembly.h on
 * the mesh's vertices, assembled on the host (context None:
 * clmg_p1_assemble_host) or on the device (clmg_p1_assemble_device, the
 * pattern from the mesh and the values and b read back), as CSR bytes and
 * b, with the assembly's seconds. */
static PyObject *module_helmholtz_system(PyObject *Py_UNUSED(module), PyObject *args) {
  MeshObject *mesh = NULL;
  PyObject *ids_object = NULL, *sigma_object = NULL, *tags_object = NULL, *owner_object = NULL;
  double lambda = 1.0;
  const char *rhs = NULL;
  if (!PyArg_ParseTuple(args, "O!OOdsOO", &MeshType, &mesh, &ids_object, &sigma_object, &lambda,
                        &rhs, &tags_object, &owner_object))
    return NULL;
  ContextObject *owner = NULL;
  if (owner_object != Py_None) {
    if (!PyObject_TypeCheck(owner_object, &ContextType)) {
      PyErr_SetString(PyExc_TypeError, "context must be a Context or None");
      return NULL;
    }
    owner = (ContextObject *)owner_object;
    if (!context_ready(owner))
      return NULL;
  }
  clmg_helmholtz_problem problem;
  clmg_helmholtz_problem_defaults(&problem);
  problem.lambda = lambda;
  if (strcmp(rhs, "f1") == 0)
    problem.rhs = CLMG_RHS_SOURCE_ONE;
  else if (strcmp(rhs, "ones") == 0)
    problem.rhs = CLMG_RHS_ONES;
  else {
    PyErr_Format(PyExc_ValueError, "unknown right-hand side '%s' (there are: f1, ones)", rhs);
    return NULL;
  }
  Py_buffer ids = {0}, sigma = {0}, tags = {0};
  Py_ssize_t materials = PyObject_Length(ids_object);
  Py_ssize_t num_tags = PyObject_Length(tags_object);
  if (materials < 0 || num_tags < 0)
    return NULL;
  if (get_array(ids_object, &ids, 0, 4, "i", materials, "material_ids (int32)") < 0)
    return NULL;
  if (get_array(sigma_object, &sigma, 0, 8, "d", materials, "sigma (float64)") < 0) {
    PyBuffer_Release(&ids);
    return NULL;
  }
  if (get_array(tags_object, &tags, 0, 4, "i", num_tags, "dirichlet_tags (int32)") < 0) {
    PyBuffer_Release(&sigma);
    PyBuffer_Release(&ids);
    return NULL;
  }
  if (materials) {
    problem.material_ids = ids.buf;
    problem.sigma = sigma.buf;
    problem.num_materials = (size_t)materials;
  }
  if (num_tags) {
    problem.dirichlet_tags = tags.buf;
    problem.num_dirichlet_tags = (size_t)num_tags;
  }
  size_t n = mesh->mesh.num_vertices;
  clmg_csr a = {0};
  double *b = malloc((n ? n : 1) * sizeof *b);
  clmg_error error = {{0}};
  clmg_status status = b ? CLMG_SUCCESS : CLMG_ERROR_OUT_OF_HOST_MEMORY;
  const char *message = "out of memory";
  double first_s = 0, assembly_s = 0;
  if (owner)
    owner->busy = 1;
  PyThreadState *released = PyEval_SaveThread();
  if (status == CLMG_SUCCESS && !owner) {
    double start = seconds_now();
    status = clmg_p1_assemble_host(&mesh->mesh, &problem, &a, b, &error);
    assembly_s = first_s = seconds_now() - start;
    message = error.message;
  } else if (status == CLMG_SUCCESS) {
    clmg_context *context = owner->context;
    clmg_p1_assembler_options options;
    clmg_p1_assembler_options_defaults(&options);
    clmg_p1_assembler *assembler = NULL;
    clmg_matrix *matrix = NULL;
    clmg_vector *device_b = NULL;
    double start = seconds_now();
    status = clmg_p1_assembler_create(context, &mesh->mesh, &options, &assembler);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, CLMG_DOUBLE, n, &device_b);
    if (status == CLMG_SUCCESS)
      status = clmg_p1_assemble_device(assembler, &problem, &matrix, device_b);
    if (status == CLMG_SUCCESS)
      status = clmg_finish(context);
    first_s = seconds_now() - start;
    start = seconds_now(); /* again, warm: the assembly alone */
    if (status == CLMG_SUCCESS)
      status = clmg_p1_assemble_device(assembler, &problem, &matrix, device_b);
    if (status == CLMG_SUCCESS)
      status = clmg_finish(context);
    assembly_s = seconds_now() - start;
    message = clmg_context_message(context);
    if (status == CLMG_SUCCESS) {
      status = clmg_p1_pattern(&mesh->mesh, &a, &error);
      message = error.message;
    }
    if (status == CLMG_SUCCESS) {
      status = clmg_vector_download_doubles(clmg_p1_assembler_values(assembler), a.val);
      if (status == CLMG_SUCCESS)
        status = clmg_vector_download_doubles(device_b, b);
      message = clmg_context_message(context);
    }
    clmg_vector_destroy(device_b);
    clmg_matrix_destroy(matrix);
    clmg_p1_assembler_destroy(assembler);
  }
  PyEval_RestoreThread(released);
  if (owner)
    owner->busy = 0;
  PyBuffer_Release(&tags);
  PyBuffer_Release(&sigma);
  PyBuffer_Release(&ids);
  PyObject *out = NULL;
  if (status != CLMG_SUCCESS)
    raise_status(status, message);
  else {
    PyObject *matrix = csr_dict(&a);
    if (matrix)
      out =
          Py_BuildValue("{s:N,s:N,s:d,s:d}", "matrix", matrix, "b", bytes_of(b, n * sizeof(double)),
                        "assembly_first_s", first_s, "assembly_s", assembly_s);
  }
  clmg_csr_free(&a);
  free(b);
  return out;
}

/* ---- module functions ---- */

static PyObject *module_devices(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored)) {
  clmg_device_info *devices = NULL;
  size_t count = 0;
  char message[1024] = "";
  clmg_status status;
  PyThreadState *released = PyEval_SaveThread();
  status = clmg_list_devices(&devices, &count, message, sizeof message);
  PyEval_RestoreThread(released);
  if (status != CLMG_SUCCESS)
    return raise_status(status, message);
  PyObject *list = PyList_New((Py_ssize_t)count);
  for (size_t i = 0; list && i < count; i++) {
    PyObject *item = device_dict(&devices[i]);
    if (!item) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  free(devices);
  return list;
}

static PyObject *module_option_keys(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored)) {
  size_t count = clmg_options_key_count();
  PyObject *list = PyList_New((Py_ssize_t)count);
  for (size_t i = 0; list && i < count; i++) {
    clmg_option_info info;
    PyObject *item = NULL;
    if (clmg_options_key_info(i, &info))
      item =
          Py_BuildValue("{s:s,s:s,s:s,s:s,s:s}", "key", info.key, "kind", info.kind, "default",
                        info.default_value, "values", info.values, "description", info.description);
    if (!item) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

/* check_options(text, pairs) -> JSON of the keys set: the options layer's
 * checks without a matrix (clmg_options_to_json). */
static PyObject *module_check_options(PyObject *Py_UNUSED(module), PyObject *args) {
  const char *text = NULL;
  PyObject *pairs = Py_None;
  if (!PyArg_ParseTuple(args, "z|O", &text, &pairs))
    return NULL;
  clmg_options *options = make_options(text, pairs);
  if (!options)
    return NULL;
  PyObject *result = take_string(clmg_options_to_json(options, 0));
  clmg_options_destroy(options);
  return result;
}

/* spd_problem(kind, level, poisson_ratio, jump, distortion, seed) -> dict of
 * bytes (indptr int64, indices int32, data, b, coordinates float64) and
 * sizes: clmg_spd_problem_create's test problems. */
static PyObject *module_spd_problem(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"kind", "level", "poisson_ratio", "jump", "distortion", "seed", NULL};
  clmg_spd_problem_options options;
  clmg_spd_problem_options_defaults(&options);
  const char *kind = NULL;
  unsigned long long seed = options.seed;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|idddK", keywords, &kind, &options.level,
                                   &options.poisson_ratio, &options.jump, &options.distortion,
                                   &seed))
    return NULL;
  options.seed = seed;
  if (!clmg_spd_problem_parse(kind, &options.kind)) {
    PyErr_Format(PyExc_ValueError,
                 "unknown problem '%s' (elasticity-p1, elasticity-p2, dg-diffusion, q2-jump)",
                 kind);
    return NULL;
  }
  clmg_spd_problem problem = {0};
  clmg_error error = {{0}};
  clmg_status status;
  PyThreadState *released = PyEval_SaveThread();
  status = clmg_spd_problem_create(&options, &problem, &error);
  PyEval_RestoreThread(released);
  if (status != CLMG_SUCCESS)
    return raise_status(status, error.message);
  size_t rows = problem.a.rows, nnz = clmg_csr_nnz(&problem.a);
  PyObject *result = Py_BuildValue(
      "{s:n,s:i,s:i,s:n,s:y#,s:y#,s:y#,s:y#,s:y#}", "rows", (Py_ssize_t)rows, "dim", problem.dim,
      "block_size", problem.block_size, "nodes", (Py_ssize_t)problem.num_nodes, "indptr",
      (const char *)problem.a.row_ptr, (Py_ssize_t)((rows + 1) * sizeof(int64_t)), "indices",
      (const char *)problem.a.col, (Py_ssize_t)(nnz * sizeof(int32_t)), "data",
      (const char *)problem.a.val, (Py_ssize_t)(nnz * sizeof(double)), "b", (const char *)problem.b,
      (Py_ssize_t)(rows * sizeof(double)), "coordinates", (const char *)problem.coordinates,
      (Py_ssize_t)(problem.num_nodes * (size_t)problem.dim * sizeof(double)));
  clmg_spd_problem_free(&problem);
  return result;
}

/* ---- the Navier-Stokes flow (clmg/navier_stokes.h, clmg/flow.h) ---- */

/* Per step (the monitor's record): the step, its time, GMRES iterations,
 * residuals, seconds and the DFG quantities (NaN for the other cases). */
enum { FLOW_STEP_VALUES = 11 };

typedef struct flow_record {
  const clmg_flow_case_setup *setup;
  double *values; /* FLOW_STEP_VALUES per step */
  size_t count, capacity;
  clmg_status failure;
  char message[1100];
} flow_record;

static int flow_record_step(void *data, const clmg_flow_step *step, const clmg_mesh *mesh,
                            const clmg_triangle_edges *edges, const double *x) {
  flow_record *r = data;
  if (r->count == r->capacity) {
    size_t capacity = r->capacity ? 2 * r->capacity : 64;
    double *values = realloc(r->values, capacity * FLOW_STEP_VALUES * sizeof *values);
    if (!values) {
      r->failure = CLMG_ERROR_OUT_OF_HOST_MEMORY;
      snprintf(r->message, sizeof r->message, "no host memory for the step history");
      return 1;
    }
    r->values = values;
    r->capacity = capacity;
  }
  double drag = NAN, lift = NAN, dp = NAN;
  if (clmg_flow_case_setup_has_quantities(r->setup)) {
    clmg_error error = {{0}};
    clmg_status status =
        clmg_flow_case_quantities(r->setup, mesh, edges, x, &drag, &lift, &dp, &error);
    if (status != CLMG_SUCCESS) {
      r->failure = status;
      snprintf(r->message, sizeof r->message, "step %d: %s", step->step, error.message);
      return 1;
    }
  }
  double *v = r->values + r->count++ * FLOW_STEP_VALUES;
  const double values[FLOW_STEP_VALUES] = {step->step,
                                           step->time,
                                           step->linear_iterations,
                                           step->nonlinear_residual,
                                           step->linear_residual,
                                           step->assemble_seconds,
                                           step->setup_seconds,
                                           step->solve_seconds,
                                           drag,
                                           lift,
                                           dp};
  memcpy(v, values, sizeof values);
  return 0;
}

/* A sequence of boundary tags (None: none) into tags, at most
 * CLMG_FLOW_MAX_TAGS; returns 0 with a Python error set. */
static int flow_tags(PyObject *object, const char *what, int32_t *tags, size_t *count) {
  *count = 0;
  if (object == Py_None)
    return 1;
  char message[80];
  snprintf(message, sizeof message, "%s must be a sequence of tags", what);
  PyObject *sequence = PySequence_Fast(object, message);
  if (!sequence)
    return 0;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
  if (n > CLMG_FLOW_MAX_TAGS) {
    Py_DECREF(sequence);
    PyErr_Format(PyExc_ValueError, "at most %d %s tags", CLMG_FLOW_MAX_TAGS, what);
    return 0;
  }
  for (Py_ssize_t k = 0; k < n; k++) {
    long tag = PyLong_AsLong(PySequence_Fast_GET_ITEM(sequence, k));
    if (tag == -1 && PyErr_Occurred()) {
      Py_DECREF(sequence);
      return 0;
    }
    if (tag < 1 || tag > INT32_MAX) {
      Py_DECREF(sequence);
      PyErr_Format(PyExc_ValueError, "%s tags are >= 1, not %ld", what, tag);
      return 0;
    }
    tags[(*count)++] = (int32_t)tag;
  }
  Py_DECREF(sequence);
  return 1;
}

/* flow(context, case, path, walls, inflow, re, level, steady, steps, dt,
 * text, pairs, slip, outflow, inflow_profile, inflow_peak, body,
 * reference_length, pressure_points) -> dict: clmg_flow_solve on the case's
 * mesh refined `level` times (level + 1 levels, as clmg flow --level), the
 * case's defaults (clmg_flow_case_defaults) under the options of
 * clmg_options_flow. case: "cavity", "dfg1", "dfg2", "dfg3", "canopy" or
 * "gmsh" (path names the mesh; walls, slip, outflow, inflow, the inflow's
 * profile and peak, body, reference_length and pressure_points (4 numbers
 * or None) are clmg_flow_case_create_gmsh's); re <= 0, steady < 0, steps
 * <= 0: the case's defaults. */
static PyObject *module_flow(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"context",
                             "case",
                             "path",
                             "walls",
                             "inflow",
                             "re",
                             "level",
                             "steady",
                             "steps",
                             "dt",
                             "text",
                             "options",
                             "slip",
                             "outflow",
                             "inflow_profile",
                             "inflow_peak",
                             "body",
                             "reference_length",
                             "pressure_points",
                             NULL};
  ContextObject *owner = NULL;
  const char *case_name = NULL, *path = NULL, *text = NULL, *inflow_profile = NULL;
  PyObject *walls_object = Py_None, *pairs = Py_None, *slip_object = Py_None,
           *outflow_object = Py_None, *points_object = Py_None;
  int inflow = 0, level = 3, steady = -1, steps = 0, body = 0;
  double re = 0, dt = 0.01, inflow_peak = 1.0, reference_length = 1.0;
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "O!szOidiiidzO|OOzdidO", keywords, &ContextType, &owner, &case_name, &path,
          &walls_object, &inflow, &re, &level, &steady, &steps, &dt, &text, &pairs, &slip_object,
          &outflow_object, &inflow_profile, &inflow_peak, &body, &reference_length, &points_object))
    return NULL;
  if (!context_ready(owner))
    return NULL;
  clmg_flow_case flow;
  if (strcmp(case_name, "gmsh") == 0)
    flow = CLMG_FLOW_GMSH;
  else if (!clmg_flow_case_parse(case_name, &flow)) {
    PyErr_Format(PyExc_ValueError,
                 "unknown case '%s' (there are: cavity, dfg1, dfg2, dfg3, canopy, or a .msh file)",
                 case_name);
    return NULL;
  }
  int32_t walls[CLMG_FLOW_MAX_TAGS], slip[CLMG_FLOW_MAX_TAGS], outflow[CLMG_FLOW_MAX_TAGS];
  size_t num_walls = 0, num_slip = 0, num_outflow = 0;
  if (!flow_tags(walls_object, "walls", walls, &num_walls) ||
      !flow_tags(slip_object, "slip", slip, &num_slip) ||
      !flow_tags(outflow_object, "outflow", outflow, &num_outflow))
    return NULL;
  clmg_flow_gmsh_options gmsh;
  clmg_flow_gmsh_options_defaults(&gmsh);
  gmsh.walls = walls;
  gmsh.num_walls = num_walls;
  gmsh.slip = slip;
  gmsh.num_slip = num_slip;
  gmsh.outflow = outflow;
  gmsh.num_outflow = num_outflow;
  gmsh.inflow_tag = inflow;
  gmsh.inflow_peak = inflow_peak;
  gmsh.body_tag = body;
  gmsh.reference_length = reference_length;
  if (inflow_profile && strcmp(inflow_profile, "parabolic") == 0)
    gmsh.inflow_profile = CLMG_FLOW_INFLOW_PARABOLIC;
  else if (inflow_profile && strcmp(inflow_profile, "uniform") != 0) {
    PyErr_Format(PyExc_ValueError, "inflow_profile is 'uniform' or 'parabolic', not '%s'",
                 inflow_profile);
    return NULL;
  }
  if (points_object != Py_None) {
    PyObject *sequence =
        PySequence_Fast(points_object, "pressure_points must be 4 numbers (x1, y1, x2, y2)");
    if (!sequence)
      return NULL;
    if (PySequence_Fast_GET_SIZE(sequence) != 4) {
      Py_DECREF(sequence);
      PyErr_SetString(PyExc_ValueError, "pressure_points must be 4 numbers (x1, y1, x2, y2)");
      return NULL;
    }
    for (int k = 0; k < 4; k++) {
      gmsh.pressure_points[k] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(sequence, k));
      if (gmsh.pressure_points[k] == -1.0 && PyErr_Occurred()) {
        Py_DECREF(sequence);
        return NULL;
      }
    }
    Py_DECREF(sequence);
    gmsh.has_pressure_points = 1;
  }
  if (level < 0 || level > 12) {
    PyErr_Format(PyExc_ValueError, "level must be 0 to 12, not %d", level);
    return NULL;
  }
  if (!(isfinite(dt) && dt > 0)) {
    char message[96]; /* PyErr_Format has no %g */
    snprintf(message, sizeof message, "dt must be finite and > 0, not %g", dt);
    PyErr_SetString(PyExc_ValueError, message);
    return NULL;
  }
  if (steps <= 0)
    steps = clmg_flow_case_steps(flow, dt);
  if (flow == CLMG_FLOW_DFG3 && steady > 0) {
    PyErr_SetString(PyExc_ValueError,
                    "dfg3's inflow varies in time: it takes time steps, not steady=True");
    return NULL;
  }
  clmg_error error = {{0}};
  clmg_flow_case_setup setup;
  clmg_mesh coarse = {0};
  clmg_status status = CLMG_SUCCESS;
  double reynolds = re > 0 ? re : clmg_flow_case_reynolds(flow);
  if (flow == CLMG_FLOW_GMSH) { /* the tags and the inflow's geometry: the mesh first */
    status = clmg_flow_case_mesh(flow, path, &coarse, &error);
    if (status == CLMG_SUCCESS && (coarse.cell_type != CLMG_CELL_SIMPLEX || coarse.dim != 2)) {
      status = CLMG_ERROR_INVALID_ARGUMENT; /* the library's refusal, before the tags */
      snprintf(error.message, sizeof error.message,
               "Crouzeix-Raviart elements need a 2D triangle mesh: %s is not one", path);
    }
    if (status != CLMG_SUCCESS) {
      clmg_mesh_free(&coarse);
      return raise_status(status, error.message);
    }
    status = clmg_flow_case_create_gmsh(&coarse, reynolds, &gmsh, &setup, &error);
  } else
    status = clmg_flow_case_create(flow, reynolds, walls, num_walls, inflow, &setup, &error);
  if (status != CLMG_SUCCESS) {
    clmg_mesh_free(&coarse);
    PyErr_SetString(PyExc_ValueError, error.message);
    return NULL;
  }
  clmg_context *context = owner->context;
  if (!clmg_context_device(context)->has_fp64) {
    clmg_mesh_free(&coarse);
    return raise_status(CLMG_ERROR_UNSUPPORTED,
                        "the Navier-Stokes solver computes in double precision, which the "
                        "device does not have (fp64)");
  }
  clmg_options *db = make_options(text, pairs);
  if (!db) {
    clmg_mesh_free(&coarse);
    return NULL;
  }
  clmg_flow_options options;
  clmg_flow_options_defaults(&options);
  clmg_flow_case_defaults(flow, &options);
  char unused[512] = "";
  status = clmg_options_flow(db, &options, unused, sizeof unused, &error);
  if (status != CLMG_SUCCESS) {
    clmg_options_destroy(db);
    clmg_mesh_free(&coarse);
    return raise_status(status, error.message);
  }
  if (unused[0]) {
    char warning[700];
    snprintf(warning, sizeof warning, "clmg.flow does not read %s", unused);
    if (PyErr_WarnEx(PyExc_UserWarning, warning, 1) < 0) {
      clmg_options_destroy(db);
      clmg_mesh_free(&coarse);
      return NULL;
    }
  }
  options.levels = level + 1;
  options.steady = steady < 0 ? clmg_flow_case_steady(flow) : steady;
  options.time_step = dt;
  options.steps = steps;
  clmg_stokes_problem problem;
  clmg_flow_case_problem(&setup, &problem);
  flow_record record = {&setup, NULL, 0, 0, CLMG_SUCCESS, ""};
  clmg_flow_result result = {0};
  char message[1100] = "";
  double start = seconds_now(), total_s = 0;
  owner->busy = 1;
  PyThreadState *released = PyEval_SaveThread();
  if (flow != CLMG_FLOW_GMSH) /* a Gmsh case's is read */
    status = clmg_flow_case_mesh(flow, path, &coarse, &error);
  int mesh_failed = status != CLMG_SUCCESS;
  if (!mesh_failed) {
    status =
        clmg_flow_solve(context, &coarse, &problem, &options, flow_record_step, &record, &result);
    snprintf(message, sizeof message, "%s",
             status == CLMG_SUCCESS ? "" : clmg_context_message(context));
  }
  total_s = seconds_now() - start;
  PyEval_RestoreThread(released);
  owner->busy = 0;
  clmg_mesh_free(&coarse);
  PyObject *out = NULL;
  if (mesh_failed) {
    raise_status(status, error.message);
    goto done;
  }
  if (record.failure != CLMG_SUCCESS) {
    raise_status(record.failure, record.message);
    goto done;
  }
  if (status != CLMG_SUCCESS && !(status == CLMG_ERROR_NOT_CONVERGED && result.x)) {
    raise_status(status, message);
    goto done;
  }
  char *echo = clmg_options_to_json(db, 0);
  if (!echo) {
    PyErr_NoMemory();
    goto done;
  }
  size_t num_edges = result.edges.num_edges, num_cells = result.mesh.num_cells;
  PyObject *history = bytes_of(record.values, record.count * FLOW_STEP_VALUES * sizeof(double));
  PyObject *x = bytes_of(result.x, result.unknowns * sizeof(double));
  PyObject *edge_vertices = bytes_of(result.edges.edge_vertices, 2 * num_edges * sizeof(int32_t));
  PyObject *cell_edges = bytes_of(result.edges.cell_edges, 3 * num_cells * sizeof(int32_t));
  PyObject *mesh = (history && x && edge_vertices && cell_edges) ? mesh_take(&result.mesh) : NULL;
  if (mesh)
    out = Py_BuildValue(
        "{s:N,s:N,s:N,s:N,s:N,s:n,s:n,s:i,s:i,s:i,s:O,s:d,s:O,s:s,s:s,s:d,s:d,s:s,s:d,s:O}", "mesh",
        mesh, "x", x, "edge_vertices", edge_vertices, "cell_edges", cell_edges, "history", history,
        "edges", (Py_ssize_t)num_edges, "unknowns", (Py_ssize_t)result.unknowns, "levels",
        result.levels, "steps", result.steps, "linear_iterations", result.linear_iterations,
        "converged", result.converged ? Py_True : Py_False, "nonlinear_residual",
        options.steady ? result.nonlinear_residual : 0.0, "steady",
        options.steady ? Py_True : Py_False, "status", clmg_status_string(status), "message",
        message, "reynolds", setup.reynolds, "viscosity", setup.viscosity, "options", echo,
        "total_s", total_s, "dfg",
        clmg_flow_case_setup_has_quantities(&setup) ? Py_True : Py_False);
  else {
    Py_XDECREF(history);
    Py_XDECREF(x);
    Py_XDECREF(edge_vertices);
    Py_XDECREF(cell_edges);
  }
  free(echo);
done:
  free(record.values);
  clmg_flow_result_free(&result);
  clmg_options_destroy(db);
  return out;
}

/* flow_write_vtu(mesh, x, path): clmg_flow_write_vtu of a solution
 * (2E + T values) on a triangle mesh. */
static PyObject *module_flow_write_vtu(PyObject *Py_UNUSED(module), PyObject *args) {
  MeshObject *mesh = NULL;
  PyObject *x_object = NULL;
  const char *path = NULL;
  if (!PyArg_ParseTuple(args, "O!Os", &MeshType, &mesh, &x_object, &path))
    return NULL;
  clmg_error error = {{0}};
  clmg_triangle_edges edges = {0};
  clmg_status status = clmg_triangle_edges_create(&mesh->mesh, &edges, &error);
  if (status != CLMG_SUCCESS)
    return raise_status(status, error.message);
  Py_buffer x;
  if (get_array(x_object, &x, 0, sizeof(double), "d",
                (Py_ssize_t)clmg_stokes_num_unknowns(&mesh->mesh, &edges),
                "x (2 per edge + 1 per triangle)") < 0) {
    clmg_triangle_edges_free(&edges);
    return NULL;
  }
  Py_BEGIN_ALLOW_THREADS status = clmg_flow_write_vtu(path, &mesh->mesh, &edges, x.buf, &error);
  Py_END_ALLOW_THREADS clmg_triangle_edges_free(&edges);
  PyBuffer_Release(&x);
  if (status != CLMG_SUCCESS)
    return raise_status(status, error.message);
  Py_RETURN_NONE;
}

/* write_array(path, values, rows, cols): clmg_write_matrix_market_array
 * (row-major values), the format amg.coordinates and amg.near_nullspace read. */
static PyObject *module_write_array(PyObject *Py_UNUSED(module), PyObject *args) {
  const char *path = NULL;
  PyObject *values = NULL;
  Py_ssize_t rows = 0, cols = 0;
  if (!PyArg_ParseTuple(args, "sOnn", &path, &values, &rows, &cols))
    return NULL;
  if (rows <= 0 || cols <= 0) {
    PyErr_SetString(PyExc_ValueError, "write_array needs rows and cols >= 1");
    return NULL;
  }
  Py_buffer view;
  if (get_array(values, &view, 0, 8, "d", rows * cols, "values (float64)") < 0)
    return NULL;
  clmg_error error = {{0}};
  clmg_status status =
      clmg_write_matrix_market_array(path, view.buf, (size_t)rows, (size_t)cols, &error);
  PyBuffer_Release(&view);
  if (status != CLMG_SUCCESS)
    return raise_status(status, error.message);
  Py_RETURN_NONE;
}

static PyObject *module_version(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored)) {
  return PyUnicode_FromString(clmg_version_string());
}

static PyMethodDef module_methods[] = {
    {"devices", module_devices, METH_NOARGS, "Every OpenCL device (clmg_list_devices)."},
    {"option_keys", module_option_keys, METH_NOARGS,
     "The options layer's keys (clmg_options_key_info)."},
    {"check_options", module_check_options, METH_VARARGS,
     "check_options(text, pairs) -> JSON of the keys set, or ClmgError."},
    {"spd_problem", (PyCFunction)(void (*)(void))module_spd_problem, METH_VARARGS | METH_KEYWORDS,
     "clmg_spd_problem_create's test problems as bytes."},
    {"write_array", module_write_array, METH_VARARGS,
     "write_array(path, values, rows, cols): a Matrix Market array file."},
    {"make_mesh", module_make_mesh, METH_VARARGS,
     "make_mesh(kind, level, path=None): a coarse mesh (generator or Gmsh file)."},
    {"flow", (PyCFunction)(void (*)(void))module_flow, METH_VARARGS | METH_KEYWORDS,
     "The Navier-Stokes flow of a case (clmg flow): clmg_flow_solve."},
    {"flow_write_vtu", module_flow_write_vtu, METH_VARARGS,
     "flow_write_vtu(mesh, x, path): clmg_flow_write_vtu."},
    {"poisson", (PyCFunction)(void (*)(void))module_poisson, METH_VARARGS | METH_KEYWORDS,
     "The Q1/Q2 Poisson problem solved by geometric multigrid (clmg poisson)."},
    {"poisson_multigrid", (PyCFunction)(void (*)(void))module_poisson_multigrid,
     METH_VARARGS | METH_KEYWORDS,
     "The Poisson problem's hierarchy, multigrid and solver, set up: (Solver, dict)."},
    {"helmholtz_system", module_helmholtz_system, METH_VARARGS,
     "The P1 Helmholtz system of a simplex mesh, assembled on the host or the device."},
    {"version", module_version, METH_NOARGS, "clmg_version_string()."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT,
                                        "_clmg",
                                        "The C binding of clmg (use the clmg package).",
                                        -1,
                                        module_methods,
                                        NULL,
                                        NULL,
                                        NULL,
                                        NULL};

PyMODINIT_FUNC PyInit__clmg(void) {
  if (PyType_Ready(&ContextType) < 0 || PyType_Ready(&SolverType) < 0 ||
      PyType_Ready(&MeshType) < 0)
    return NULL;
  PyObject *module = PyModule_Create(&module_def);
  if (!module)
    return NULL;
  clmg_error_type = PyErr_NewExceptionWithDoc(
      "clmg.ClmgError",
      "A clmg library failure: args are (message, status), the library's message and the "
      "status name.",
      NULL, NULL);
  if (!clmg_error_type || PyModule_AddObject(module, "ClmgError", clmg_error_type) < 0)
    goto fail;
  Py_INCREF(clmg_error_type); /* the module's reference; the static one stays */
  Py_INCREF(&ContextType);
  if (PyModule_AddObject(module, "Context", (PyObject *)&ContextType) < 0)
    goto fail;
  Py_INCREF(&SolverType);
  if (PyModule_AddObject(module, "Solver", (PyObject *)&SolverType) < 0)
    goto fail;
  Py_INCREF(&MeshType);
  if (PyModule_AddObject(module, "Mesh", (PyObject *)&MeshType) < 0)
    goto fail;
  return module;
fail:
  Py_DECREF(module);
  return NULL;
}
