#!/usr/bin/env bash
# Downloads the official CIFAR-10 binary archive, checks it against its published MD5, and
# unpacks the six batch files fastk reads ([data] kind = "cifar10") into DIR.
#
# Usage: scripts/get-cifar10.sh [DIR] [--archive FILE] [--check]
#   DIR             where the batch files go (default data/cifar-10-batches-bin, the folder
#                   fastk looks in when data.dir is not set; relative to the working directory)
#   --archive FILE  use an archive already downloaded instead of downloading it
#   --check         only check that DIR holds the six files at their sizes
# FASTK_CIFAR10_URL overrides the download address (a mirror); the checksum is the same.
#
# A downloaded archive whose MD5 is not the published one is deleted; one given with
# --archive is left where it is. Nothing is written into DIR unless the archive checks out.
set -euo pipefail

readonly url=${FASTK_CIFAR10_URL:-https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz}
readonly md5=c32a1d4ab5d03f1284b67883e8d87530  # https://www.cs.toronto.edu/~kriz/cifar.html
readonly files=(data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin
  data_batch_5.bin test_batch.bin)
readonly file_bytes=30730000  # 10,000 records of 1 label byte + 3072 pixel bytes
me=scripts/get-cifar10.sh

usage() {
  echo "usage: $me [DIR] [--archive FILE] [--check]" >&2
  exit 2
}

# Whether folder $1 holds the six files at their size; names each problem.
check_files() {
  local dir=$1 problems=0 size
  for f in "${files[@]}"; do
    if [[ ! -f $dir/$f ]]; then
      echo "$me: $dir/$f is missing" >&2
      problems=$((problems + 1))
      continue
    fi
    size=$(stat -c %s "$dir/$f")
    if [[ $size != "$file_bytes" ]]; then
      echo "$me: $dir/$f has $size bytes, not $file_bytes (truncated or not CIFAR-10)" >&2
      problems=$((problems + 1))
    fi
  done
  return $((problems > 0))
}

download() {
  local to=$1
  echo "$me: downloading $url (163 MB)"
  if command -v curl >/dev/null; then
    curl -fL --retry 3 -o "$to" "$url"
  elif command -v wget >/dev/null; then
    wget -O "$to" "$url"
  else
    echo "$me: neither curl nor wget is installed (apt-get install curl)" >&2
    return 1
  fi
}

dir=data/cifar-10-batches-bin archive="" check_only=0 dir_given=0
while (($#)); do
  case $1 in
    --archive) [[ $# -ge 2 ]] || usage; archive=$2; shift 2 ;;
    --check) check_only=1; shift ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "$me: unknown option $1" >&2; usage ;;
    *) ((dir_given == 0)) || usage; dir=$1; dir_given=1; shift ;;
  esac
done

if ((check_only)); then
  check_files "$dir" || { echo "$me: $dir is not a complete CIFAR-10 folder" >&2; exit 1; }
  echo "$me: $dir holds the six CIFAR-10 batch files"
  exit 0
fi
if [[ -z $archive ]] && check_files "$dir" 2>/dev/null; then
  echo "$me: $dir already holds the six CIFAR-10 batch files; nothing to do"
  exit 0
fi

parent=$(dirname "$dir")
mkdir -p "$parent"
work=$(mktemp -d "$parent/.get-cifar10.XXXXXX")
trap 'rm -rf "$work"' EXIT
downloaded=0
if [[ -z $archive ]]; then
  archive=$work/cifar-10-binary.tar.gz
  download "$archive" || { echo "$me: the download from $url failed" >&2; exit 1; }
  downloaded=1
elif [[ ! -f $archive ]]; then
  echo "$me: archive $archive does not exist" >&2
  exit 1
fi

actual=$(md5sum "$archive" | cut -d' ' -f1)
if [[ $actual != "$md5" ]]; then
  if ((downloaded)); then
    rm -f "$archive"
    echo "$me: the download from $url has MD5 $actual, not the published $md5:" \
      "it is incomplete or not the CIFAR-10 archive, and was deleted; run again" >&2
  else
    echo "$me: $archive has MD5 $actual, not the published $md5 of" \
      "cifar-10-binary.tar.gz: refused (the file is left as it is)" >&2
  fi
  exit 1
fi

tar -xzf "$archive" -C "$work"
check_files "$work/cifar-10-batches-bin" || {
  echo "$me: the archive does not hold the expected files" >&2
  exit 1
}
mkdir -p "$dir"
for f in "${files[@]}" batches.meta.txt readme.html; do
  [[ -e $work/cifar-10-batches-bin/$f ]] && mv -f "$work/cifar-10-batches-bin/$f" "$dir/$f"
done
check_files "$dir"
echo "$me: CIFAR-10 is in $dir (MD5 of the archive checked)"
