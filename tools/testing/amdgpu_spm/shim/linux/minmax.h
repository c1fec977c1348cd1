/* SPDX-License-Identifier: MIT */
#ifndef __SPM_SHIM_MINMAX_H
#define __SPM_SHIM_MINMAX_H

#define min(a, b)		({ typeof(a) _a = (a); typeof(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b)		({ typeof(a) _a = (a); typeof(b) _b = (b); _a > _b ? _a : _b; })
/* The type is named once: a cast of each operand, then min() */
#define min_t(t, a, b)		__shim_min_t((t)0, (a), (b))
#define __shim_min_t(z, a, b)	min((typeof(z))(a), (typeof(z))(b))
#define clamp(v, lo, hi)	min(max(v, lo), hi)

#endif
