# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The driver SDK as a third party meets it: `meson install` into a staging
# directory, then examples/hello built out of tree with nothing but the
# installed header and extres-driver.pc, loaded by the build tree's extresd
# and extresctl. Also the default configuration conf/extres.yaml.
#
# usage: sdk.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The modules extres ships; the installed driver directory holds exactly the
# modules the build made, and these must be among them.
SHIPPED_DRIVERS='amdgpu.so
nvml.so
script.so
static.so
sysfs.so'

# A #define's value from a header: "1u" stays "1u", a string loses quotes.
header_define() {
	local name=$1 file=$2 v
	v=$(awk -v n="$name" '$1 == "#define" && $2 == n { print $3 }' "$file")
	[[ -n $v ]] || fail "no #define $name in $file"
	v=${v#\"}
	printf '%s\n' "${v%\"}"
}

# Install the build into $DEST (a staging directory, as packagers do: no
# root-only path is written) and point pkg-config at it. Sets DEST, PC_DIR,
# DRIVERDIR (the staged copy of the daemon's driver directory) and exports
# PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR so that every path the .pc
# gives resolves inside $DEST.
sdk_install() {
	local pcs
	command -v pkg-config >/dev/null || fail "pkg-config is not installed"
	DEST=$WORK/dest
	"${MESON:-meson}" install -C "$BUILDDIR" --no-rebuild --destdir "$DEST" \
		>"$WORK/install.log" 2>&1 ||
		fail "meson install failed: $(tail -n 20 "$WORK/install.log")"
	pcs=$(find "$DEST" -name extres-driver.pc)
	[[ -n $pcs && $pcs != *$'\n'* ]] || fail "wanted one installed extres-driver.pc, found: '$pcs'"
	PC_DIR=$(dirname "$pcs")
	export PKG_CONFIG_PATH=$PC_DIR PKG_CONFIG_SYSROOT_DIR=$DEST
	unset PKG_CONFIG_LIBDIR
	DRIVERDIR=$DEST$(header_define EXTRES_DRIVER_DIR "$BUILDDIR/extres_build.h")
}

# Warnings as errors, as for extres' own code.
HELLO_CFLAGS='-O2 -g -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wmissing-prototypes -Wstrict-prototypes'

# sdk_install, then compile examples/hello/hello.c, copied out of the source
# tree, the way the header says a module is built, with only pkg-config's
# flags, and install it into the staged driver directory. Sets HELLO (the
# installed module); the compile command is in $WORK/cc.log, the headers
# used in $WORK/hello/hello.d.
sdk_build_hello() {
	local cflags
	sdk_install
	mkdir "$WORK/hello"
	cp -- "$SRCDIR/examples/hello/hello.c" "$WORK/hello/"
	read -ra cflags <<<"$(pkg-config --cflags extres-driver)"
	# shellcheck disable=SC2086 # HELLO_CFLAGS is words
	(cd "$WORK/hello" && set -x &&
		cc -MMD "${cflags[@]}" $HELLO_CFLAGS -shared -fPIC -fvisibility=hidden \
			-o hello.so hello.c) >"$WORK/cc.log" 2>&1 ||
		fail "cannot compile examples/hello/hello.c: $(cat "$WORK/cc.log")"
	HELLO=$DRIVERDIR/hello.so
	install -D -m 0644 "$WORK/hello/hello.so" "$HELLO" || fail "cannot install hello.so as $HELLO"
}

# write_hello_config FILE AMOUNT [PARAM-LINE...]: one resource `hello`
# served by the installed module, given by absolute path.
write_hello_config() {
	local file=$1 amount=$2
	shift 2
	{
		printf '%s\n' 'external-resources: hello' \
			"external-resource.hello.amount: $amount" \
			"external-resource.hello.driver: $HELLO"
		[[ $# == 0 ]] || printf 'external-resource.hello.param.%s\n' "$@"
	} >"$file"
}

# The staged tree: the header as in the source, a .pc that agrees with the
# header and with the daemon's driver directory, the driver modules, the
# example configurations.
case_install() {
	it_setup_nofuse
	local prefix inc got want f cflags
	sdk_install
	prefix=$(PKG_CONFIG_SYSROOT_DIR='' pkg-config --variable=prefix extres-driver)
	[[ $prefix == /* ]] || fail "extres-driver.pc: prefix '$prefix' is not absolute"
	inc=$DEST$prefix/include

	cmp -- "$SRCDIR/include/extres/driver.h" "$inc/extres/driver.h" ||
		fail "the installed header differs from include/extres/driver.h"
	assert_eq "$EXTRES_VERSION" "$(pkg-config --modversion extres-driver)" "pkg-config --modversion"
	assert_eq "-I$inc" "$(pkg-config --cflags extres-driver | sed 's/ *$//')" "pkg-config --cflags"
	assert_eq "" "$(pkg-config --libs extres-driver | sed 's/ *$//')" "pkg-config --libs"
	assert_eq "$DRIVERDIR" "$(pkg-config --variable=driverdir extres-driver)" \
		"driverdir (must be EXTRES_DRIVER_DIR of the build, in the staging dir)"
	want=$(header_define EXTRES_DRIVER_ABI_VERSION "$inc/extres/driver.h")
	assert_eq "${want%u}" "$(pkg-config --variable=abi_version extres-driver)" \
		"abi_version (must be EXTRES_DRIVER_ABI_VERSION of the header)"

	want=$(cd "$BUILDDIR/drivers" && printf '%s\n' *.so)
	got=$(cd "$DRIVERDIR" && printf '%s\n' *)
	assert_eq "$want" "$got" "modules in $DRIVERDIR (the modules built)"
	for f in $SHIPPED_DRIVERS; do
		[[ $'\n'$got$'\n' == *$'\n'$f$'\n'* ]] || fail "$f is not installed in $DRIVERDIR"
	done

	for f in extres.yaml demo.yaml; do
		cmp -- "$SRCDIR/conf/$f" "$DEST$prefix/share/extres/examples/$f" ||
			fail "the installed example $f differs from conf/$f"
	done

	# The header stands alone, in strict C and in C++.
	read -ra cflags <<<"$(pkg-config --cflags extres-driver)"
	printf '#include <extres/driver.h>\n' >"$WORK/alone.c"
	cc -std=c99 -pedantic-errors -Wall -Wextra -Werror "${cflags[@]}" \
		-fsyntax-only "$WORK/alone.c" 2>"$RUN_ERR" ||
		fail "<extres/driver.h> does not compile alone as C99"
	if command -v c++ >/dev/null; then
		cp "$WORK/alone.c" "$WORK/alone.cc"
		c++ -std=c++11 -pedantic-errors -Wall -Wextra -Werror "${cflags[@]}" \
			-fsyntax-only "$WORK/alone.cc" 2>"$RUN_ERR" ||
			fail "<extres/driver.h> does not compile alone as C++11"
	fi
}

# examples/hello builds out of tree from the installed SDK alone: the
# staged header is the one compiled in, and the module exports one symbol.
# Its Makefile does the same and installs where the daemon looks.
case_hello_build() {
	it_setup_nofuse
	local inc syms log
	sdk_build_hello
	inc=$(pkg-config --variable=includedir extres-driver)
	[[ $inc == "$DEST"/* ]] || fail "includedir $inc is outside the staging dir"
	assert_eq "hello.so: hello.c $inc/extres/driver.h $inc/extres/driver_util.h" \
		"$(tr -d '\\\n' <"$WORK/hello/hello.d" | tr -s ' ')" "the headers hello.c was built with (hello.d)"
	syms=$(nm -D --defined-only "$HELLO" | awk '{ print $2, $3 }')
	assert_eq "T extres_driver_entry" "$syms" "symbols hello.so exports"

	command -v make >/dev/null || fail "make is not installed (scripts/deps installs it)"
	cp -R -- "$SRCDIR/examples/hello" "$WORK/make"
	# Only the command line's flags: none from the environment.
	env -u CFLAGS -u CPPFLAGS -u LDFLAGS -u LDLIBS -u DRIVERDIR -u DESTDIR \
		make -C "$WORK/make" CFLAGS="$HELLO_CFLAGS" CPPFLAGS=-MMD \
		DESTDIR="$WORK/pkg" all install >"$WORK/make.log" 2>&1 ||
		fail "make all install in a copy of examples/hello failed: $(cat "$WORK/make.log")"
	log=$(cat "$WORK/make.log")
	assert_contains "$log" " -I$inc " "the Makefile's compile command"
	assert_contains "$log" " -fPIC -fvisibility=hidden -shared " "the Makefile's compile command"
	[[ $log != *"$SRCDIR/include"* ]] || fail "the Makefile used the source tree's include/: $log"
	assert_eq "hello.so: hello.c $inc/extres/driver.h $inc/extres/driver_util.h" \
		"$(tr -d '\\\n' <"$WORK/make/hello.d" | tr -s ' ')" "the headers the Makefile built with (hello.d)"
	syms=$(nm -D --defined-only "$WORK/make/hello.so" | awk '{ print $2, $3 }')
	assert_eq "T extres_driver_entry" "$syms" "symbols the Makefile's hello.so exports"
	cmp -- "$WORK/make/hello.so" "$WORK/pkg$DRIVERDIR/hello.so" ||
		fail "make install DESTDIR=$WORK/pkg did not install hello.so into $WORK/pkg$DRIVERDIR"
	env -u DESTDIR make -C "$WORK/make" clean >>"$WORK/make.log" 2>&1 ||
		fail "make clean failed: $(cat "$WORK/make.log")"
	[[ ! -e $WORK/make/hello.so && ! -e $WORK/make/hello.d ]] || fail "make clean left hello.so or hello.d"
}

# The installed module in a real mount: the first `amount` of its devices,
# with the configured greeting, exactly. (Hidden entries are the daemon's,
# not the driver's: the visible names and the resource's subtree are.)
case_hello_mount() {
	it_setup
	local cfg=$WORK/extres.yaml listing
	sdk_build_hello
	write_hello_config "$cfg" 2 'count: 3' 'greeting: bonjour le monde'
	daemon_start -c "$cfg" "$MNT"
	assert_eq $'hello\nself' "$(ls -1 "$MNT")" "ls $MNT"
	listing=$(sort <<-'EOF'
	d 555 ./0
	d 555 ./1
	f 444 2 ./0/index
	f 444 2 ./1/index
	f 444 7 ./0/name
	f 444 7 ./1/name
	f 444 17 ./0/greeting
	f 444 17 ./1/greeting
	EOF
	)
	assert_eq "$listing" "$(tree_listing "$MNT/hello")" "the tree under $MNT/hello"
	assert_eq './0/greeting=bonjour le monde
./0/index=0
./0/name=hello0
./1/greeting=bonjour le monde
./1/index=1
./1/name=hello1' "$(tree_contents "$MNT/hello")" "every property file"
	assert_file "$MNT/hello/1/name" $'hello1\n'
	# The variable the module declares, filled from the property it names:
	# a third-party driver gets the env view without a change to extres.
	assert_file "$MNT/.meta/env" "export EXTRES_HELLO_INDEXES='0,1'
export HELLO_DEVICES='hello0,hello1'
"
	daemon_stop
}

# extresctl discover lists every candidate; the module's host->log warnings
# and host->error failures arrive prefixed with resource and driver.
case_hello_discover() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml out status
	sdk_build_hello
	write_hello_config "$cfg" 2 'count: 3' 'greeting: hi'
	status=0
	out=$("$EXTRESCTL" -c "$cfg" discover 2>"$RUN_ERR") || status=$?
	assert_eq 0 "$status" "exit status of extresctl discover"
	assert_eq "hello: driver $HELLO, 3 candidates, amount 2
  0: index=0 name=hello0 greeting=hi
  1: index=1 name=hello1 greeting=hi
  2: index=2 name=hello2 greeting=hi" "$out" "extresctl discover"
	assert_eq "" "$(cat "$RUN_ERR")" "stderr of extresctl discover"

	# Defaults, and warnings that do not stop it.
	write_hello_config "$cfg" 3 'colour: blue'
	status=0
	out=$("$EXTRESCTL" -c "$cfg" discover hello 2>"$RUN_ERR") || status=$?
	assert_eq 0 "$status" "exit status of extresctl discover (defaults)"
	assert_eq "hello: driver $HELLO, 2 candidates, amount 3
  0: index=0 name=hello0 greeting=hello
  1: index=1 name=hello1 greeting=hello" "$out" "extresctl discover (defaults)"
	assert_eq "extresctl: warning: resource 'hello': driver 'hello': $cfg:4:39: unknown key param.colour ignored
extresctl: warning: resource 'hello': driver 'hello': param.count is 2, fewer than the amount 3" \
		"$(cat "$RUN_ERR")" "stderr of extresctl discover (defaults)"

	write_hello_config "$cfg" 2 'greeting: hi' 'count: 3x'
	status=0
	out=$("$EXTRESCTL" -c "$cfg" discover 2>"$RUN_ERR") || status=$?
	assert_eq 1 "$status" "exit status of extresctl discover (bad count)"
	assert_eq "" "$out" "stdout of extresctl discover (bad count)"
	assert_eq "extresctl: error: resource 'hello': driver 'hello': $cfg:5:38: param.count: '3x' is not a whole number from 1 to 64" \
		"$(cat "$RUN_ERR")" "stderr of extresctl discover (bad count)"
}

# A module's open() failure stops extresd's start-up with its message.
case_hello_fail() {
	it_setup
	local cfg=$WORK/extres.yaml
	sdk_build_hello
	write_hello_config "$cfg" 1 'count: 0'
	daemon_run_fail -f -c "$cfg" "$MNT"
	assert_startup_error "resource 'hello': driver 'hello': $cfg:4:38: param.count: '0' is not a whole number from 1 to 64"
}

# conf/extres.yaml passes `extresctl check` without a warning, and so does
# it with every commented example enabled. `check` only: it loads the config
# and lets each driver's open() check its params, but discovers nothing, so
# no GPU is needed. nvml's open() loads libnvidia-ml.so.1, though: the
# stand-in from tests/mock takes its place, and the examples' host paths
# (a library, a site script) are pointed at files that exist here.
case_default_config() {
	it_setup_nofuse
	local cfg=$SRCDIR/conf/extres.yaml all=$WORK/all.yaml status out
	local fake=$BUILDDIR/tests/mock/libnvidia-ml.so.1 script=$WORK/discover-fpga.sh
	[[ -f $fake ]] || fail "$fake is missing (build tests/mock first)"
	export LD_LIBRARY_PATH=${fake%/*}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

	cp -- "$cfg" "$WORK/extres.yaml"
	status=0
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" check 2>"$RUN_ERR") || status=$?
	assert_eq 0 "$status" "exit status of extresctl check on conf/extres.yaml"
	assert_eq "$WORK/extres.yaml: 1 resource
gpu: amount 1, driver nvml, coordination-file /var/tmp/flink-gpu-coordination, kubernetes nvidia.com/gpu, yarn yarn.io/gpu
gpu: coordination: extresd records its devices in /var/tmp/flink-gpu-coordination" \
		"$out" "extresctl check on conf/extres.yaml"
	# The nvml driver's CDI spec to build on is the node's: where
	# nvidia-ctk made none, check says so (cdi-base in nvml.sh).
	assert_eq "" "$(grep -v "^extresctl: warning: gpu: no CDI spec from its devices' vendor in " "$RUN_ERR")" \
		"stderr of extresctl check on conf/extres.yaml"
	grep -qx 'extres.mountpoint: /run/extres' "$cfg" || fail "$cfg does not mount at /run/extres"

	# The examples are "#external-resource..." lines; the list of them all
	# replaces the active list.
	printf '#!/bin/sh\necho 0\n' >"$script"
	chmod 0755 "$script"
	sed -E -e '/^external-resources: /d' \
		-e "s|^(#external-resource\.gpu\.param\.library: ).*|\1$fake|" \
		-e "s|^(#external-resource\.fpga\.param\.discovery-script\.path: ).*|\1$script|" \
		-e 's/^#(external-resources?[.:])/\1/' "$cfg" >"$all"
	grep -qxF "external-resource.gpu.param.library: $fake" "$all" ||
		fail "$cfg has no example '#external-resource.gpu.param.library: ...'"
	grep -qxF "external-resource.fpga.param.discovery-script.path: $script" "$all" ||
		fail "$cfg has no example '#external-resource.fpga.param.discovery-script.path: ...'"
	status=0
	out=$("$EXTRESCTL" -c "$all" check 2>"$RUN_ERR") || status=$?
	assert_eq 0 "$status" "exit status of extresctl check with the examples enabled"
	assert_eq "$all: 4 resources
gpu: amount 1, driver nvml, coordination-file /var/tmp/flink-gpu-coordination, kubernetes nvidia.com/gpu, yarn yarn.io/gpu
fpga: amount 1, driver script, coordination-file -, kubernetes -, yarn -
rdma: amount 1, driver sysfs, coordination-file /var/tmp/extres-rdma-coordination, kubernetes rdma/hca, yarn -
amdgpu: amount 1, driver amdgpu, coordination-file /var/tmp/extres-amdgpu-coordination, kubernetes amd.com/gpu, yarn -
gpu: coordination: extresd records its devices in /var/tmp/flink-gpu-coordination
fpga: coordination: none: no coordination-file, so other processes on this host may take the same devices
rdma: coordination: extresd records its devices in /var/tmp/extres-rdma-coordination
amdgpu: coordination: extresd records its devices in /var/tmp/extres-amdgpu-coordination" \
		"$out" "extresctl check with the examples enabled"
	assert_eq "" "$(grep -v "^extresctl: warning: gpu: no CDI spec from its devices' vendor in " "$RUN_ERR")" \
		"stderr of extresctl check with the examples enabled (a driver warns about a param it does not know)"
}

it_main "$@"
