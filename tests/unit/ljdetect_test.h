/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljdetect_test.h -- what the files of the test_ljdetect program share.
 */
#ifndef LJSNAP_TEST_LJDETECT_H
#define LJSNAP_TEST_LJDETECT_H

#include "unwind/detect/ljdetect.h"

/* Run argv (env entries added, may be NULL) until it reports its
 * lua_State, detect LuaJIT in it (the VM in vmfile, family fam, GC64 or
 * not) and check the layout against its live memory; exact: the detected
 * layout must be the one live calibration finds (else the live one is
 * used, for a build no table describes). */
void check_live(const char *what, char *const argv[], const char *env, const char *vmfile,
		enum lj_family fam, int gc64, int exact, struct lj_detect_cache *cache);

#endif
