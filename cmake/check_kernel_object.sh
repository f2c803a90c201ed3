#!/usr/bin/env bash
# Checks one kernel object made by fastk_add_kernels (FastkKernels.cmake): it exports exactly
# its entry points (every other symbol it defines is local, so the linker can never take its
# wider copy of a shared inline function or template for the baseline code's), and it has no
# code that runs by itself (constructors or destructors of static objects would run its
# instructions on every CPU, before the run-time choice).
# Usage: check_kernel_object.sh NM READELF OBJECT ENTRY...
set -euo pipefail
nm=$1 readelf=$2 object=$3
shift 3
exported=$("$nm" --defined-only --extern-only --format=posix "$object" | awk '{print $1}' | sort)
wanted=$(printf '%s\n' "$@" | sort)
if [[ "$exported" != "$wanted" ]]; then
  echo "check_kernel_object: $object must export exactly: $*; it exports:" >&2
  echo "$exported" | head -20 >&2
  exit 1
fi
if "$readelf" -SW "$object" | grep -E '\.(init_array|fini_array|preinit_array|ctors|dtors)\b' >&2; then
  echo "check_kernel_object: $object has code that runs at start-up or exit (above)" >&2
  exit 1
fi
