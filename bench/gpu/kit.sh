#!/bin/bash
# Packs what bench/gpu/run.sh needs on a GPU machine that has no Go, no
# Vulkan loader and no network (the machines lent to some sessions):
# vkjit and the root and tests packages' test binaries built here, the
# corpora of ../shared, and Debian's Vulkan loader, glvnd (NVIDIA's ICD
# lives in libGLX_nvidia), validation layer and spirv-tools as .debs.
# Run from the repository root on the usual Debian host:
#   bench/gpu/kit.sh            # writes .gpu/ (kept out of git)
# then carry .gpu and run `bash bench/gpu/run.sh PHASE...` there.
set -euo pipefail
dir=.gpu
grep -qx "/$dir/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo "/$dir/" >> .git/info/exclude; }
rm -rf "$dir" && mkdir -p "$dir/debs" "$dir/kit"
go build -ldflags='-s -w' -o "$dir/kit/vkjit" ./cmd/vkjit
go test -c -ldflags='-s -w' -o "$dir/kit/root.test" .
go test -c -ldflags='-s -w' -o "$dir/kit/tests.test" ./tests
cp -r ../shared "$dir/kit/shared"
(cd "$dir/kit" && tar cJf ../kit.tar.xz . ) && rm -rf "$dir/kit"
o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64-lists"
mkdir -p /tmp/amd64-lists/partial
apt-get $o update >/dev/null
(cd "$dir/debs" && apt-get $o download libvulkan1 libglvnd0 libegl1 libgl1 libglx0 libopengl0 libgles2 \
	vulkan-validationlayers spirv-tools 2>&1 | grep -v "^W: Download is performed unsandboxed")
du -sh "$dir"
