#!/usr/bin/env python3
"""Fetch the ONNX Runtime shared library for a macOS or Windows package (or Linux) into .ort/lib/.

The library comes from the PyPI wheel `onnxruntime` (the same version as `./packaging/dev.sh ort`), through
pip; no other download site. It is unpacked under the name mavboard looks for on that system
(crates/inference/src/inference/ort_lib.rs), which is also the name the cargo-packager configuration in Cargo.toml
(`[package.metadata.packager]`) copies into the bundle or installer:

    macOS    .ort/lib/libonnxruntime.dylib              -> mavboard.app/Contents/Frameworks/
    Windows  .ort/lib/onnxruntime.dll                   -> the install folder, beside mavboard.exe
             .ort/lib/onnxruntime_providers_shared.dll
    Linux    .ort/lib/libonnxruntime.so.<version> with its libonnxruntime.so and .so.1 links

Run it with the Python of the system being packaged: `python3 packaging/fetch_ort.py` (on Windows
`py packaging\\fetch_ort.py`). `--platform TAG --python-version 311` fetches another system's wheel (for
example `--platform win_amd64` or `--platform macosx_14_0_arm64`); `--dest DIR` writes elsewhere than .ort/lib.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

VERSION = "1.31.1"


def system_of(platform_tag):
    """'linux', 'macos' or 'windows' for a wheel platform tag (None: the running system)."""
    tag = platform_tag or sys.platform
    if tag.startswith("win"):
        return "windows"
    if tag.startswith("macosx") or tag == "darwin":
        return "macos"
    return "linux"


def wanted(system, base):
    """The name to write a wheel member under (by its base name), or None to leave it out."""
    if system == "windows":
        return base if base in ("onnxruntime.dll", "onnxruntime_providers_shared.dll") else None
    if system == "macos":
        # The wheel names it after its version (libonnxruntime.1.31.1.dylib); mavboard loads it by path.
        if base.startswith("libonnxruntime") and base.endswith(".dylib"):
            return "libonnxruntime.dylib"
        return None
    return base if base.startswith("libonnxruntime") else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", default="onnxruntime", help="the PyPI project (default onnxruntime)")
    parser.add_argument("--platform", help="a wheel platform tag, to fetch another system's library")
    parser.add_argument("--python-version", help="with --platform: the Python version of the wheel, e.g. 311")
    parser.add_argument("--dest", default=os.path.join(".ort", "lib"), help="where to put it (.ort/lib)")
    args = parser.parse_args()

    system = system_of(args.platform)
    os.makedirs(args.dest, exist_ok=True)
    with tempfile.TemporaryDirectory() as download:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
               "--dest", download, f"{args.wheel}=={VERSION}"]
        if args.platform:
            cmd += ["--platform", args.platform]
        if args.python_version:
            cmd += ["--python-version", args.python_version]
        subprocess.run(cmd, check=True)
        wheels = [f for f in os.listdir(download) if f.endswith(".whl")]
        if len(wheels) != 1:
            sys.exit(f"fetch_ort.py: expected one wheel, pip gave {wheels}")
        written = []
        with zipfile.ZipFile(os.path.join(download, wheels[0])) as wheel:
            for member in wheel.namelist():
                if not member.startswith("onnxruntime/capi/"):
                    continue
                name = wanted(system, os.path.basename(member))
                if name is None:
                    continue
                target = os.path.join(args.dest, name)
                with wheel.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.chmod(target, 0o755)
                written.append(name)
    if system == "linux":
        real = f"libonnxruntime.so.{VERSION}"
        if real not in written:
            sys.exit(f"fetch_ort.py: {real} is not in {wheels[0]}")
        for link in ("libonnxruntime.so", "libonnxruntime.so.1"):
            path = os.path.join(args.dest, link)
            if os.path.lexists(path):
                os.remove(path)
            os.symlink(real, path)
            written.append(link)
    main_name = {"windows": "onnxruntime.dll", "macos": "libonnxruntime.dylib"}.get(system, "libonnxruntime.so")
    if main_name not in written:
        sys.exit(f"fetch_ort.py: no {main_name} in {wheels[0]} (found {sorted(written)})")
    with open(os.path.join(args.dest, "VERSION"), "w", encoding="utf-8") as version_file:
        version_file.write(f"{args.wheel}=={VERSION}\n")
    print(f"ONNX Runtime {VERSION} for {system} in {args.dest}: {', '.join(sorted(written))}")


if __name__ == "__main__":
    main()
