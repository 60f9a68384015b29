#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Seeds for fuzz_capture from a real capture file: the magic and HEADER
# frame, then up to 3 frames of every record kind under 16 KB, and the END
# frame (docs/capture-format.md: u32 length, u32 crc32, msgpack payload
# [kind, ...]); plus the whole file cut after 4 KB and 16 KB (truncation).
#   seed.py CAPTURE OUTDIR
import os
import struct
import sys

src, out = sys.argv[1], sys.argv[2]
data = open(src, 'rb').read()
base = os.path.basename(src)
frames = []
off = 8
while off + 8 <= len(data):
    n = struct.unpack_from('<I', data, off)[0]
    if off + 8 + n > len(data):
        break
    frames.append(data[off:off + 8 + n])
    off += 8 + n
# A payload's first byte is the fixarray, the second the kind (a positive fixint).
kinds = {}
body = []
for f in frames[1:]:
    k = f[9] if len(f) > 9 else 0
    if len(f) < 16384 and kinds.get(k, 0) < 3:
        kinds[k] = kinds.get(k, 0) + 1
        body.append(f)
open(os.path.join(out, base + '-kinds'), 'wb').write(data[:8] + frames[0] + b''.join(body))
for cut in (4096, 16384):
    open(os.path.join(out, '%s-cut%d' % (base, cut)), 'wb').write(data[:cut])
