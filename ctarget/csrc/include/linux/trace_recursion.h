/* fgcheck overlay: the part of the kernel fgraph.c uses is in fgc_kernel.h */
#include "fgc_kernel.h"
