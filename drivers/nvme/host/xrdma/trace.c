// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: instantiate the tracepoints of include/trace/events/nvme_xrdma.h.
 */
#include "xrdma.h"

#define CREATE_TRACE_POINTS
#include <trace/events/nvme_xrdma.h>
