#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# starts.sh CORE > build/starts.h: the registry's list of starts
# (core/variants.h says what it is), from the headers in CORE that declare
# one: a header that defines SS_<START>_REGISTRY is a start's, and its
# place is its first SS_VARIANT's number.  Prints each such header's
# #include, in that order, and SS_STARTS, their entries in the same order.
# Refuses a header with an entry but no variant, and two starts of one
# place.  The harness reads the headers by the same rule
# (runners/sslab/ccas.py, registry).
set -eu

core=$1
unsorted=$(for header in "$core"/*.h; do
	entry=$(sed -n 's/^#define \(SS_[A-Z0-9_]*_REGISTRY\)\([^A-Za-z0-9_].*\)\{0,1\}$/\1/p' "$header")
	[ -n "$entry" ] || continue
	case $entry in *"
"*)
		echo "starts.sh: ${header##*/}: two entries, one start a header:" $entry >&2
		exit 1
	esac
	place=$(sed -n 's/^[[:space:]]*SS_VARIANT([A-Z0-9_]*, *\([0-9][0-9]*\),.*/\1/p' "$header" | head -n 1)
	if [ -z "$place" ]; then
		echo "starts.sh: ${header##*/}: $entry has no SS_VARIANT line" >&2
		exit 1
	fi
	echo "$place ${header##*/} $entry"
done)
rows=$(echo "$unsorted" | sort -n)
twice=$(echo "$rows" | cut -d' ' -f1 | uniq -d)
if [ -n "$twice" ]; then
	echo "starts.sh: two starts in place $twice:" $(echo "$rows" | grep "^$twice ") >&2
	exit 1
fi

echo "/* Made by kernel/starts.sh from the headers of core/; not edited by hand. */"
echo "$rows" | while read -r place header entry; do
	echo "#include \"../core/$header\""
done
echo "$rows" | awk '{ line[NR] = "\t" $3 } END {
	print "#define SS_STARTS \\"
	for (i = 1; i <= NR; i++)
		print line[i] (i < NR ? " \\" : "")
}'
