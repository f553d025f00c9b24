#ifndef COEXIST_CZLIB_SHIM_H
#define COEXIST_CZLIB_SHIM_H

#include <zlib.h>

/// inflateInit2 is a macro over inflateInit2_; Swift imports neither the macro nor its arguments.
static inline int coexist_inflate_init_raw(z_streamp stream) {
    return inflateInit2(stream, -15);
}

#endif
