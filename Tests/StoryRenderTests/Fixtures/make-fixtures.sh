#!/bin/sh
# Regenerates the pictures of the render tests (ffmpeg 5.1, Debian 12): two
# bands, blue over yellow, so a test can tell where a picture went and which
# way up; and a larger JPEG that is decoded reduced.
set -e
cd "$(dirname "$0")"
F="ffmpeg -hide_banner -loglevel error -y -bitexact"
BANDS="drawbox=x=0:y=ih/2:w=iw:h=ih/2:color=0xFFFF00:t=fill"
$F -f lavfi -i "color=c=0x0000FF:s=64x48:r=1" -vf "$BANDS" -frames:v 1 -q:v 2 bands.jpg
$F -f lavfi -i "color=c=0x0000FF:s=64x48:r=1" -vf "$BANDS" -frames:v 1 -c:v libwebp -lossless 0 -q:v 90 bands.webp
$F -f lavfi -i "color=c=0x0000FF:s=1600x1200:r=1" -vf "$BANDS" -frames:v 1 -q:v 2 bands-large.jpg
