/* SPDX-License-Identifier: MIT */
/* dma_rmb() is in linux/kernel.h of the shim. */
#include <linux/kernel.h>
