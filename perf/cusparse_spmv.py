#!/usr/bin/env python3
"""cuSPARSE SpMV baseline for clmg_perf_spmv, and the side-by-side table.

Timing: reads the Matrix Market files that `clmg_perf_spmv --write-mtx DIR`
wrote (DIR/NAME.mtx and DIR/NAME_x.mtx), and times y = A x in CSR with
cuSPARSE through CuPy (cusparseSpMV, alpha 1, beta 0) in float64 and float32,
by CUDA events around batches of calls: a warm-up, then batches of at least
--min-reps calls lasting at least --min-time; the fastest batch counts (the
median is reported too). Each product is checked once against SciPy on the
host. `--backend scipy` times SciPy's CSR product on the CPU instead: the same
code path without a GPU, for testing this script and as a CPU reference.

Merging: with --clmg-json FILE (the JSON of clmg_perf_spmv on the same
matrices), prints clmg's fastest format next to cuSPARSE's fastest algorithm
per matrix and precision, with speed-up = cuSPARSE time / clmg time (> 1:
clmg is faster). --cusparse-json FILE merges results saved earlier instead of
timing again.

Traffic model (the same as clmg_perf_spmv's, for CSR with 32-bit row
pointers): bytes = nnz*(s+4) [values + int32 column indices] + (rows+1)*4
[cuSPARSE's int32 row pointers; clmg's CSR uses int64, (rows+1)*8] + cols*s
[x read once] + rows*s [y written once]; s = 8 or 4.

  perf/cusparse_spmv.py --mtx-dir DIR [--output FILE] [--json] [--clmg-json FILE]
  perf/cusparse_spmv.py --cusparse-json FILE --clmg-json FILE      (merge only)

--output FILE writes the baseline's results as JSON (with "comparison", the
merged rows, when --clmg-json is given), --json prints that JSON instead of
the tables (the old --json FILE still writes FILE, with a note, until 0.3.0).
"""

import argparse
import glob
import json
import math
import os
import statistics
import sys
import time

import perf_output  # perf/perf_output.py: --output FILE and --json

import numpy as np

DOUBLE_TOLERANCE = 1e-12
FLOAT_TOLERANCE = 1e-5
PRECISIONS = {"double": np.float64, "float": np.float32}
BYTES_MODEL = ("bytes = nnz*(s+4) [values + int32 column indices] + (rows+1)*p [row pointers, "
               "p = their index size: 4 for cuSPARSE and SciPy here] + cols*s [x read once] + "
               "rows*s [y written once, beta=0]; s = 8 (double) or 4 (float)")


# ---- the matrices ----

def list_problems(mtx_dir, names=None):
    """(name, matrix path, x path) for each DIR/NAME.mtx that has DIR/NAME_x.mtx."""
    problems = []
    for path in sorted(glob.glob(os.path.join(mtx_dir, "*.mtx"))):
        stem = os.path.basename(path)[:-len(".mtx")]
        if stem.endswith("_x"):
            continue
        x_path = os.path.join(mtx_dir, stem + "_x.mtx")
        if not os.path.exists(x_path):
            print(f"warning: {path} has no {x_path}; skipped", file=sys.stderr)
            continue
        if names and stem not in names:
            continue
        problems.append((stem, path, x_path))
    return problems


def load_problem(matrix_path, x_path):
    """The matrix as SciPy CSR in float64 (sorted, no duplicates) and x as a vector."""
    import scipy.io
    import scipy.sparse

    a = scipy.sparse.csr_matrix(scipy.io.mmread(matrix_path))
    a.sum_duplicates()
    a.sort_indices()
    x = np.asarray(scipy.io.mmread(x_path), dtype=np.float64).ravel()
    if x.shape[0] != a.shape[1]:
        raise ValueError(f"{x_path} has {x.shape[0]} entries, the matrix {a.shape[1]} columns")
    return a, x


def model_bytes(rows, cols, nnz, value_size, row_pointer_size):
    s = value_size
    return nnz * (s + 4) + (rows + 1) * row_pointer_size + cols * s + rows * s


def reference(a64, x, dtype):
    """y and sum_j |a_ij x_j| in float64, from A's values rounded to dtype (the
    device holds those), so what remains is the device's arithmetic."""
    rounded = a64.copy()
    rounded.data = rounded.data.astype(dtype).astype(np.float64)
    xr = x.astype(dtype).astype(np.float64)
    y = rounded @ xr
    magnitude = abs(rounded) @ np.abs(xr)
    return y, magnitude


def max_relative_error(y, y_reference, magnitude):
    """max_i |y_i - ref_i| / sum_j |a_ij x_j| (clmg_perf_spmv's check); inf for NaN."""
    difference = np.abs(np.asarray(y, dtype=np.float64) - y_reference)
    if np.isnan(difference).any():
        return math.inf
    scale = np.where(magnitude > 0, magnitude, 1.0)
    return float(np.max(difference / scale)) if difference.size else 0.0


# ---- timing backends: each prepares one (matrix, precision) and times it ----

class Unavailable(Exception):
    """This backend cannot run the asked-for algorithm: skipped, not a failure."""


class CupyBackend:
    """cuSPARSE SpMV through CuPy, timed by CUDA events."""

    name = "cusparse"

    def __init__(self):
        import cupy
        import cupyx.scipy.sparse

        self.cupy = cupy
        self.sparse = cupyx.scipy.sparse
        properties = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        device_name = properties["name"]
        self.device = device_name.decode() if isinstance(device_name, bytes) else device_name
        self.versions = {
            "cupy": cupy.__version__,
            "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
            "cusparse": self._cusparse_version(),
        }

    def _cusparse_version(self):
        try:
            from cupy_backends.cuda.libs import cusparse as library
            return library.getVersion(self.cupy.cuda.device.get_cusparse_handle())
        except Exception:  # the version is a nicety
            return None

    def copy_bandwidth(self):
        """GB/s of a device-to-device copy of 1 GiB, read + write counted."""
        cp = self.cupy
        n = (1 << 30) // 8
        source = cp.ones(n, dtype=cp.float64)
        target = cp.empty_like(source)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        best = math.inf
        for _ in range(6):
            start.record()
            cp.copyto(target, source)
            end.record()
            end.synchronize()
            best = min(best, cp.cuda.get_elapsed_time(start, end) / 1e3)
        del source, target
        cp.get_default_memory_pool().free_all_blocks()
        return 2 * n * 8 / best / 1e9

    def algorithms(self):
        from cupy_backends.cuda.libs import cusparse as library
        # cusparseSpMVAlg_t: DEFAULT 0, CSR_ALG1 2, CSR_ALG2 3 (CUDA 11.2+).
        default = getattr(library, "CUSPARSE_SPMV_ALG_DEFAULT",
                          getattr(library, "CUSPARSE_MV_ALG_DEFAULT", 0))
        csr_alg2 = getattr(library, "CUSPARSE_SPMV_CSR_ALG2", 3)
        return [("default", default), ("csr_alg2", csr_alg2)]

    def prepare(self, a64, x, dtype, algorithm):
        """Uploads A and x; returns (run, fetch_y, method, row_pointer_size)."""
        cp = self.cupy
        a = self.sparse.csr_matrix(
            (cp.asarray(a64.data.astype(dtype)), cp.asarray(a64.indices),
             cp.asarray(a64.indptr)), shape=a64.shape)
        xd = cp.asarray(x.astype(dtype))
        yd = cp.zeros(a64.shape[0], dtype=dtype)
        row_pointer_size = a.indptr.dtype.itemsize
        self._keep = (a, xd, yd)
        try:
            run = self._direct_spmv(a, xd, yd, dtype, algorithm[1])
            run()
            method = f"cusparseSpMV alg={algorithm[0]}, descriptors and buffer made once"
        except Exception as error:  # an older or newer CuPy: its public wrapper
            if algorithm[0] != "default":
                raise Unavailable(f"not available through this CuPy and cuSPARSE "
                                  f"({type(error).__name__}: {error})") from error
            import cupyx.cusparse

            def run():
                cupyx.cusparse.spmv(a, xd, y=yd)
            run()
            method = f"cupyx.cusparse.spmv per call ({type(error).__name__}: {error})"
        cp.cuda.Device().synchronize()
        return run, (lambda: cp.asnumpy(yd)), method, row_pointer_size

    def _direct_spmv(self, a, x, y, dtype, algorithm):
        """One cusparseSpMV call with everything made beforehand, so the timed
        loop holds nothing but the library call."""
        cp = self.cupy
        from cupy_backends.cuda.libs import cusparse as library
        from cupyx import cusparse as wrappers
        try:
            from cupy._core import _dtype
            cuda_type = _dtype.to_cuda_dtype(np.dtype(dtype))
        except Exception:  # cudaDataType: CUDA_R_32F 0, CUDA_R_64F 1
            cuda_type = 1 if np.dtype(dtype) == np.float64 else 0
        handle = cp.cuda.device.get_cusparse_handle()
        operation = getattr(library, "CUSPARSE_OPERATION_NON_TRANSPOSE", 0)
        descriptor_a = wrappers.SpMatDescriptor.create(a)
        descriptor_x = wrappers.DnVecDescriptor.create(x)
        descriptor_y = wrappers.DnVecDescriptor.create(y)
        alpha = np.array(1, dtype).ctypes
        beta = np.array(0, dtype).ctypes
        size = library.spMV_bufferSize(handle, operation, alpha.data, descriptor_a.desc,
                                       descriptor_x.desc, beta.data, descriptor_y.desc,
                                       cuda_type, algorithm)
        buffer = cp.empty(max(int(size), 1), cp.int8)
        keep = (descriptor_a, descriptor_x, descriptor_y, alpha, beta, buffer)
        arguments = (handle, operation, alpha.data, descriptor_a.desc, descriptor_x.desc,
                     beta.data, descriptor_y.desc, cuda_type, algorithm, buffer.data.ptr)

        def run(spmv=library.spMV, arguments=arguments, keep=keep):
            spmv(*arguments)
        return run

    def time(self, run, min_time, min_reps, trials):
        """Seconds per call: (fastest batch, median batch, host launch time per call)."""
        cp = self.cupy
        start, end = cp.cuda.Event(), cp.cuda.Event()
        for _ in range(5):
            run()
        cp.cuda.Device().synchronize()
        reps = 10
        while True:  # grow the batch until it lasts min_time
            start.record()
            for _ in range(reps):
                run()
            end.record()
            end.synchronize()
            elapsed = cp.cuda.get_elapsed_time(start, end) / 1e3
            if elapsed >= min_time or reps >= 1_000_000:
                break
            reps = min(1_000_000, max(2 * reps, int(1.2 * min_time / max(elapsed, 1e-9) * reps)))
        reps = max(reps, min_reps)
        batches = []
        for _ in range(trials):
            start.record()
            for _ in range(reps):
                run()
            end.record()
            end.synchronize()
            batches.append(cp.cuda.get_elapsed_time(start, end) / 1e3 / reps)
        # The host's cost of issuing one call, from a burst short enough not
        # to fill the launch queue (a full queue makes the host wait for the
        # GPU): if it is near the GPU time, the timing is host-bound.
        burst = 16
        issued = time.perf_counter()
        for _ in range(burst):
            run()
        launch = (time.perf_counter() - issued) / burst
        cp.cuda.Device().synchronize()
        return reps, min(batches), statistics.median(batches), launch

    def release(self):
        self._keep = None
        self.cupy.get_default_memory_pool().free_all_blocks()


class ScipyBackend:
    """SciPy's CSR product on the CPU, timed by the wall clock: the same path
    as the cuSPARSE one, runnable anywhere."""

    name = "scipy"

    def __init__(self):
        import platform
        import scipy

        self.device = f"CPU ({platform.processor() or platform.machine()}), SciPy"
        self.versions = {"scipy": scipy.__version__, "numpy": np.__version__}

    def copy_bandwidth(self):
        n = (1 << 27) // 8
        source = np.ones(n)
        target = np.empty_like(source)
        best = math.inf
        for _ in range(5):
            start = time.perf_counter()
            np.copyto(target, source)
            best = min(best, time.perf_counter() - start)
        return 2 * n * 8 / best / 1e9

    def algorithms(self):
        return [("csr", None)]

    def prepare(self, a64, x, dtype, algorithm):
        a = a64.astype(dtype)
        xd = x.astype(dtype)
        result = {}

        def run():
            result["y"] = a @ xd
        run()
        return run, (lambda: result["y"]), "scipy.sparse csr_matrix @ x", a.indptr.dtype.itemsize

    def time(self, run, min_time, min_reps, trials):
        reps = 1
        while True:
            start = time.perf_counter()
            for _ in range(reps):
                run()
            elapsed = time.perf_counter() - start
            if elapsed >= min_time or reps >= 1_000_000:
                break
            reps = min(1_000_000, max(2 * reps, int(1.2 * min_time / max(elapsed, 1e-9) * reps)))
        reps = max(reps, min_reps)
        batches = []
        for _ in range(trials):
            start = time.perf_counter()
            for _ in range(reps):
                run()
            batches.append((time.perf_counter() - start) / reps)
        return reps, min(batches), statistics.median(batches), min(batches)

    def release(self):
        pass


def make_backend(name):
    try:
        return CupyBackend() if name == "cupy" else ScipyBackend()
    except ImportError as error:
        sys.exit(f"the {name} backend needs a module that is missing here: {error}")


# ---- the timing run ----

def time_all(args):
    backend = make_backend(args.backend)
    copy = backend.copy_bandwidth()
    versions = ", ".join(f"{k} {v}" for k, v in backend.versions.items())
    print(f"{backend.name} SpMV on {backend.device} ({versions})")
    print(f"copy bandwidth (read + write): {copy:.1f} GB/s")
    print(f"model: {BYTES_MODEL}")
    print(f"check: max_i |y_i - ref_i| / sum_j |a_ij x_j| <= {DOUBLE_TOLERANCE:g} (double), "
          f"{FLOAT_TOLERANCE:g} (float)")
    header = (f"{'matrix':<10} {'algorithm':<9} {'prec':<6} {'rows':>10} {'nnz':>11} {'reps':>7} "
              f"{'us/call':>10} {'median':>10} {'GFLOP/s':>8} {'GB/s':>8} {'ratio':>6} "
              f"{'error':>8} check")
    print(header)
    precisions = ["double", "float"] if args.precision == "both" else [args.precision]
    names = set(args.matrices.split(",")) if args.matrices else None
    problems = list_problems(args.mtx_dir, names)
    if not problems:
        print(f"no NAME.mtx + NAME_x.mtx pairs in {args.mtx_dir}", file=sys.stderr)
    rows, failures = [], 0
    for name, matrix_path, x_path in problems:
        started = time.perf_counter()
        try:
            a64, x = load_problem(matrix_path, x_path)
        except Exception as error:
            print(f"{name}: cannot read: {error}", file=sys.stderr)
            failures += 1
            continue
        load_s = time.perf_counter() - started
        n_rows, n_cols = a64.shape
        for precision in precisions:
            dtype = PRECISIONS[precision]
            y_reference, magnitude = reference(a64, x, dtype)
            tolerance = FLOAT_TOLERANCE if dtype == np.float32 else DOUBLE_TOLERANCE
            for algorithm in backend.algorithms():
                try:
                    run, fetch, method, pointer_size = backend.prepare(a64, x, dtype, algorithm)
                    reps, best, median, launch = backend.time(run, args.min_time, args.min_reps,
                                                              args.trials)
                    error = max_relative_error(fetch(), y_reference, magnitude)
                except Unavailable as reason:
                    print(f"  skipped: {name} {algorithm[0]} {precision}: {reason}", flush=True)
                    backend.release()
                    continue
                except Exception as problem:
                    print(f"{name} {algorithm[0]} {precision}: {type(problem).__name__}: "
                          f"{problem}", file=sys.stderr)
                    failures += 1
                    backend.release()
                    continue
                backend.release()
                value_size = np.dtype(dtype).itemsize
                bytes_moved = model_bytes(n_rows, n_cols, a64.nnz, value_size, pointer_size)
                row = {
                    "matrix": name, "rows": n_rows, "cols": n_cols, "nnz": int(a64.nnz),
                    "precision": precision, "algorithm": algorithm[0], "method": method,
                    "reps": reps, "time_us": best * 1e6, "median_us": median * 1e6,
                    "launch_us": launch * 1e6, "gflops": 2 * a64.nnz / best / 1e9,
                    "model_bytes": bytes_moved, "row_pointer_bytes": pointer_size,
                    "gb_per_s": bytes_moved / best / 1e9,
                    "ratio_to_copy": bytes_moved / best / 1e9 / copy if copy > 0 else None,
                    "max_error": error if math.isfinite(error) else None,
                    "verified": error <= tolerance, "load_s": load_s,
                }
                if not row["verified"]:
                    failures += 1
                # Host-bound: issuing a call takes about as long as running it.
                host_bound = launch > 0.8 * best and backend.name == "cusparse"
                print(f"{name:<10} {algorithm[0]:<9} {precision:<6} {n_rows:>10} {a64.nnz:>11} "
                      f"{reps:>7} {best * 1e6:>10.2f} {median * 1e6:>10.2f} "
                      f"{row['gflops']:>8.2f} {row['gb_per_s']:>8.1f} "
                      f"{row['ratio_to_copy']:>6.3f} {error:>8.1e} "
                      f"{'ok' if row['verified'] else 'WRONG'}"
                      f"{' (host-bound)' if host_bound else ''}",
                      flush=True)
                rows.append(row)
    document = {
        "benchmark": "cusparse_spmv", "backend": backend.name, "device": backend.device,
        "versions": backend.versions, "copy_gb_per_s": copy,
        "settings": {"min_time_s": args.min_time, "min_reps": args.min_reps,
                     "trials": args.trials, "mtx_dir": args.mtx_dir,
                     "timing": "CUDA events around batches of calls (wall clock for scipy); "
                               "fastest batch, median also given",
                     "bytes_model": BYTES_MODEL},
        "rows": rows, "failures": failures,
    }
    return document


# ---- the side-by-side table ----

def fastest(rows, matrix, precision, keep=lambda row: True):
    candidates = [r for r in rows if r["matrix"] == matrix and r["precision"] == precision
                  and r.get("verified") and r.get("time_us") and keep(r)]
    return min(candidates, key=lambda r: r["time_us"]) if candidates else None


def merge(clmg, baseline):
    """One entry per (matrix, precision) that both measured."""
    clmg_rows, base_rows = clmg.get("rows", []), baseline.get("rows", [])
    keys = []
    for row in clmg_rows:
        key = (row["matrix"], row["precision"])
        if key not in keys:
            keys.append(key)
    merged = []
    for matrix, precision in keys:
        best = fastest(clmg_rows, matrix, precision, lambda r: r["format"] != "auto")
        best = best or fastest(clmg_rows, matrix, precision)
        automatic = fastest(clmg_rows, matrix, precision, lambda r: r["format"] == "auto")
        hybrid = fastest(clmg_rows, matrix, precision, lambda r: r["format"] == "hybrid")
        other = fastest(base_rows, matrix, precision)
        if best is None or other is None:
            continue
        merged.append({
            "matrix": matrix, "precision": precision, "nnz": best["nnz"],
            "same_matrix": best["nnz"] == other["nnz"] and best["rows"] == other["rows"],
            "clmg_format": best["format_description"], "clmg_us": best["time_us"],
            "clmg_gb_per_s": best["gb_per_s"],
            "clmg_auto_format": automatic["format_used"] if automatic else None,
            "clmg_auto_us": automatic["time_us"] if automatic else None,
            "baseline": baseline.get("backend", "cusparse"),
            "baseline_algorithm": other["algorithm"], "baseline_us": other["time_us"],
            "baseline_gb_per_s": other["gb_per_s"],
            "speedup": other["time_us"] / best["time_us"],
            "auto_speedup": (other["time_us"] / automatic["time_us"]) if automatic else None,
            "clmg_hybrid_us": hybrid["time_us"] if hybrid else None,
            "hybrid_speedup": (other["time_us"] / hybrid["time_us"]) if hybrid else None,
        })
    return merged


def print_merge(merged, clmg, baseline):
    name = baseline.get("backend", "cusparse")
    print(f"\nclmg vs {name}: speed-up = {name} time / clmg time (> 1: clmg faster); "
          f"clmg = its fastest format, auto = the format clmg picks by itself, hybrid = "
          f"the hybrid format (ELLR/SELL + CSR segments for long rows)")
    print(f"clmg on {clmg.get('device', {}).get('name', '?')} (copy "
          f"{clmg.get('copy_gb_per_s') or float('nan'):.0f} GB/s, OpenCL); {name} on "
          f"{baseline.get('device', '?')} (copy {baseline.get('copy_gb_per_s') or float('nan'):.0f}"
          f" GB/s)")
    print(f"{'matrix':<10} {'prec':<6} {'nnz':>11} {'clmg best':<44} {'us':>9} {'GB/s':>7} "
          f"{name + ' alg':<14} {'us':>9} {'GB/s':>7} {'speedup':>8}  {'auto':<12} {'speedup':>8}"
          f"  {'hybrid us':>9} {'speedup':>8}")
    for m in merged:
        note = "" if m["same_matrix"] else "  (different sizes!)"
        auto_speedup = f"{m['auto_speedup']:.2f}" if m["auto_speedup"] else "-"
        hybrid_us = f"{m['clmg_hybrid_us']:.1f}" if m.get("clmg_hybrid_us") else "-"
        hybrid_speedup = f"{m['hybrid_speedup']:.2f}" if m.get("hybrid_speedup") else "-"
        print(f"{m['matrix']:<10} {m['precision']:<6} {m['nnz']:>11} {m['clmg_format']:<44} "
              f"{m['clmg_us']:>9.1f} {m['clmg_gb_per_s']:>7.0f} {m['baseline_algorithm']:<14} "
              f"{m['baseline_us']:>9.1f} {m['baseline_gb_per_s']:>7.0f} {m['speedup']:>8.2f}  "
              f"{m['clmg_auto_format'] or '-':<12} {auto_speedup:>8}  {hybrid_us:>9} "
              f"{hybrid_speedup:>8}{note}")
    if merged:
        geometric = math.exp(sum(math.log(m["speedup"]) for m in merged) / len(merged))
        print(f"geometric mean speed-up (clmg best): {geometric:.2f}")
    print("GB/s: clmg counts int64 CSR row pointers (or int32 row lengths), "
          f"{name} int32 row pointers; compare times.")


# ---- main ----

def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        description="cuSPARSE SpMV baseline on clmg_perf_spmv's matrices, and a side-by-side "
                    "table with clmg's results.")
    parser.add_argument("--mtx-dir", help="directory written by clmg_perf_spmv --write-mtx")
    perf_output.add_arguments(parser)
    parser.add_argument("--clmg-json", help="clmg_perf_spmv's JSON (--output FILE) to compare "
                        "with")
    parser.add_argument("--cusparse-json",
                        help="merge these saved baseline results instead of timing")
    parser.add_argument("--backend", choices=["cupy", "scipy"], default="cupy",
                        help="cupy: cuSPARSE on the GPU (default); scipy: SciPy on the CPU")
    parser.add_argument("--precision", choices=["double", "float", "both"], default="both")
    parser.add_argument("--matrices", help="comma-separated names (default: all in --mtx-dir)")
    parser.add_argument("--min-time", type=float, default=0.1,
                        help="seconds per timed batch (default 0.1)")
    parser.add_argument("--min-reps", type=int, default=50,
                        help="calls per timed batch at least (default 50)")
    parser.add_argument("--trials", type=int, default=3, help="timed batches (default 3)")
    args = perf_output.parse(parser, "cusparse_spmv", argv)
    if not args.mtx_dir and not args.cusparse_json:
        parser.error("give --mtx-dir (to time) or --cusparse-json (to merge saved results)")
    if args.cusparse_json and not args.clmg_json:
        parser.error("--cusparse-json only makes sense with --clmg-json")
    return args


def main(argv=None):
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    with perf_output.table(args):
        status, document = run(args)
    if document is None:
        return status
    return perf_output.write("cusparse_spmv", args, document) or status


def run(args):
    """Times (or reads) the baseline and prints the tables; (exit status, the
    JSON document: the baseline, with the merged rows when compared)."""
    failures = 0
    if args.cusparse_json:
        with open(args.cusparse_json) as f:
            baseline = json.load(f)
    else:
        baseline = time_all(args)
        failures += baseline["failures"]
    document = dict(baseline)
    if args.clmg_json:
        try:
            with open(args.clmg_json) as f:
                clmg = json.load(f)
        except (OSError, ValueError) as error:
            print(f"cannot read {args.clmg_json}: {error}", file=sys.stderr)
            return 1, None
        merged = merge(clmg, baseline)
        document["comparison"] = merged
        print_merge(merged, clmg, baseline)
    return (1 if failures else 0), document


if __name__ == "__main__":
    sys.exit(main())
