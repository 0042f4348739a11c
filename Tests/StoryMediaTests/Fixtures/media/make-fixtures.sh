#!/bin/sh
# Regenerates the media fixtures of MediaProbeTests (ffmpeg 5.1, Debian 12).
# -bitexact keeps encoder version strings out so that reruns give the same bytes
# but for the random serial numbers of Ogg streams; the tests' expected values come from ffprobe.
set -e
cd "$(dirname "$0")"
F="ffmpeg -hide_banner -loglevel error -y -bitexact"
$F -f lavfi -i testsrc=size=37x23:rate=1 -frames:v 1 image.png
$F -f lavfi -i testsrc=size=64x48:rate=1 -frames:v 1 -q:v 5 image.jpg
$F -f lavfi -i testsrc=size=50x30:rate=1 -frames:v 1 -c:v libwebp -lossless 0 -q:v 60 image-lossy.webp
$F -f lavfi -i testsrc=size=41x27:rate=1 -frames:v 1 -c:v libwebp -lossless 1 image-lossless.webp
# Real transparency makes libwebp write the extended (VP8X) form with an ALPH chunk.
$F -f lavfi -i "testsrc=size=33x21:rate=1,format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='X*7'" \
    -frames:v 1 -c:v libwebp -pix_fmt yuva420p image-alpha.webp
$F -f lavfi -i "sine=frequency=440:sample_rate=8000:duration=0.75" -ac 1 -c:a pcm_s16le sound.wav
# No Xing/Info header: the probe has to walk the frames.
$F -f lavfi -i "sine=frequency=440:sample_rate=22050:duration=1.5" -ac 1 -c:a libmp3lame -b:a 32k -write_xing 0 sound-cbr.mp3
$F -f lavfi -i "anoisesrc=sample_rate=22050:duration=2:amplitude=0.3:seed=7" -ac 1 -c:a libmp3lame -q:a 7 sound-vbr.mp3
$F -f lavfi -i "sine=frequency=440:sample_rate=22050:duration=1.25" -ac 1 -c:a aac -b:a 48k sound.m4a
$F -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=1.3" -ac 1 -c:a libopus -b:a 24k sound-opus.ogg
$F -f lavfi -i "sine=frequency=440:sample_rate=22050:duration=1.1" -ac 1 -c:a libvorbis -q:a 0 sound-vorbis.ogg
$F -f lavfi -i "sine=frequency=440:sample_rate=8000:duration=0.9" -ac 1 -c:a flac sound.flac
# A video without sound, which the probe must refuse.
$F -f lavfi -i testsrc=size=32x32:rate=5 -t 1 -c:v libx264 -preset ultrafast -pix_fmt yuv420p -an video.mp4
