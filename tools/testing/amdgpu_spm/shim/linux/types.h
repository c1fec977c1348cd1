/* SPDX-License-Identifier: MIT */
/* Kernel types for the userspace build of the SPM drain core. */
#ifndef __SPM_SHIM_TYPES_H
#define __SPM_SHIM_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;

#endif
