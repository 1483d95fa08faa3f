// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_STR_PLURAL: str_plural() in <linux/string_choices.h> */
#include <linux/string_choices.h>

const char *xrdma_probe(int n);
const char *xrdma_probe(int n)
{
	return str_plural(n);
}
