# Compiled twin of caffe2rnn/kernels/stream_copy.py: dst[...] = src with
# non-temporal stores, for a copy nobody reads soon (the rollback journal's).
# The checks are the twin's own function. The stores are the only code here
# that is not plain C: streaming stores of the widest vector the build has
# (AVX-512, AVX or SSE2, all x86-64 has), after an ordinary copy of the bytes
# up to the first aligned address and before one of the tail; elsewhere a
# plain memcpy. Data movement only: the same bytes as np.copyto.
cimport numpy as cnp

cnp.import_array()

cdef extern from *:
    """
    #include <string.h>
    #if defined(__SSE2__)
    #include <immintrin.h>
    #endif
    static void caffe2rnn_stream_copy(char *dst, const char *src, size_t n) {
    #if defined(__AVX512F__)
        const size_t width = 64;
    #elif defined(__AVX__)
        const size_t width = 32;
    #elif defined(__SSE2__)
        const size_t width = 16;
    #else
        const size_t width = 0;
    #endif
        size_t head, i;
        if (width == 0 || n < 4096) {
            memcpy(dst, src, n);
            return;
        }
        head = (width - ((size_t)dst % width)) % width;
        memcpy(dst, src, head);
        for (i = head; i + width <= n; i += width) {
    #if defined(__AVX512F__)
            _mm512_stream_si512((void *)(dst + i), _mm512_loadu_si512((const void *)(src + i)));
    #elif defined(__AVX__)
            _mm256_stream_si256((__m256i *)(dst + i),
                                _mm256_loadu_si256((const __m256i *)(src + i)));
    #elif defined(__SSE2__)
            _mm_stream_si128((__m128i *)(dst + i), _mm_loadu_si128((const __m128i *)(src + i)));
    #endif
        }
        memcpy(dst + i, src + i, n - i);
    #if defined(__SSE2__)
        _mm_sfence();
    #endif
    }
    """
    void caffe2rnn_stream_copy(char* dst, const char* src, size_t n) nogil

from caffe2rnn.kernels.stream_copy import check


def stream_copy(object dst, object src):
    """``dst[...] = src`` with streaming stores (see the Python twin)."""
    check(dst, src)
    cdef cnp.ndarray d = <cnp.ndarray>dst, s = <cnp.ndarray>src
    cdef char* to = <char*>cnp.PyArray_DATA(d)
    cdef const char* source = <const char*>cnp.PyArray_DATA(s)
    cdef size_t n = cnp.PyArray_NBYTES(d)
    with nogil:
        caffe2rnn_stream_copy(to, source, n)
