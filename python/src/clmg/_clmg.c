/* clmg._clmg: the CPython binding of clmg's public C API (clmg.h), kept
 * thin: opaque handles (a context, a solver made by the options layer) as
 * Python objects with destructors, host arrays passed through the buffer
 * protocol (no NumPy C API), every failure raised as clmg.ClmgError with the
 * library's message (clmg_context_message, clmg_error). Conversions of
 * SciPy/NumPy input and the user-facing API live in Python (__init__.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static PyMethodDef Context_methods[] = {
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
} SolverObject;

static void Solver_dealloc(SolverObject *self) {
  clmg_vector_destroy(self->z);
  clmg_vector_destroy(self->r);
  clmg_preconditioner_destroy(&self->preconditioner);
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
  status = clmg_solver_solve_host(self->solver, b_view.buf, x_view.buf, &result);
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
    return raise_status(status, clmg_context_message(self->owner->context));
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
  return Py_BuildValue("{s:i,s:O,s:d,s:d,s:d,s:N,s:s,s:s}", "iterations", result.iterations,
                       "converged", status == CLMG_SUCCESS ? Py_True : Py_False, "initial_residual",
                       result.initial_residual, "final_residual", result.final_residual,
                       "relative_residual", result.relative_residual, "history", history, "status",
                       clmg_status_string(status), "message",
                       status == CLMG_SUCCESS ? "" : clmg_context_message(self->owner->context));
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
  if (PyType_Ready(&ContextType) < 0 || PyType_Ready(&SolverType) < 0)
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
  return module;
fail:
  Py_DECREF(module);
  return NULL;
}
