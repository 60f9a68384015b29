/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replay_main.c -- a main() for the fuzz targets (tests/fuzz/fuzz_*.c)
 * outside libFuzzer: each file named on the command line is read and passed
 * to LLVMFuzzerTestOneInput, a plain function.  make check builds one
 * NAME_replay per target with the normal build's libraries, and
 * tests/fuzz/regress.sh replays the inputs of tests/fuzz/regress/NAME/.
 * With no file, one empty input is run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path)
{
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0, got;
	FILE *f = fopen(path, "rb");
	int err = 1;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!nb)
				goto out;
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	if (ferror(f))
		goto out;
	LLVMFuzzerTestOneInput(buf, n);
	err = 0;
out:
	if (err)
		fprintf(stderr, "%s: cannot read\n", path);
	fclose(f);
	free(buf);
	return err;
}

int main(int argc, char **argv)
{
	static const uint8_t empty[1];
	int i, err = 0;

	if (argc < 2)
		return LLVMFuzzerTestOneInput(empty, 0);
	for (i = 1; i < argc; i++)
		err |= replay(argv[i]);
	return err;
}
