// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: instantiate the tracepoints declared in trace.h.
 */
#include "xrdma.h"

#define CREATE_TRACE_POINTS
#include "trace.h"
