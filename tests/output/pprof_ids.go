// SPDX-License-Identifier: GPL-2.0-or-later

// pprof_ids.go FILE.pb.gz -- reads a profile.proto by hand (tests/output/pprof.sh
// runs it with `go run`) and checks what `go tool pprof` does not insist on:
// the file is gzip, string_table[0] is "", the ids of mappings, locations and
// functions are 1..N (Parca rejects others), every id and string index used
// exists, and every sample has the labels pid, tid, comm and vm.
// Prints "samples N total T" on success; exits 1 with the problems otherwise.
// Field numbers: google/pprof's proto/profile.proto.
package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"sort"
)

type field struct {
	num  int
	v    uint64 // varint value
	data []byte // length-delimited body
	wire int
}

// fields splits a message into its fields.
func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		key, n := uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("bad tag")
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			f.v, n = uvarint(b)
			if n <= 0 {
				return nil, fmt.Errorf("bad varint")
			}
			b = b[n:]
		case 2:
			l, n := uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, fmt.Errorf("bad length")
			}
			f.data = b[n : n+int(l)]
			b = b[n+int(l):]
		default:
			return nil, fmt.Errorf("unexpected wire type %d", f.wire)
		}
		out = append(out, f)
	}
	return out, nil
}

func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// ints: a repeated integer field, packed or not.
func ints(f field) []uint64 {
	if f.wire == 0 {
		return []uint64{f.v}
	}
	var out []uint64
	for b := f.data; len(b) > 0; {
		v, n := uvarint(b)
		if n <= 0 {
			return out
		}
		out = append(out, v)
		b = b[n:]
	}
	return out
}

var problems []string

func fail(format string, a ...interface{}) {
	problems = append(problems, fmt.Sprintf(format, a...))
}

// sub: the fields of a sub-message (the varints by number, the rest listed).
func sub(f field) map[int][]field {
	fs, err := fields(f.data)
	if err != nil {
		fail("field %d: %v", f.num, err)
	}
	m := map[int][]field{}
	for _, x := range fs {
		m[x.num] = append(m[x.num], x)
	}
	return m
}

func one(m map[int][]field, n int) uint64 {
	if len(m[n]) == 0 {
		return 0
	}
	return m[n][len(m[n])-1].v
}

// dense: ids must be 1..N, each once.
func dense(what string, ids []uint64) map[uint64]bool {
	set := map[uint64]bool{}
	s := append([]uint64(nil), ids...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	for i, id := range s {
		if id != uint64(i+1) {
			fail("%s ids are not 1..%d: %v", what, len(s), s)
			break
		}
	}
	for _, id := range ids {
		set[id] = true
	}
	return set
}

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		fmt.Println("not gzip:", err)
		os.Exit(1)
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		fmt.Println("gzip:", err)
		os.Exit(1)
	}
	top, err := fields(raw)
	if err != nil {
		fmt.Println("profile:", err)
		os.Exit(1)
	}
	var strs []string
	var samples, mappings, locations, functions []map[int][]field
	for _, t := range top {
		switch t.num {
		case 2:
			samples = append(samples, sub(t))
		case 3:
			mappings = append(mappings, sub(t))
		case 4:
			locations = append(locations, sub(t))
		case 5:
			functions = append(functions, sub(t))
		case 6:
			strs = append(strs, string(t.data))
		}
	}
	if len(strs) == 0 || strs[0] != "" {
		fail("string_table[0] is not \"\"")
	}
	str := func(i uint64) string {
		if i >= uint64(len(strs)) {
			fail("string index %d out of range (%d strings)", i, len(strs))
			return ""
		}
		return strs[i]
	}
	var mids, lids, fids []uint64
	for _, m := range mappings {
		mids = append(mids, one(m, 1))
		str(one(m, 5))
		str(one(m, 6))
	}
	for _, l := range locations {
		lids = append(lids, one(l, 1))
	}
	for _, fn := range functions {
		fids = append(fids, one(fn, 1))
		str(one(fn, 2))
		str(one(fn, 3))
		str(one(fn, 4))
	}
	mset, lset, fset := dense("mapping", mids), dense("location", lids), dense("function", fids)
	for _, l := range locations {
		if m := one(l, 2); !mset[m] {
			fail("location %d: mapping %d does not exist", one(l, 1), m)
		}
		for _, ln := range l[4] {
			if fn := one(sub(ln), 1); !fset[fn] {
				fail("location %d: function %d does not exist", one(l, 1), fn)
			}
		}
	}
	var total uint64
	for i, s := range samples {
		for _, lf := range s[1] {
			for _, id := range ints(lf) {
				if !lset[id] {
					fail("sample %d: location %d does not exist", i, id)
				}
			}
		}
		var vals []uint64
		for _, vf := range s[2] {
			vals = append(vals, ints(vf)...)
		}
		if len(vals) != 2 {
			fail("sample %d: %d values, want 2", i, len(vals))
			continue
		}
		total += vals[0]
		keys := map[string]bool{}
		for _, lb := range s[3] {
			m := sub(lb)
			keys[str(one(m, 1))] = true
			str(one(m, 2))
		}
		for _, k := range []string{"pid", "tid", "comm", "vm"} {
			if !keys[k] {
				fail("sample %d: no label %s", i, k)
			}
		}
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Println(p)
		}
		os.Exit(1)
	}
	fmt.Printf("samples %d total %d mappings %d locations %d functions %d strings %d\n",
		len(samples), total, len(mappings), len(locations), len(functions), len(strs))
}
