/* SPDX-License-Identifier: MIT */
/* In linux/kernel.h of the shim. */
#include <linux/kernel.h>
