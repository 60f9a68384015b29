#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: `ljsnap dump` of an nginx worker (Debian's nginx with the Lua module
# and OpenResty's luajit2 from tests/variants/prepare.sh, as
# tests/e2e/nginx_workers.sh runs them) busy in a request whose handler is
# tests/lua/dump_chain.lua (content_by_lua_file): the worker writes its
# own debug.traceback() once, then spins in the same chain.  The dump of
# that worker, its --json and its --native agree with it (dump_lib.sh);
# the dumps of the idle workers show no stack sampled in Lua and say so.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
. "$(dirname "$0")/dump_lib.sh"
need_bpf
need_prog nginx nginx
need_prog pgrep procps
need_prog python3 python3
OR=$(variant or-deb) || exit 1
ORLIB=$OR/root/usr/lib/x86_64-linux-gnu
P=$TMPD/ngx
mkdir -p "$P/logs" "$P/tmp"
TB=$TMPD/ngx.tb

# start_nginx PORT: the master, 0 once its 2 workers run
start_nginx() {
	cat > "$P/nginx.conf" <<CONF
load_module $OR/root/usr/lib/nginx/modules/ndk_http_module.so;
load_module $OR/root/usr/lib/nginx/modules/ngx_http_lua_module.so;
worker_processes 2;
master_process on;
user root;
daemon off;
pid $P/nginx.pid;
error_log $P/logs/error.log warn;
env LJSNAP_DUMP_TB;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $P/tmp/body;
  proxy_temp_path $P/tmp/proxy;
  fastcgi_temp_path $P/tmp/fastcgi;
  uwsgi_temp_path $P/tmp/uwsgi;
  scgi_temp_path $P/tmp/scgi;
  lua_package_path "$OR/root/usr/share/lua/5.1/?.lua;;";
  server {
    listen 127.0.0.1:$1;
    location = /spin { content_by_lua_file $DUMP_LUA; }
  }
}
CONF
	LJSNAP_DUMP_TB=$TB LD_LIBRARY_PATH=$ORLIB nginx -p "$P" -c "$P/nginx.conf" > "$P/stdout" 2>&1 &
	M=$!
	PIDS_TO_KILL="$PIDS_TO_KILL $M"
	for _ in $(seq 50); do
		kill -0 "$M" 2>/dev/null || return 1
		[ "$(pgrep -c -P "$M")" = 2 ] && grep -q . /proc/net/tcp && return 0
		sleep 0.1
	done
	return 1
}

PORT=
for try in 1 2 3 4 5; do
	PORT=$(( 20000 + ($$ * 11 + try * 7919) % 30000 ))
	start_nginx "$PORT" && sleep 0.3 && kill -0 "$M" 2>/dev/null && break
	kill "$M" 2>/dev/null; wait "$M" 2>/dev/null
	PORT=
done
[ -n "$PORT" ] || { cat "$P/stdout" "$P/logs/error.log" >&2; fail "nginx did not start"; }
# one request: its worker spins in the chain for 10 s
bash -c 'exec 3<>/dev/tcp/127.0.0.1/$0 && printf "GET /spin HTTP/1.0\r\nHost: x\r\n\r\n" >&3 && cat <&3' \
	"$PORT" > "$TMPD/resp" 2>&1 &
PIDS_TO_KILL="$PIDS_TO_KILL $!"
wait_for "$TB" '^stack traceback' 10 || { cat "$P/logs/error.log" >&2; fail "the handler wrote no traceback"; }
sleep 0.2
busy=
for w in $(pgrep -P "$M"); do
	"$LJSNAP" dump "$w" > "$TMPD/w$w.dump" 2>&1 || { cat "$TMPD/w$w.dump" >&2; fail "dump of worker $w failed"; }
	# a stack sampled in Lua: the busy worker; an idle worker's VM, when
	# one is found in memory, is not running Lua
	if grep '^thread ' "$TMPD/w$w.dump" | grep -vq 'read from memory'; then
		busy=$w
	elif grep -q '^thread ' "$TMPD/w$w.dump"; then
		grep '^thread ' "$TMPD/w$w.dump" | grep -q 'VM state: \(idle\|C code\)' ||
			{ cat "$TMPD/w$w.dump" >&2; fail "idle worker $w: a VM read from memory runs Lua"; }
	else
		grep -q '^no thread ran Lua code during the dump' "$TMPD/w$w.dump" ||
			{ cat "$TMPD/w$w.dump" >&2; fail "idle worker $w: no word on its idle threads"; }
	fi
done
[ -n "$busy" ] || fail "no worker showed a stack"
grep -q "openresty GC64 in $ORLIB/libluajit-5.1.so" "$TMPD/w$busy.dump" || { cat "$TMPD/w$busy.dump" >&2; fail "the build is not named"; }
note "busy worker $busy: $(head -1 "$TMPD/w$busy.dump")"
dump_check ngx "$busy" "$TB"
exit 0
