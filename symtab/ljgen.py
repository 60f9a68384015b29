# SPDX-License-Identifier: GPL-2.0-or-later
"""ljgen.py -- what the generators of symtab/'s LuaJIT data
(ljcallgraph-gen.py, ljsig-gen.py) share."""
import os


def origin(srcdir):
    """How a generated header names the LuaJIT source it came from: the
    Debian package and version of SRCDIR's debian/changelog ("Debian's
    luajit (2.1.0~beta3+...)"), else SRCDIR's directory name."""
    changelog = os.path.join(srcdir, 'debian', 'changelog')
    if not os.path.exists(changelog):
        return os.path.basename(os.path.abspath(srcdir))
    with open(changelog, encoding='utf-8') as fh:
        return "Debian's " + ' '.join(fh.readline().split()[:2])
