/* SPDX-License-Identifier: MIT */
#ifndef __SPM_SHIM_STRING_H
#define __SPM_SHIM_STRING_H
#include <string.h>
#endif
