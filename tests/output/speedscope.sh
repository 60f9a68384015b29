#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `ljsnap report -f speedscope` against speedscope's own file format: every
# file is checked with the schema shipped in the speedscope npm package
# (dist/release/file-format-schema.json, validated by Debian's
# python3-jsonschema with the draft the schema declares), and its profiles
# against the folded output of the same capture:
#   - per process: the profile's stacks (frame names joined root first) with
#     their weights are the folded lines of `--pid PID`, byte for byte; the
#     profiles are the processes of the text report, with its sample counts;
#     their weights add up to the folded total;
#   - --per-thread: one profile per thread, equal to `--tid TID`, and the
#     threads of a process add up to its profile;
#   - tests/output/weird_name.ljsnap.gz (two threads, a frame in a chunk
#     named 'we"ird\name' + a control byte + a byte that is not UTF-8):
#     the names survive as folded prints them, the file name is escaped;
#   - an empty selection (--pid 1) is a valid file with no profile.
# The consumer is installed on first use into $top_builddir/node (npm) and
# needs /usr/bin/python3 with python3-jsonschema (tests/install-deps.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$here/../..}
top_builddir=${top_builddir:-$top_srcdir/build}
LJSNAP=${LJSNAP:-$top_builddir/ljsnap}
PY=/usr/bin/python3
SPEEDSCOPE=speedscope@1.25.0
node=$top_builddir/node
pkg=$node/node_modules/speedscope
schema=$pkg/dist/release/file-format-schema.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# skip WHY: the consumer cannot be had (a failure on CI)
skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $1 (tests/install-deps.sh installs it)"
		exit 1
	fi
	echo "SKIP: $1"
	exit 77
}

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

"$PY" -c 'import jsonschema' 2> /dev/null || skip "$PY has no jsonschema (Debian: python3-jsonschema)"
if ! grep -qs '"version": "1.25.0"' "$pkg/package.json"; then
	command -v npm > /dev/null 2>&1 || skip "no npm (Debian: npm) to install $SPEEDSCOPE"
	mkdir -p "$node"
	# Other tests install their packages here too: one npm at a time.
	(flock 9 && npm install --no-audit --no-fund --prefix "$node" "$SPEEDSCOPE") \
		9> "$node/.lock" > "$tmp/npm.log" 2>&1 ||
		{ cat "$tmp/npm.log"; skip "npm install $SPEEDSCOPE failed"; }
fi
[ -f "$schema" ] || skip "$SPEEDSCOPE has no dist/release/file-format-schema.json"

# The checks on a file, in Python (json: strict UTF-8, no NaN, no trailing
# commas).  check.py validate SCHEMA FILE: schema and the references the
# schema cannot state; prints "ok: N profiles, M frames".
# check.py split FILE DIR: DIR/index (one line per profile: i pid tid total
# name) and DIR/i (its stacks as folded lines, sorted, equal ones merged).
# check.py norm: folded lines on stdin, bytes that are not UTF-8 as U+FFFD
# (as the JSON must carry them), sorted again.
cat > "$tmp/check.py" <<'EOF'
import json, re, sys
import jsonschema

def load(path):
    with open(path, 'rb') as f:
        text = f.read().decode('utf-8')         # strict: the file is UTF-8
    def bad(c):
        raise ValueError('not JSON: ' + c)
    return json.loads(text, parse_constant=bad)

def validate(schema_path, path):
    with open(schema_path) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    assert schema['$schema'].startswith('http://json-schema.org/draft-07/'), schema['$schema']
    assert cls is jsonschema.Draft7Validator, cls
    cls.check_schema(schema)
    doc = load(path)
    cls(schema).validate(doc)
    nf = len(doc['shared']['frames'])
    assert doc['exporter'].startswith('ljsnap '), doc['exporter']
    assert doc['name'], 'empty name'
    assert doc['activeProfileIndex'] == 0
    for p in doc['profiles']:
        assert p['type'] == 'sampled' and p['unit'] == 'none', p['name']
        assert len(p['samples']) == len(p['weights']), p['name']
        assert p['startValue'] == 0 and p['endValue'] == sum(p['weights']), p['name']
        for s in p['samples']:
            assert s and all(isinstance(i, int) and 0 <= i < nf for i in s), s
    print('ok: %d profiles, %d frames (%s)' % (len(doc['profiles']), nf, cls.__name__))

NAME = re.compile(r'^(.*) \(pid (\d+)(?:, tid (\d+))?\)$', re.S)

def split(path, out):
    doc = load(path)
    names = [f['name'] for f in doc['shared']['frames']]
    with open(out + '/index', 'w', encoding='utf-8') as idx:
        for i, p in enumerate(doc['profiles']):
            m = NAME.match(p['name'])
            assert m, p['name']
            lines = {}
            for s, w in zip(p['samples'], p['weights']):
                k = ';'.join(names[j] for j in s)
                lines[k] = lines.get(k, 0) + w
            with open('%s/%d' % (out, i), 'wb') as f:
                for k in sorted(lines, key=lambda k: k.encode()):
                    f.write(b'%s %d\n' % (k.encode(), lines[k]))
            idx.write('%d %s %s %d %s\n' % (i, m.group(2), m.group(3) or '-',
                                             p['endValue'], m.group(1)))

def norm():
    lines = {}
    for raw in sys.stdin.buffer.read().split(b'\n'):
        if raw:
            k, n = raw.decode('utf-8', 'replace').rsplit(' ', 1)
            lines[k] = lines.get(k, 0) + int(n)
    for k in sorted(lines, key=lambda k: k.encode()):
        sys.stdout.buffer.write(b'%s %d\n' % (k.encode(), lines[k]))

if sys.argv[1] == 'validate':
    validate(sys.argv[2], sys.argv[3])
elif sys.argv[1] == 'split':
    split(sys.argv[2], sys.argv[3])
else:
    norm()
EOF

# speedscope's own importer, run by node: the bundle of dist/release with
# the browser globals it touches at load stubbed, stopped once its import
# module is reachable (the hook is the text of speedscope 1.25.0's bundle,
# the version installed above).  import.mjs PKG FILE DIR: reads FILE as the
# app does (importProfileGroupFromText, which picks the importer), then
# writes DIR/index (one line per profile: i total name) and DIR/i (the
# profile's call tree as folded lines: each node's self weight under its path).
cat > "$tmp/import.mjs" <<'EOF'
import fs from 'node:fs';
import vm from 'node:vm';
const [pkg, file, out] = process.argv.slice(2);
const dir = pkg + '/dist/release';
const js = fs.readdirSync(dir).filter(f => /^speedscope-.*\.js$/.test(f));
if (js.length !== 1) throw new Error('no single speedscope-*.js in ' + dir);
let src = fs.readFileSync(dir + '/' + js[0], 'utf8');
const hook = 'var jr=Promise.resolve().then(()=>(Sf(),kf));';
if (src.split(hook).length !== 2) throw new Error('the import module hook is not in ' + js[0]);
src = src.replace(hook, hook + 'globalThis.__ljsnapImport=jr;throw "ljsnap-stop";');
const logs = [];
const ctx = { console: { log: (...a) => logs.push(a.join(' ')), error: console.error, warn: console.error,
		 time() {}, timeEnd() {} },
	setTimeout, clearTimeout, Promise, TextDecoder, TextEncoder, URL, atob, btoa, Blob: class {},
	location: { hash: '', protocol: 'file:', href: 'file:///' }, localStorage: {},
	navigator: { userAgent: 'node', platform: 'node' }, devicePixelRatio: 1,
	matchMedia: () => ({ matches: false, addEventListener() {}, addListener() {} }),
	addEventListener() {}, removeEventListener() {},
	requestAnimationFrame: f => setTimeout(f, 0), cancelAnimationFrame: clearTimeout };
ctx.window = ctx.self = ctx.globalThis = ctx;
vm.createContext(ctx);
try { vm.runInContext(src, ctx); } catch (e) { if (e !== 'ljsnap-stop') throw e; }
const mod = await ctx.__ljsnapImport;
const g = await mod.importProfileGroupFromText(file.split('/').pop(), fs.readFileSync(file, 'utf8'));
if (!g) throw new Error('speedscope did not recognize the file');
if (!logs.includes('Importing as speedscope json file')) throw new Error('imported as: ' + logs);
const bytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));
let index = '';
g.profiles.forEach((p, i) => {
	const lines = new Map();
	const walk = (node, path) => {
		const k = path ? path + ';' + node.frame.name : node.frame.name;
		if (node.getSelfWeight() > 0)
			lines.set(k, (lines.get(k) || 0) + node.getSelfWeight());
		for (const c of node.children) walk(c, k);
	};
	for (const c of p.getAppendOrderCalltreeRoot().children) walk(c, '');
	const keys = [...lines.keys()].sort(bytes);
	fs.writeFileSync(out + '/' + i, keys.map(k => k + ' ' + lines.get(k) + '\n').join(''));
	index += i + ' ' + p.getTotalWeight() + ' ' + p.getName() + '\n';
});
fs.writeFileSync(out + '/index', index);
console.log('speedscope read ' + g.profiles.length + ' profiles of "' + g.name + '"');
EOF

# report OUT ARGS...: ljsnap report ARGS > OUT (stderr kept in OUT.err)
report() {
	o=$1
	shift
	"$LJSNAP" report "$@" > "$o" 2> "$o.err" || { fail "ljsnap report $*:"; cat "$o.err"; return 1; }
}

# total FOLDED: the sum of its counts
total() {
	awk '{ n += $NF } END { print n + 0 }' "$1"
}

# check_capture NAME CAPTURE ARGS...: every check on one capture
check_capture() {
	n=$1; cap=$2
	shift 2
	d=$tmp/$n
	mkdir -p "$d/p" "$d/t"
	report "$d/all.folded" -f folded "$@" "$cap" || return
	report "$d/text" -f text "$@" "$cap" || return
	report "$d/p.json" -f speedscope "$@" "$cap" || return
	report "$d/t.json" -f speedscope --per-thread "$@" "$cap" || return
	for v in p t; do
		if ! "$PY" "$tmp/check.py" validate "$schema" "$d/$v.json" > "$d/$v.valid" 2>&1; then
			fail "$n: $v.json does not validate:"; tail -5 "$d/$v.valid"; return
		fi
		"$PY" "$tmp/check.py" split "$d/$v.json" "$d/$v" || { fail "$n: split $v.json"; return; }
		# What speedscope itself reads is what the file says.
		mkdir -p "$d/$v.imp"
		node "$tmp/import.mjs" "$pkg" "$d/$v.json" "$d/$v.imp" > "$d/$v.read" 2>&1 ||
			{ fail "$n: speedscope's importer on $v.json:"; tail -5 "$d/$v.read"; return; }
		while read -r i pid tid w name; do
			echo "$i $w $name (pid $pid$([ "$tid" = - ] || echo ", tid $tid"))"
			cmp -s "$d/$v/$i" "$d/$v.imp/$i" ||
				fail "$n: speedscope reads $v profile $i as other stacks"
		done < "$d/$v/index" > "$d/$v.want"
		cmp -s "$d/$v.want" "$d/$v.imp/index" ||
			{ fail "$n: speedscope reads other $v profiles:"; diff "$d/$v.want" "$d/$v.imp/index"; }
	done
	# Per process: the processes of the text report, in its order, with its counts.
	sed -n '/^processes:/,/^$/s/^  pid \([0-9]*\) \(.*\): \([0-9]*\) samples.*/\1 \3 \2/p' \
		"$d/text" > "$d/procs.text"
	while read -r _ pid _ w comm; do echo "$pid $w $comm"; done < "$d/p/index" > "$d/procs.json"
	cmp -s "$d/procs.text" "$d/procs.json" ||
		{ fail "$n: profiles are not the text report's processes:"; diff "$d/procs.text" "$d/procs.json"; }
	sum=$(awk '{ n += $4 } END { print n + 0 }' "$d/p/index")
	[ "$sum" = "$(total "$d/all.folded")" ] && [ "$sum" -gt 0 ] ||
		fail "$n: profiles add up to $sum samples, folded to $(total "$d/all.folded")"
	while read -r i pid _ w _; do
		report "$d/pid$pid.folded" -f folded --pid "$pid" "$@" "$cap" || continue
		"$PY" "$tmp/check.py" norm < "$d/pid$pid.folded" > "$d/pid$pid.norm"
		cmp -s "$d/pid$pid.norm" "$d/p/$i" ||
			{ fail "$n: profile $i is not --pid $pid:"; diff "$d/pid$pid.norm" "$d/p/$i" | head; }
		[ "$w" = "$(total "$d/pid$pid.folded")" ] || fail "$n: pid $pid weighs $w"
	done < "$d/p/index"
	# Per thread: each is --tid; one profile per thread; a process's add up.
	cut -d' ' -f2,3 "$d/t/index" | sort | uniq -d | grep -q . && fail "$n: a thread twice"
	while read -r i pid tid w _; do
		report "$d/tid$tid.folded" -f folded --pid "$pid" --tid "$tid" "$@" "$cap" || continue
		"$PY" "$tmp/check.py" norm < "$d/tid$tid.folded" > "$d/tid$tid.norm"
		cmp -s "$d/tid$tid.norm" "$d/t/$i" ||
			{ fail "$n: thread profile $i is not --tid $tid:"; diff "$d/tid$tid.norm" "$d/t/$i" | head; }
		[ "$w" = "$(total "$d/tid$tid.folded")" ] || fail "$n: tid $tid weighs $w"
	done < "$d/t/index"
	awk '{ s[$2] += $4 } END { for (p in s) print p, s[p] }' "$d/t/index" | sort > "$d/t.sums"
	awk '{ print $2, $4 }' "$d/p/index" | sort > "$d/p.sums"
	cmp -s "$d/t.sums" "$d/p.sums" || fail "$n: the threads do not add up to their processes"
	echo "ok: $n: $(cat "$d/p.valid"), $(wc -l < "$d/t/index") threads, $sum samples; $(cat "$d/p.read")"
}

mkdir -p "$tmp/empty"
for gz in "$top_srcdir"/tests/golden/*.ljsnap.gz "$here"/weird_name.ljsnap.gz; do
	n=$(basename "$gz" .ljsnap.gz)
	gzip -dc "$gz" > "$tmp/$n.ljsnap"
	check_capture "$n" "$tmp/$n.ljsnap" --sysroot "$tmp/empty"
done
# This machine's files: frames with files and lines from DWARF where it has them.
check_capture luajit-jon.host "$tmp/luajit-jon.ljsnap"

# The weird names: the frame's name as folded prints it ('?' for the control
# byte, U+FFFD for the byte that is not UTF-8) and its chunk as the file,
# control byte and all; two threads.
d=$tmp/weird_name
"$PY" - "$d/p.json" > "$d/weird" <<'EOF' || fail "weird_name: the escaped names did not survive"
import json, sys
frames = json.load(open(sys.argv[1], encoding='utf-8'))['shared']['frames']
want = 'we"ird\\name?\ufffd'
f = [f for f in frames if f['name'] == 'spin ' + want + ':1']
assert len(f) == 1, [x['name'] for x in frames]
assert f[0]['file'] == 'we"ird\\name\x01\ufffd' and f[0]['line'] == 1, f[0]
print(json.dumps(f[0]))
EOF
grep -q '\\u0001' "$d/p.json" || fail "weird_name: the control byte is not escaped as \\u0001"
[ "$(wc -l < "$d/t/index")" -ge 2 ] || fail "weird_name: fewer than 2 thread profiles"
printf 'ok: weird_name: %s\n' "$(cat "$d/weird")"

# Nothing selected: a valid file without a profile (speedscope says it is empty).
report "$tmp/none.json" -f speedscope --pid 1 "$tmp/luajit-jon.ljsnap" &&
	if "$PY" "$tmp/check.py" validate "$schema" "$tmp/none.json" > "$tmp/none.valid" 2>&1 &&
		grep -q '^ok: 0 profiles, 0 frames' "$tmp/none.valid"; then
		echo "ok: --pid 1: $(cat "$tmp/none.valid")"
		mkdir -p "$tmp/none.imp"
		node "$tmp/import.mjs" "$pkg" "$tmp/none.json" "$tmp/none.imp" > "$tmp/none.read" 2>&1 &&
			grep -q '^speedscope read 0 profiles' "$tmp/none.read" ||
			{ fail "--pid 1: speedscope's importer:"; tail -5 "$tmp/none.read"; }
	else
		fail "--pid 1:"; cat "$tmp/none.valid"
	fi

# -o NAME.speedscope.json chooses the format and prints the view hint.
"$LJSNAP" report -o "$tmp/x.speedscope.json" --sysroot "$tmp/empty" "$tmp/luajit-jon.ljsnap" \
	2> "$tmp/x.err" && cmp -s "$tmp/x.speedscope.json" "$tmp/luajit-jon/p.json" &&
	grep -q 'speedscope.app and load .*x.speedscope.json' "$tmp/x.err" ||
	fail "-o x.speedscope.json did not write the speedscope file with its hint"

[ "$fails" = 0 ] || { echo "$fails failures"; exit 1; }
echo "all speedscope checks passed"
