#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# OpenResty luajit2 detection (files and live processes).  Skips (77) unless
# LJSNAP_LUAJIT2_DIR names a directory where the Debian packages luajit2 and
# libluajit2-5.1-2 are unpacked:
#   apt-get download luajit2 libluajit2-5.1-2 && for f in *.deb; do dpkg -x $f DIR; done
exec "${top_builddir:-.}/tests/unit/test_ljdetect" --openresty
