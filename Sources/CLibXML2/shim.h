#ifndef COEXIST_CLIBXML2_SHIM_H
#define COEXIST_CLIBXML2_SHIM_H

#include <libxml/xmlreader.h>

#endif
