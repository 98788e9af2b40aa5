"""Device listing and selection with the CLI's device strings."""

import os
import subprocess
import sys

import numpy as np
import pytest

import clmg


def test_devices_listed():
    devices = clmg.devices()
    assert devices, "no OpenCL device"
    for d in devices:
        assert d["name"] and d["platform_name"]
        assert d["global_mem_bytes"] > 0 and d["compute_units"] > 0


def test_context_by_string(device):
    ctx = clmg.Context(device)
    chosen = ctx.device
    names = [(d["platform_index"], d["device_index"], d["name"]) for d in clmg.devices()]
    assert (chosen["platform_index"], chosen["device_index"], chosen["name"]) in names
    # the same device by its "P:D" string
    again = clmg.Context(f"{chosen['platform_index']}:{chosen['device_index']}")
    assert again.device["name"] == chosen["name"]
    assert repr(again).startswith("<clmg.Context ")
    # the shared context of a device string is made once
    assert clmg.context(device) is clmg.context(device)
    x, info = clmg.solve(np.diag([2.0, 4.0]), [2.0, 4.0], context=again)
    assert info.converged and np.allclose(x, [1.0, 1.0])


def test_unknown_device():
    with pytest.raises(clmg.ClmgError) as caught:
        clmg.Context("no-such-device-anywhere")
    message, status = caught.value.args
    assert status == "device not found"
    assert "no-such-device-anywhere" in message
    with pytest.raises(clmg.ClmgError, match="no-such-device-anywhere"):
        clmg.solve(np.eye(2), np.ones(2), device="no-such-device-anywhere")
    with pytest.raises(ValueError, match="not both"):
        clmg.solve(np.eye(2), np.ones(2), device="pocl", context=clmg.context())
    with pytest.raises(TypeError, match="device"):
        clmg.Context(0)


def test_clmg_device_environment():
    """CLMG_DEVICE picks the default device, as for the clmg command."""
    code = "import clmg; clmg.Context()"
    env = dict(os.environ, CLMG_DEVICE="no-such-device-anywhere")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode != 0
    assert "ClmgError" in done.stderr and "no-such-device-anywhere" in done.stderr


def test_copy_bandwidth(device):
    # the library's measurement (clmg_measure_copy_bandwidth): finite and
    # positive, and below an absurd 100 TB/s
    gb_per_s = clmg.Context(device).copy_bandwidth()
    assert np.isfinite(gb_per_s) and 0 < gb_per_s < 1e5
