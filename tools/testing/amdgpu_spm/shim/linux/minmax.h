/* SPDX-License-Identifier: MIT */
#ifndef __SPM_SHIM_MINMAX_H
#define __SPM_SHIM_MINMAX_H

#define min(a, b)		((a) < (b) ? (a) : (b))
#define max(a, b)		((a) > (b) ? (a) : (b))
#define min_t(t, a, b)		min((t)(a), (t)(b))
#define max_t(t, a, b)		max((t)(a), (t)(b))
#define clamp(v, lo, hi)	min(max(v, lo), hi)

#endif
