"""The RIR high-pass kernel against scipy.signal.sosfiltfilt, bit for bit."""

import numpy as np
import pytest
from scipy.signal import sosfiltfilt

from auralgen.rooms.images import _highpass, _hpf_sos


@pytest.mark.parametrize("fs", [16000, 44100, 48000])
@pytest.mark.parametrize("n_ch", [1, 3, 4, 9])
def test_rows_equal_scipy_at_their_own_lengths(fs, n_ch):
    rng = np.random.default_rng(fs + n_ch)
    x = rng.standard_normal((n_ch, 5000)) * 10.0 ** rng.uniform(-6, 1, (n_ch, 1))
    lens = rng.integers(16, 5001, n_ch)
    out = _highpass(x, fs, lengths=lens)
    for c in range(n_ch):
        np.testing.assert_array_equal(out[c, : lens[c]], sosfiltfilt(_hpf_sos(fs), x[c, : lens[c]]))
        assert not out[c, lens[c] :].any()


def test_whole_array_equals_scipy_along_last_axis():
    x = np.random.default_rng(1).standard_normal((2, 3, 777))
    np.testing.assert_array_equal(_highpass(x, 16000), sosfiltfilt(_hpf_sos(16000), x, axis=-1))
    np.testing.assert_array_equal(_highpass(x[0, 0], 16000), sosfiltfilt(_hpf_sos(16000), x[0, 0]))


def test_short_input_is_returned_unfiltered():
    x = np.arange(10.0)
    np.testing.assert_array_equal(_highpass(x, 16000), x)
