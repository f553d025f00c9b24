#ifndef COEXIST_CLIBXML2_SHIM_H
#define COEXIST_CLIBXML2_SHIM_H

#include <libxml/xmlversion.h>
/* Debian's libxml2 is built with ICU, and its encoding.h then includes the system's ICU headers.
   Foundation's internationalization module brings its own, different ICU headers, and a compilation
   that sees both fails ("'UErrorCode' has different definitions in different modules"). coexist uses
   the reader API only, never the ICU-only fields at the end of xmlCharEncodingHandler, so the ICU part
   of libxml2's headers is left out. */
#undef LIBXML_ICU_ENABLED
#include <libxml/xmlreader.h>

#endif
