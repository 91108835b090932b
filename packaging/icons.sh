#!/usr/bin/env bash
# Renders mavboard's raster icons from the one drawing, packaging/linux/mavboard.svg:
#   packaging/macos/icons/*.png   the PNG set that cargo-packager turns into the app bundle's .icns
#                                 (a name's @2x marks the Retina size of the same icon)
#   packaging/windows/mavboard.ico  16 to 256 pixels, the Windows installer's icon and mavboard.exe's own
#                                   (build.rs compiles it into the exe as a resource)
# Needs rsvg-convert (Debian: librsvg2-bin) and ImageMagick's convert (Debian: imagemagick). cargo-packager's
# before-packaging-command (macOS) and `./packaging/dev.sh windows` run it; the results are build outputs, not
# kept in git.
set -euo pipefail
cd "$(dirname "$0")/.."

svg=packaging/linux/mavboard.svg
for tool in rsvg-convert convert; do
  command -v "$tool" >/dev/null || { echo "icons.sh: $tool is not installed" >&2; exit 1; }
done

out=packaging/macos/icons
rm -rf "$out" && mkdir -p "$out"
render() { rsvg-convert --width "$1" --height "$1" --output "$2" "$svg"; }
for size in 32 128 256 512; do
  render "$size" "$out/${size}x${size}.png"
  render "$((size * 2))" "$out/${size}x${size}@2x.png"
done

# The .ico holds one image per size, each rendered from the drawing at that size (sharper than scaling).
work="$(mktemp -d)"
layers=()
for size in 16 24 32 48 64 256; do
  render "$size" "$work/$size.png"
  layers+=("$work/$size.png")
done
convert "${layers[@]}" packaging/windows/mavboard.ico
rm -rf "$work"
ls -l "$out" packaging/windows/mavboard.ico
