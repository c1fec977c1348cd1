/* SPDX-License-Identifier: MIT */
#ifndef __SPM_SHIM_SIZES_H
#define __SPM_SHIM_SIZES_H
#define SZ_4K	0x00001000
#define SZ_8K	0x00002000
#define SZ_64K	0x00010000
#define SZ_256K	0x00040000
#define SZ_1M	0x00100000
#define SZ_4M	0x00400000
#endif
